import { heartbeat, sleep, ApplicationFailure } from '@temporalio/activity';
import { throttledHeartbeat } from '../heartbeat.js';
import {
  claimQueuedOutbound,
  claimedMessages,
  checkingBatchMessages,
  closeClaim,
  dropSettledBatches,
  releaseStaleClaims as releaseStale,
  silentBatchMessages,
  unclaim,
} from '../../services/messaging/store/dispatch.js';
import {
  pollOnce,
  moveStatus,
  callProvider,
  providerOf,
  loadSendable,
  applyPendingReceipts,
  ACCOUNT_STATUS_COLUMN,
  ACCOUNT_SUSPENDED_ERROR,
  type MessageDeps,
  type OutboundRow,
} from './messages.js';
import { moveMessages, type Move } from '../../services/messaging/store/moves.js';
import { processStopping } from '../../services/platform/shutdown.js';
import { lingeringWriter } from '../../services/platform/group-commit.js';
import { countProviderCalls, dropProviderSecondsBefore } from '../../services/platform/rate-windows.js';

export interface DispatchDeps extends MessageDeps {
  /** Each channel's provider budget, shared with the per-message sends (providerBudgets). */
  budgets: ProviderBudgets;
}

type ChannelType = 'sms' | 'whatsapp';

/**
 * A channel's provider budget: `perSecond` calls per second of the database clock for a whole
 * deployment, counted in `rate_limit_windows` under `bucket` (one row per second). Both send paths
 * draw on it. The per-message sends (immediate, scheduled, answered) are paced by their provider
 * task queue's Temporal rate limit and only `count` their calls, without waiting: they come first.
 * The batch dispatch `pace`s its calls on what each second has left, so it yields to them, and the
 * two paths together keep to the rate (above it by at most a batch grant, a twentieth of the rate,
 * per worker, and by the task queue limiter's own burst).
 */
export interface ProviderBudgets {
  pace: Record<ChannelType, () => Promise<void>>;
  /** Settles once the call is counted (never rejects: a count that could not be written is logged). */
  count: Record<ChannelType, () => Promise<void>>;
}

/**
 * The budget's bucket: one per provider task queue, the queue whose Temporal rate limit paces the
 * per-message sends, so a deployment (its task queue) has one budget per channel, whatever the
 * number of workers, and deployments sharing a database do not share budgets.
 */
export const providerBudgetBucket = (providerQueue: string) => `provider:${providerQueue}`;

/** One budget per channel for this worker process (every activity of the process shares them). */
export function providerBudgets(
  orm: DispatchDeps['orm'],
  log: DispatchDeps['log'],
  channels: Record<ChannelType, { bucket: string; perSecond: number }>,
): ProviderBudgets {
  return {
    pace: {
      sms: sharedPacer(orm, channels.sms.bucket, channels.sms.perSecond),
      whatsapp: sharedPacer(orm, channels.whatsapp.bucket, channels.whatsapp.perSecond),
    },
    count: {
      sms: callCounter(orm, log, channels.sms.bucket),
      whatsapp: callCounter(orm, log, channels.whatsapp.bucket),
    },
  };
}

/** How long per-message calls gather before their count is written (at most 20 statements a second per worker). */
const COUNT_LINGER_MS = 50;

/**
 * Counts per-message provider calls in the bucket, off the send's path: the calls of each 50 ms go
 * in one statement, so sends at the full rate cost the database a few statements a second. A count
 * that fails to be written is logged and lost (the budget then errs high by those calls; the
 * provider's own limit still answers them). `count()` settles once its call is written.
 */
function callCounter(orm: DispatchDeps['orm'], log: DispatchDeps['log'], bucket: string) {
  let pending = 0;
  let flushing: Promise<void> | null = null;
  const flush = async () => {
    await new Promise((r) => setTimeout(r, COUNT_LINGER_MS));
    const calls = pending;
    pending = 0;
    flushing = null;
    try {
      await countProviderCalls(orm.em.fork(), bucket, calls);
    } catch (err) {
      log.warn({ err, bucket, calls }, 'provider calls not counted in the shared budget');
    }
  };
  return () => {
    pending++;
    return (flushing ??= flush());
  };
}

