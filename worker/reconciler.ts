import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { findUnstartedMessages } from '../services/messaging/messages.js';
import { startMessageWorkflow } from '../services/messaging/outbound.js';
import { startPoller } from './poller.js';

/**
 * Repairs the one gap between "record written" and "workflow started": a process that died in between
 * leaves a queued message with no workflow. Starting it again is harmless (REJECT_DUPLICATE ids).
 */
export function startReconciler(deps: { config: Config; orm: MikroORM; temporal: Client; log: Logger }, everyMs = 15_000) {
  return startPoller({
    name: 'reconciler',
    everyMs,
    log: deps.log,
    pass: async () => {
      const rows = await findUnstartedMessages(deps.orm.em.fork(), 30, 500);
      for (const r of rows) await startMessageWorkflow(deps, r.account_id, r, r.channel_type, null);
      if (rows.length) deps.log.info({ count: rows.length }, 'reconciler checked queued messages');
    },
  });
}
