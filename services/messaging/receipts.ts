import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { StatusUpdate } from '../../providers/index.js';
import { moveMessages, type Move, type MoveResult } from './store/moves.js';
import { groupCommit } from '../platform/group-commit.js';
import { messageStarter, messageWorkflowId } from '../../workflows/messaging/message.starter.js';
import { signalWorkflow } from '../../temporal/starters.js';

interface ReceiptDeps {
  orm: MikroORM;
  temporal: Client;
}

type SmsReceipt = Move & { key: string; by: 'uid' | 'gateway_message_id' };

const RECEIPT_GROUPS = { lingerMs: 10, lingerBelow: 100 };
const writers = new WeakMap<ReceiptDeps, (r: SmsReceipt) => Promise<void>>();

/**
 * Receipts arrive as a stream of small requests (two per message, thousands a second during a
 * campaign). They are applied in groups: one statement for everything that arrived while the
 * previous group was being written, and only then is each request answered. A small group waits
 * RECEIPT_GROUPS.lingerMs first: the statement's planning alone costs about 0.3 ms (it cannot keep a
 * plan: docs/benchmarks.md, "Receipts in larger groups"), and a provider's callback can wait 10 ms.
 */
function receiptWriter(deps: ReceiptDeps) {
  let w = writers.get(deps);
  if (!w) {
    w = groupCommit<SmsReceipt>(async (receipts) => {
      const em = deps.orm.em.fork();
      const moved: MoveResult[] = [];
      for (const by of ['uid', 'gateway_message_id'] as const) {
        const some = receipts.filter((r) => r.by === by);
        if (some.length) moved.push(...(await moveMessages(em, some, by)));
      }
      // Batch-sent messages have no workflow of their own to tell. The signal only shortens the
      // workflow's wait (it polls the provider otherwise), so it does not hold up the next group.
      void Promise.all(moved.filter((m) => m.dispatchMode === 'workflow').map((m) => signalReceipt(deps, m)));
    }, RECEIPT_GROUPS);
    writers.set(deps, w);
  }
  return w;
}

async function signalReceipt(deps: ReceiptDeps, m: MoveResult) {
  try {
    await signalWorkflow(deps.temporal, messageStarter, messageWorkflowId(m.accountId, m.uid), 'receipt', m.status);
  } catch {
    // The workflow may have finished already (it polled the provider); the record is what counts.
  }
}

/**
 * Applies a delivery receipt (a status naming our uid, or else the provider's id) to the record
 * (forward moves only, so duplicates and late arrivals are harmless) and tells the message workflow,
 * which then stops waiting or polling. A receipt for a message we don't know is acknowledged all the
 * same, so the provider stops retrying.
 */
export async function applyReceipt(deps: ReceiptDeps, r: StatusUpdate): Promise<void> {
  const key = r.uid || r.providerMessageId;
  if (!key) return;
  await receiptWriter(deps)({
    key,
    by: r.uid ? 'uid' : 'gateway_message_id',
    to: r.status,
    gatewayMessageId: r.providerMessageId,
    errorMessage: r.errorMessage,
  });
}