/**
 * Paces one channel's batch provider calls in this process and takes them out of the channel's
 * budget shared by every worker: `perSecond` calls per second of the database clock, counted in
 * `rate_limit_windows` (`bucket`, one row per second, which the per-message sends count into too).
 * Calls are spaced locally at the full rate and granted in chunks of a twentieth of it, so the
 * shared count costs about twenty statements a second at any rate; a chunk left over when a
 * dispatch stops is simply not spent. With one worker and no per-message sends this behaves as the
 * old local pacer did.
 */
export function sharedPacer(orm: DispatchDeps['orm'], bucket: string, perSecond: number) {
  const chunk = Math.max(1, Math.ceil(perSecond / 20));
  let next = 0;
  let tokens = 0;
  let taking: Promise<void> | null = null;
  const take = async () => {
    const row = await countProviderCalls(orm.em.fork(), bucket, chunk);
    const count = Number(row!.count);
    // What was there before this request decides the grant; asking beyond the limit only marks the second full.
    const granted = Math.max(0, Math.min(chunk, perSecond - (count - chunk)));
    tokens += granted;
    if (!granted) await new Promise((r) => setTimeout(r, Math.max(5, row!.wait_ms)));
    // Old seconds go now and then (the table is unlogged and also swept by the API's own windows).
    if (Math.random() < 0.005) await dropProviderSecondsBefore(orm.em.fork(), bucket, Number(row!.window_start) - 60_000);
  };
  return async () => {
    while (tokens <= 0) {
      taking ??= take().finally(() => {
        taking = null;
      });
      await taking;
    }
    tokens--;
    const now = Date.now();
    const at = Math.max(now, next);
    next = at + 1000 / perSecond;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  };
}

/**
 * Collects provider outcomes and writes them with moveMessages (lingeringWriter). A failed write
 * fails the activity; its retry re-reads which messages still wait (the provider key is the uid, so
 * nothing is sent twice).
 */
function outcomeWriter(deps: DispatchDeps) {
  /** `parked`: a status of this message may have arrived before its provider id was stored. */
  return lingeringWriter<Move & { id: number; parked?: boolean }>(async (moves) => {
    await moveMessages(deps.orm.em.fork(), moves);
    // Statuses keyed by the provider's id alone (chat) can overtake the send's own answer; they wait in pending_receipts.
    for (const m of moves) if (m.parked && m.gatewayMessageId) await applyPendingReceipts(deps.orm, m.gatewayMessageId, m.to);
  });
}

/**
 * Sends one message and hands a settled outcome (sent, or failed for good) to the writer. Answers
 * the transient failure's text when the message must be tried again, null otherwise; a message that
 * can never be sent (a channel with an unknown provider) is failed for good, never the activity.
 */
async function sendAndRecord(deps: DispatchDeps, writer: ReturnType<typeof outcomeWriter>, msg: OutboundRow): Promise<string | null> {
  if (msg.account_status !== 'active') {
    writer.add({ id: Number(msg.id), to: 'failed', errorMessage: ACCOUNT_SUSPENDED_ERROR });
    return null;
  }
  try {
    const result = await callProvider(deps, msg);
    if (result.ok) {
      writer.add({
        id: Number(msg.id),
        to: 'sent',
        gatewayMessageId: result.value.providerMessageId,
        parked: providerOf(deps, msg).statusesMayPrecedeSend,
      });
      return null;
    }
    const error = `${result.message} (provider code ${result.code})`;
    if (!result.permanent) return error;
    writer.add({ id: Number(msg.id), to: 'failed', errorMessage: error });
    return null;
  } catch (err) {
    // A message no retry can send (its channel names no provider we have, a chat message without its
    // request) fails alone, with the reason: the rest of the batch and the channel's dispatcher go on.
    if (err instanceof ApplicationFailure && err.nonRetryable) {
      deps.log.error({ uid: msg.uid, type: err.type, err: err.message }, 'message cannot be sent; failed');
      writer.add({ id: Number(msg.id), to: 'failed', errorMessage: err.message });
      return null;
    }
    return (err as Error).message;
  }
}

/** What an earlier attempt of the same claim left in processing (sent or not: the uid dedupes at the provider). */
const claimedRows = (em: ReturnType<DispatchDeps['orm']['em']['fork']>, claim: string) => claimedMessages(em, claim, ACCOUNT_STATUS_COLUMN);

