import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { debitSegments, debitSql } from '../account/index.js';
import { admitNow } from '../platform/admission.js';
import { durableCommit } from '../platform/durable-commit.js';
import { quotaExceeded } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { parseRecipient } from '../platform/phones.js';
import { providerTaskQueue, type Config } from '../../config.js';
import { messageView } from './message-view.js';
import { channelFor, noSmsRoute } from './channels.js';
import {
  insertMessages,
  insertMessagesWithDebit,
  messageById,
  toBatchDispatch,
  type MessageViewRow,
  type StoredMessage,
  type AdmittedMessage,
} from './store/messages.js';
import { newUid } from '../platform/ids.js';
import { executeUpdateWithStart, startWorkflow } from '../../temporal/starters.js';
import { unavailableDependency } from '../platform/dependencies.js';
import type { MessageWorkflowInput } from '../../workflows/messaging/message.js';
import { messageStarter, messageWithOutcomeStarter } from '../../workflows/messaging/message.starter.js';
import { requestsInFlight, rateMeter } from '../platform/load.js';
import { emitEvent, messageEventFields } from '../webhooks/index.js';
import { countMessageStatuses } from '../../observability/metrics.js';

export interface MessageServiceDeps {
  temporal: Client;
  config: Config;
}

/** One outbound record to create; `failure` stores it as failed at once (nothing to send). */
export interface OutboundDraft {
  channelType: 'sms' | 'whatsapp';
  channelId: number | null;
  channelCode: string | null;
  /** No channel named: the account's default SMS route, read by the send statement itself (refused when there is none). */
  defaultSmsRoute?: boolean;
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
  /** A message into one of the account's chat groups (the provider request addresses the group). */
  chatGroupId?: number | null;
}

/**
 * One draft per recipient of a send: the number in E.164 where it is one; otherwise the token as
 * given, on a record that fails at once (the contract's rule 3: the rest of the request still goes).
 * `forNumber` adds what depends on the number (a chat request built for it).
 */
export function draftsFor(
  recipients: string[],
  common: Omit<OutboundDraft, 'recipient' | 'failure'>,
  forNumber?: (e164: string) => Partial<OutboundDraft>,
): OutboundDraft[] {
  return recipients.map((raw) => {
    const number = parseRecipient(raw);
    return 'e164' in number
      ? { ...common, recipient: number.e164, failure: null, ...forNumber?.(number.e164) }
      : { ...common, recipient: raw, failure: number.problem };
  });
}

/** Immediate sends of this API process now waiting for their provider's first answer. */
let waitingForFirstOutcome = 0;
/** Immediate sends of this API process in the last second. */
const immediateSends = rateMeter();

const insufficientBalance = () => quotaExceeded('The prepaid balance cannot cover this send; nothing was sent.', 'insufficient_balance');

/**
 * Creates every record of a request in one transaction with the prepaid wallet's debit (segments of
 * the records that will be sent × `smsSegmentPrice`): a wallet that cannot cover them all refuses the
 * whole request (402, reason insufficient_balance) and nothing is created or sent. Then starts one
 * message workflow per record that needs its own. Immediate sends use update-with-start, so the
 * answer can carry the provider's first outcome; the whole request waits at most `firstOutcomeWaitMs`
 * for all of them together, and whatever the provider has not answered by then (admission control, a
 * slow provider) answers queued. Under load (more than `firstOutcomePerSecond` immediate sends in
 * this process in the last second, more than `firstOutcomeMaxInFlight` requests in flight, or
 * `firstOutcomeConcurrency` sends already waiting) an immediate send skips its own workflow and is
 * queued for the batch dispatcher: the answer is then queued at once, and the engine is spared one
 * workflow per message.
 *
 * `queued` sends every immediate record through the batch dispatcher at once, whatever the load: for
 * a caller that is itself a durable process (a form session's activity) and needs no first outcome.
 *
 * `answered` is for a single send whose answer promises the provider's verdict (product messages:
 * a refusal is 502): it always runs its own workflow, whatever the load, and waits up to
 * `answeredSendWaitMs`, long enough for a provider that is slow but alive.
 *
 * Once the transaction commits the request can only answer 201: a workflow that cannot be started
 * leaves its record queued for the start-gap reconciler (worker/reconciler.ts), so a retry by the
 * client never sends twice.
 */
