import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { relayEvents } from '../services/webhooks/dispatch.js';
import { queuedRunsLeftBehind, relayBusinessEvents, startOperationWorkflow } from '../services/automations/index.js';
import { startPoller } from './poller.js';
import { startRunsLeftBehind } from '../services/agents/index.js';

/**
 * Polls the outboxes (communication events, business events) and turns committed rows into
 * delivery workflows; also starts operation runs and agent runs whose workflow start was lost. Because it reads
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
      for (const r of await queuedRunsLeftBehind(deps.orm.em.fork())) await startOperationWorkflow(deps, r.account_id, r);
      await startRunsLeftBehind(deps.orm.em.fork(), deps);
    },
  });
}