/**
 * Claims nobody finished: a dispatcher run that was terminated or reset leaves its claimed messages
 * in processing, and no later claim tag would pick them up. Well past any retry backoff (about
 * 3.5 minutes in all) they go back to the queue; the provider key (the uid) keeps a send that did
 * happen from happening twice.
 */
export const STALE_CLAIM_MINUTES = 15;
async function releaseStaleClaims(
  deps: DispatchDeps,
  em: ReturnType<DispatchDeps['orm']['em']['fork']>,
  channelType: 'sms' | 'whatsapp',
  claim: string,
) {
  const released = await releaseStale(em, channelType, claim, STALE_CLAIM_MINUTES);
  if (released.length) deps.log.warn({ channelType, count: released.length }, 'released stale dispatch claims back to the queue');
}

export function createDispatchActivities(deps: DispatchDeps) {
  const pacers = deps.budgets.pace;
  return {
    /**
     * Claims up to `limit` queued batch messages of a channel into a dispatch batch, waiting up to
     * `waitMs` for work (runs recorded before streaming dispatch). The claim is tagged, so a retry of
     * the same claim returns the same messages instead of stranding them.
     */
    async claimQueuedMessages({
      channelType,
      limit,
      waitMs,
      claim,
    }: {
      channelType: 'sms' | 'whatsapp';
      limit: number;
      waitMs: number;
      claim: string;
    }): Promise<number[]> {
      const em = deps.orm.em.fork();
      const again = await claimedRows(em, claim);
      if (again.length) return again.map((r) => Number(r.id));
      const until = Date.now() + waitMs;
      for (;;) {
        const rows = await claimQueuedOutbound(em, claim, channelType, limit, ACCOUNT_STATUS_COLUMN);
        if (rows.length || Date.now() >= until) return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
        heartbeat();
        await sleep(50);
      }
    },

    /**
     * Sends claimed messages with bounded concurrency; transient failures come back for a later retry.
     * Outcomes are written set-based: while one write is in flight the next outcomes gather, so a
     * batch costs a handful of statements instead of several per message (group commit).
     */
    async sendMessageBatch({ ids, concurrency, channelType }: { ids: number[]; concurrency: number; channelType: 'sms' | 'whatsapp' }) {
      const pace = pacers[channelType];
      const rows = await loadSendable(deps, ids);
      const retry: number[] = [];
      const errors: Record<number, string> = {};
      const writer = outcomeWriter(deps);
      let done = 0;
      let index = 0;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, rows.length) }, async () => {
          while (index < rows.length) {
            const msg = rows[index++];
            await pace();
            const error = await sendAndRecord(deps, writer, msg);
            if (error !== null) {
              retry.push(Number(msg.id));
              errors[Number(msg.id)] = error;
            }
            if (++done % 50 === 0) heartbeat(done);
          }
        }),
      );
      await writer.drain();
      return { sent: rows.length - retry.length, retry, lastError: retry.length ? errors[retry[0]] : null };
    },

    /**
     * The dispatcher's steady state: claims queued batch messages a slice at a time (tagged with
     * `claim`) and keeps `concurrency` provider calls in flight across slices, writing outcomes by
     * group commit, until `maxSeconds` pass, no work came for `idleWaitMs`, or `maxRetry` messages
     * failed transiently (those come back, still claimed, for the workflow's backoff). A retried
     * attempt first resends what its claim still holds in processing; the provider key is the uid.
     */
    async dispatchQueuedMessages({
      channelType,
      claim,
      sliceSize,
      concurrency,
      maxSeconds,
      idleWaitMs,
      maxRetry,
    }: {
      channelType: 'sms' | 'whatsapp';
      claim: string;
      sliceSize: number;
      concurrency: number;
      maxSeconds: number;
      idleWaitMs: number;
      maxRetry: number;
    }) {
      const pace = pacers[channelType];
      const em = deps.orm.em.fork();
      const writer = outcomeWriter(deps);
      const beat = throttledHeartbeat();
      // Send loops with nothing to do share one 50 ms timer (it rejects if the activity is cancelled).
      let napping: Promise<void> | null = null;
      const nap = () =>
        (napping ??= sleep(50).finally(() => {
          napping = null;
        }));
      const until = Date.now() + maxSeconds * 1000;
      const retry: number[] = [];
      let lastError: string | null = null;
      let sent = 0;
      await releaseStaleClaims(deps, em, channelType, claim);
      let queue: OutboundRow[] = await claimedRows(em, claim);
      let idleSince = Date.now();
      let exhausted = false;
      let refilling: Promise<void> | null = null;
      let emptyAt = 0;
      // An empty claim waits 50 ms before the next, doubling up to 400 ms while the queue stays
      // empty: an idle channel costs a few queries a second instead of twenty.
      let emptyWaitMs = 0;
      let failure: unknown = null;
      const refill = async () => {
        try {
          await claimSlice();
        } catch (err) {
          failure = err;
        }
        refilling = null;
      };
      const claimSlice = async () => {
        const rows = await claimQueuedOutbound(em, claim, channelType, sliceSize, ACCOUNT_STATUS_COLUMN);
        if (rows.length) {
          queue = queue.concat(rows.sort((a, b) => Number(a.id) - Number(b.id)));
          idleSince = Date.now();
          emptyWaitMs = 0;
        } else {
          emptyAt = Date.now();
          emptyWaitMs = Math.min(Math.max(emptyWaitMs * 2, 50), 400);
        }
      };
      const stopping = () => Date.now() >= until || retry.length >= maxRetry || processStopping.aborted;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (;;) {
            if (failure) throw failure;
            if (queue.length < concurrency && !refilling && !stopping() && !exhausted && Date.now() - emptyAt >= emptyWaitMs)
              refilling = refill();
            if (!queue.length) {
              if (refilling) {
                await refilling;
                continue;
              }
              if (stopping() || exhausted || Date.now() - idleSince >= idleWaitMs) {
                exhausted = true;
                return;
              }
              beat({ sent });
              await nap();
              continue;
            }
            // A provider that keeps failing: stop early; what is left goes back to the queue below.
            if (retry.length >= maxRetry) return;
            const msg = queue.shift()!;
            await pace();
            const error = await sendAndRecord(deps, writer, msg);
            if (error !== null) {
              retry.push(Number(msg.id));
              lastError = error;
            }
            ++sent;
            beat({ sent });
          }
        }),
      );
      await writer.drain();
      // Whatever a stop left claimed but unsent goes back to the queue for the next run.
      if (queue.length) {
        await unclaim(
          em,
          claim,
          queue.map((m) => Number(m.id)),
        );
      }
      // The transient failures go back to the workflow, which retries them by id; they stay in an
      // open batch of the claim meanwhile, so that if the run is terminated or reset before its
      // retries end, they are offered again once the claim is stale (the uid keeps a send that did
      // happen from repeating). The rest of the claim is closed: the silent sweep reads it.
      await closeClaim(em, claim, channelType, retry);
      return { sent: sent - retry.length, retry, lastError };
    },

    async failMessages({ ids, errorMessage }: { ids: number[]; errorMessage: string }) {
      await moveMessages(
        deps.orm.em.fork(),
        ids.map((id) => ({ id, to: 'failed' as const, errorMessage })),
      );
    },

    /**
     * Batch-sent SMS with no receipt after `olderThanSeconds` move to checking_delivery and the gateway is
     * asked where they stand (the per-message workflow does the same for its own message). `limit`
     * bounds the dispatch batches looked at per sweep, a few messages each once receipts came.
     */
    async sweepSilentMessages({ olderThanSeconds, limit }: { olderThanSeconds: number; limit: number }): Promise<number> {
      const rows = await silentBatchMessages(deps.orm.em.fork(), olderThanSeconds, Math.max(1, Math.ceil(limit / 10)));
      for (const r of rows) {
        await moveStatus(deps.orm, Number(r.id), 'checking_delivery');
        await pollOnce(deps, Number(r.id)).catch(() => undefined);
        heartbeat();
      }
      return rows.length;
    },

    /** Checking-delivery batch messages are asked again, a bounded number of times (oldest first). */
    async pollCheckingMessages({ limit, maxAgeSeconds }: { limit: number; maxAgeSeconds: number }): Promise<number> {
      const em = deps.orm.em.fork();
      // Batches past the poll window, or with nothing left to ask about, are done with.
      await dropSettledBatches(em, maxAgeSeconds);
      const rows = await checkingBatchMessages(em, limit);
      for (const r of rows) {
        await pollOnce(deps, Number(r.id)).catch(() => undefined);
        heartbeat();
      }
      return rows.length;
    },
  };
}

export type DispatchActivities = ReturnType<typeof createDispatchActivities>;