export async function createOutboundMessages(
  rc: RequestContext,
  deps: MessageServiceDeps,
  drafts: OutboundDraft[],
  opts: { answered?: boolean; queued?: boolean } = {},
) {
  const deadline = Date.now() + (opts.answered ? deps.config.answeredSendWaitMs : deps.config.firstOutcomeWaitMs);
  const planned = drafts.map((d) => {
    const future = d.scheduledAt !== null && d.scheduledAt.getTime() > Date.now();
    if (opts.answered && !d.failure) return { d, future, uid: newUid('msg'), mode: 'workflow' };
    // A send from a workflow's activity (a form's question) wants no first outcome: the batch dispatcher sends it.
    if (opts.queued && !d.failure && !future) return { d, future, uid: newUid('msg'), mode: 'batch' };
    const lightLoad = !future && !d.failure && immediateSends() <= deps.config.firstOutcomePerSecond;
    const fastPath =
      lightLoad &&
      waitingForFirstOutcome < deps.config.firstOutcomeConcurrency &&
      requestsInFlight() <= deps.config.firstOutcomeMaxInFlight;
    return { d, future, uid: newUid('msg'), mode: future || fastPath ? 'workflow' : 'batch' };
  });
  const chargedSegments = drafts.reduce((n, d) => n + (d.failure ? 0 : (d.segments ?? 1)), 0);
  // Every send of the account debits its one wallet row, and its sends queue for it: it is released at
  // commit without waiting for the flush (the answer waits for durableCommit below). A request with no
  // record refused up front is one statement, the debit and the records together (the records written
  // only when the debit is made); one with refused records writes their message.failed events in the
  // same transaction, the wallet row taken last.
  const releaseBeforeFlush = !rc.em.isInTransaction();
  const refusedUpFront = drafts.some((d) => d.failure);
  const oneStatement = releaseBeforeFlush && !refusedUpFront && chargedSegments > 0;
  // The request's authentication, when the door left it to this write (send_sms): made by the one
  // statement, else on its own before anything is written.
  const admission = releaseBeforeFlush && rc.admission?.pending ? rc.admission : undefined;
  if (admission && !oneStatement) await admitNow(rc.em, admission);
  const defaultRoute = drafts.some((d) => d.defaultSmsRoute);
  // The one statement reads the default route itself; the transaction's several statements look it up first.
  const route = defaultRoute && !oneStatement ? await channelFor(rc, null) : null;
  if (defaultRoute && !oneStatement && !route) throw noSmsRoute();
  const records = JSON.stringify(
    planned.map(({ d, future, uid, mode }, ord) => ({
      ord,
      uid,
      channel_type: d.channelType,
      channel_id: d.defaultSmsRoute ? (route?.channelId ?? null) : d.channelId,
      channel_code: d.defaultSmsRoute ? (route?.channelCode ?? null) : d.channelCode,
      sender: d.sender,
      recipient: d.recipient,
      body: d.body,
      status: d.failure ? 'failed' : 'queued',
      media_url: d.mediaUrl ?? null,
      media_type: d.mediaType ?? null,
      error_message: d.failure ?? null,
      metadata: d.metadata ?? null,
      template_params: d.templateParams ?? null,
      provider_request: d.providerRequest ?? null,
      segments: d.segments ?? 1,
      encoding: d.encoding ?? 'GSM-7',
      campaign_id: d.campaignId ?? null,
      scheduled_at: future ? d.scheduledAt!.toISOString() : null,
      dispatch_mode: mode,
      chat_group_id: d.chatGroupId ?? null,
    })),
  );
  let created: Map<string, StoredMessage>;
  if (oneStatement) {
    const debitFor = (onlyIf: string | undefined) =>
      debitSql(rc.account.id, chargedSegments, deps.config.smsSegmentPrice, { releaseBeforeFlush, onlyIf });
    let rows: StoredMessage[];
    if (admission) {
      const answered = await insertMessagesWithDebit(rc.em, debitFor, rc.account.id, records, { defaultRoute, admission: admission.sql() });
      // First: a refused admission (429, a changed credential) wrote nothing, and its refusal is the answer.
      admission.settle(answered[0]);
      rows = answered.filter((r): r is AdmittedMessage & StoredMessage => r.uid !== null);
    } else rows = await insertMessagesWithDebit(rc.em, debitFor, rc.account.id, records, { defaultRoute });
    // Nothing written: the wallet could not cover it, or (rarely) the account has no route at all.
    if (!rows.length) throw defaultRoute && !(await channelFor(rc, null)) ? noSmsRoute() : insufficientBalance();
    created = new Map(rows.map((r) => [r.uid, r]));
  } else {
    created = await rc.em.transactional(async (tx) => {
      const rows = await insertMessages(tx, rc.account.id, records);
      // A record refused before any send (a malformed number) is final at once: its message.failed
      // callback commits with it, as every other status change does through moveStatus.
      for (const row of rows) if (row.status === 'failed') await emitEvent(tx, rc.account.id, 'message.failed', messageEventFields(row));
      // Refused: the rollback takes the records and their events with it.
      if (!(await debitSegments(tx, rc.account.id, chargedSegments, deps.config.smsSegmentPrice, { releaseBeforeFlush })))
        throw insufficientBalance();
      return new Map(rows.map((r) => [r.uid, r]));
    });
  }
  if (releaseBeforeFlush) await durableCommit(rc.em);
  countMessageStatuses([...created.values()]);

  const out = [];
  // Temporal did not answer one start: no other is tried, so a send to many recipients is answered
  // within one call's deadline, not one per recipient.
  let temporalDown = false;
  for (const { d, future, uid, mode } of planned) {
    let row: MessageViewRow = created.get(uid)!;
    if (!d.failure && mode === 'workflow') {
      try {
        if (temporalDown) {
          // A scheduled one waits for the reconciler; an immediate one goes out with the batch dispatcher.
          if (!future) row = (await toBatchDispatch(rc.em, row.id)) ?? row;
        } else if (future) {
          await startMessageWorkflow(deps, rc.account.id, row, d.channelType, d.scheduledAt!.toISOString(), 0);
        } else if (Date.now() >= deadline) {
          // The request's wait for first outcomes is spent (a slow or throttled provider): what is
          // left goes to the batch dispatcher and answers queued now, as admission control promises,
          // instead of each starting a workflow of its own behind the provider's rate limit.
          row = (await toBatchDispatch(rc.em, row.id)) ?? row;
        } else {
          waitingForFirstOutcome++;
          try {
            const answered = await startMessageWorkflow(deps, rc.account.id, row, d.channelType, null, Math.max(1, deadline - Date.now()));
            if (answered) row = (await messageById(rc.em, row.id)) ?? row;
          } finally {
            waitingForFirstOutcome--;
          }
        }
      } catch (err) {
        // The record is committed (and paid for): the reconciler starts its workflow later; this
        // answer shows it as it stands.
        rc.log.warn({ err, uid: row.uid }, 'message workflow not started; left for the reconciler');
        if (unavailableDependency(err) === 'temporal') temporalDown = true;
      }
    }
    out.push(messageView(row));
  }
  return out;
}

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
    // The call waits for the update's answer, so its deadline is the wait plus an ordinary call's.
    const state = await deps.temporal.connection.withDeadline(Date.now() + deps.config.temporalCallTimeoutMs + waitMs, () =>
      executeUpdateWithStart(deps, messageWithOutcomeStarter, key, [input], 'firstOutcome', [waitMs]),
    );
    return state.dispatched;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
