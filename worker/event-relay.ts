import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { many } from '../entities/db.js';
import { relayEvents, relayBusinessEvents } from '../services/webhooks/dispatch.js';
import { startOperationWorkflow } from '../services/automations/operations.js';
import { startPoller } from './poller.js';

/**
 * Polls the outboxes (communication events, business events) and turns committed rows into
 * delivery workflows; also starts operation runs whose workflow start was lost. Because it reads
 * only what committed, an API or worker dying right after a commit delays an event, never loses it.
 */
export function startEventRelay(deps: { config: Config; orm: MikroORM; temporal: Client; log: Logger }, everyMs = 500, maxPassMs = 5_000) {
  return startPoller({
    name: 'event relay',
    everyMs,
    log: deps.log,
    pass: async () => {
      // Drain a backlog in full batches, but give the timer back after maxPassMs.
      const until = Date.now() + maxPassMs;
      while (Date.now() < until) {
        const n = await relayEvents(deps.orm.em.fork(), deps);
        const b = await relayBusinessEvents(deps.orm.em.fork(), deps);
        if (n < 500 && b < 500) break;
      }
      const stale = await many<{ id: string; account_id: number; operation_name: string; input: Record<string, unknown>; source: string }>(
        deps.orm.em.fork(),
        `select id, account_id, operation_name, input, source from operation_runs where status = 'queued' and created_at < now() - interval '30 seconds' order by created_at limit 100`,
      );
      for (const r of stale) await startOperationWorkflow(deps, r.account_id, r);
    },
  });
}
