import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { one } from '../../entities/db.js';
import type { RequestContext } from '../platform/context.js';
import { providerTaskQueue, type Config } from '../../config.js';
import { messageView, type MessageRow } from './message-view.js';
import { newUid } from '../platform/ids.js';
import { executeUpdateWithStart, startWorkflow } from '../../temporal/starters.js';
import type { MessageWorkflowInput } from '../../workflows/messaging/message.js';
import { messageStarter, messageWithOutcomeStarter } from '../../workflows/messaging/message.starter.js';
import { requestsInFlight, rateMeter } from '../platform/load.js';
import { emitEvent, messageEventFields, type MessageEventRow } from '../webhooks/index.js';

export interface MessageServiceDeps {
  temporal: Client;
  config: Config;
}

/** One outbound record to create; `failure` stores it as failed at once (nothing to send). */
export interface OutboundDraft {
  channelType: 'sms' | 'whatsapp';
  channelId: number | null;
  channelCode: string | null;
  sender: string | null;
  recipient: string;
  body: string;
  mediaUrl?: string | null;
  mediaType?: string | null;
  metadata?: Record<string, unknown> | null;
  templateParams?: Record<string, unknown> | null;
  providerRequest?: Record<string, unknown> | null;
  segments?: number;
  encoding?: string;
  scheduledAt: Date | null;
  failure?: string | null;
  campaignId?: number | null;
}

/** Immediate sends of this API process now waiting for their provider's first answer. */
let waitingForFirstOutcome = 0;
/** Immediate sends of this API process in the last second. */
const immediateSends = rateMeter();

/**
 * Creates the records one after another (each recipient has its own outcome) and starts one message
 * workflow per record. Immediate sends use update-with-start, so the answer can carry the provider's
 * first outcome; the whole request waits at most `firstOutcomeWaitMs` for all of them together, and
 * whatever the provider has not answered by then (admission control, a slow provider) answers queued.
 * Under load (more than `firstOutcomePerSecond` immediate sends in this process in the last second, more than
 * `firstOutcomeMaxInFlight` requests in flight, or `firstOutcomeConcurrency` sends already waiting) an immediate
 * send skips its own workflow and is queued for the batch dispatcher: the answer is then queued at
 * once, and the engine is spared one workflow per message.
 */
export async function createOutboundMessages(rc: RequestContext, deps: MessageServiceDeps, drafts: OutboundDraft[]) {
  const deadline = Date.now() + deps.config.firstOutcomeWaitMs;
  const out = [];
  for (const d of drafts) {
    const future = d.scheduledAt !== null && d.scheduledAt.getTime() > Date.now();
    const lightLoad = !future && immediateSends() <= deps.config.firstOutcomePerSecond;
    const fastPath =
      lightLoad &&
      waitingForFirstOutcome < deps.config.firstOutcomeConcurrency &&
      requestsInFlight() <= deps.config.firstOutcomeMaxInFlight &&
      deadline > Date.now();
    const mode = future || fastPath ? 'workflow' : 'batch';
    // A record refused before any send (a malformed number) is final at once: its message.failed
    // callback commits with it, as every other status change does through moveStatus.
    const insert = (em: RequestContext['em']) =>
      one<MessageRow>(
        em,
        `insert into messages (uid, account_id, direction, channel_type, channel_id, channel_code, sender, recipient, body, status,
                             media_url, media_type, error_message, metadata, template_params, provider_request, segments, encoding,
                             campaign_id, scheduled_at, dispatch_mode, created_at, updated_at)
       values (?, ?, 'outbound', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now()) returning *`,
        [
          newUid('msg'),
          rc.account.id,
          d.channelType,
          d.channelId,
          d.channelCode,
          d.sender,
          d.recipient,
          d.body,
          d.failure ? 'failed' : 'queued',
          d.mediaUrl ?? null,
          d.mediaType ?? null,
          d.failure ?? null,
          json(d.metadata),
          json(d.templateParams),
          json(d.providerRequest),
          d.segments ?? 1,
          d.encoding ?? 'GSM-7',
          d.campaignId ?? null,
          future ? d.scheduledAt : null,
          mode,
        ],
      );
    let row = !d.failure
      ? await insert(rc.em)
      : await rc.em.transactional(async (tx) => {
          const inserted = await insert(tx);
          await emitEvent(tx, rc.account.id, 'message.failed', messageEventFields(inserted as unknown as MessageEventRow));
          return inserted;
        });
    if (row && !d.failure && mode === 'workflow') {
      if (future) {
        await startMessageWorkflow(deps, rc.account.id, row, d.channelType, d.scheduledAt!.toISOString(), 0);
      } else {
        waitingForFirstOutcome++;
        try {
          const answered = await startMessageWorkflow(deps, rc.account.id, row, d.channelType, null, Math.max(1, deadline - Date.now()));
          if (answered) row = (await one<MessageRow>(rc.em, 'select * from messages where id = ?', [row.id])) ?? row;
        } finally {
          waitingForFirstOutcome--;
        }
      }
    }
    out.push(messageView(row!));
  }
  return out;
}

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/**
 * Starts the message workflow (REJECT_DUPLICATE: one process per message, ever). With `waitMs` > 0
 * it also waits, inside the same call, until the provider answered or the time is up. Returns true
 * when the workflow reported a dispatch, i.e. the record changed.
 */
export async function startMessageWorkflow(
  deps: MessageServiceDeps,
  accountId: number,
  row: { id: string | number; uid: string },
  channelType: 'sms' | 'whatsapp',
  sendAt: string | null,
  waitMs = 0,
): Promise<boolean> {
  const input: MessageWorkflowInput = {
    accountId,
    messageId: Number(row.id),
    uid: row.uid,
    channelType,
    sendAt,
    providerTaskQueue: providerTaskQueue(deps.config, channelType),
    receiptTimeoutSeconds: deps.config.receiptTimeoutSeconds,
    deliveryPollSeconds: deps.config.deliveryPollSeconds,
    deliveryPollAttempts: deps.config.deliveryPollAttempts,
  };
  const key = { accountId, messageId: Number(row.id), uid: row.uid, channelType };
  try {
    if (waitMs <= 0) {
      await startWorkflow(deps, messageStarter, key, [input]);
      return false;
    }
    const state = await executeUpdateWithStart(deps, messageWithOutcomeStarter, key, [input], 'firstOutcome', [waitMs]);
    return state.dispatched;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
