import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import { resultInbox, type ResultsSeen } from './results.js';
import type { PaymentActivities, PaymentMoveInput, PaymentMoved, PushOutcome } from '../../activities/payments/payment.js';

// One payment's life (issue 26 point 3): ask the provider to push the prompt, move draft → pending,
// then wait for the result. The result comes as a signal from the callback ingress (deduplicated by
// the provider's event id), or, when no callback arrives, from polling the provider's status on a
// backoff; an open payment past expires_at is expired by a durable timer. Every move goes through
// recordMove (one transaction on the locked row), which refuses and records what the state table
// does not have: the workflow never decides a move is legal, it asks and learns the outcome.

/** The payment states, as the workflow sees them (domain/payments/states.ts, repeated: the bundle imports no services). */
type PaymentState = PaymentMoveInput['to'];

export interface PaymentInput {
  accountId: number;
  paymentId: string;
  reference: string;
  state: 'draft' | 'pending';
  amountMinor: number;
  currency: string;
  /** The payer's phone; without it nothing is pushed (the payer pays by the checkout handles) and only callbacks, polls and expiry move it. */
  payer: string | null;
  /** The provider key the payment stores; null: the configured one. */
  provider: string | null;
  /** ISO 8601; null: the payment never expires by time. */
  expiresAt: string | null;
}

/** A verified provider result, in our words, as the ingress forwards it. */
export interface PaymentResultSignal {
  /** The provider's event id (Daraja has none: its attempt id and outcome), the dedupe key. */
  eventId: string;
  providerRef: string;
  outcome: 'paid' | 'failed' | 'expired' | 'cancelled';
  reason: string | null;
  providerCode: string | null;
  message: string;
  receipt: string | null;
  amountMinor: number | null;
  /** The currency the provider reports, when it names one (Daraja does not). */
  currency?: string | null;
}

/** The operator cancelled the payment (the move is committed): stop pushing and polling. */
export interface PaymentCancelledSignal {
  source: string;
}

export interface PaymentWorkflowState extends ResultsSeen {
  paymentId: string;
  reference: string;
  /** The payment's state as the last recorded move left it. */
  state: PaymentState;
  providerRef: string | null;
  /** waiting: for the result; settled: the payment reached a state the workflow no longer drives (lingering for late callbacks); done. */
  phase: 'pushing' | 'waiting' | 'settled' | 'done';
  pushes: number;
  polls: number;
  /** Moves recordMove refused (recorded on the timeline there). */
  refusals: string[];
  receipt: string | null;
}

export const paymentResultSignal = defineSignal<[PaymentResultSignal]>('paymentResult');
export const paymentCancelledSignal = defineSignal<[PaymentCancelledSignal]>('paymentCancelled');
export const paymentStateQuery = defineQuery<PaymentWorkflowState>('state');

/** The provider keeps a prompt about a minute (Daraja 1037); a push whose answer was lost is tried again only after it. */
export const PROMPT_LIFE_MS = 90_000;
/** Pushes per payment, the first included. */
export const MAX_PUSHES = 3;
/** The status polls' backoff: first after 30 s, doubling to 10 minutes. */
export const POLL_FIRST_MS = 30_000;
export const POLL_MAX_MS = 10 * 60_000;
/** How long a settled payment's workflow still takes callbacks (a late or replayed one is recorded, or dropped as seen). */
export const LINGER_MS = 60 * 60_000;
/** A payment without an expiry is polled this long at most. */
export const NO_EXPIRY_WAIT_MS = 7 * 24 * 60 * 60_000;

const OPEN: readonly PaymentState[] = ['draft', 'pending', 'authorised'];

// Database moves: short, retried until they land (recordMove is one transaction; a refusal is an answer, not a failure).
const db = proxyActivities<Pick<PaymentActivities, 'movePayment'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
// The push: the activity answers a timeout instead of throwing it, so Temporal retries only failures
// where no prompt was made (503, throttles); a few, then the payment fails.
const push = proxyActivities<Pick<PaymentActivities, 'pushPayment'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});
const poll = proxyActivities<Pick<PaymentActivities, 'paymentStatus'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});

export async function paymentWorkflow(input: PaymentInput): Promise<PaymentWorkflowState> {
  const s: PaymentWorkflowState = {
    paymentId: input.paymentId,
    reference: input.reference,
    state: input.state,
    providerRef: null,
    phase: 'pushing',
    pushes: 0,
    polls: 0,
    seen: [],
    duplicates: 0,
    refusals: [],
    receipt: null,
  };
  setHandler(paymentStateQuery, () => s);
  const inbox = resultInbox(s, paymentResultSignal);
  // Cancelled is terminal: once told, no later answer of a move made before it (read in the same
  // activation) can make the payment look open again.
  let cancelled = false;
  setHandler(paymentCancelledSignal, () => {
    cancelled = true;
    s.state = 'cancelled';
  });
  const expiresAt = input.expiresAt ? Date.parse(input.expiresAt) : null;
  const until = expiresAt ?? Date.now() + NO_EXPIRY_WAIT_MS;
  const isOpen = () => OPEN.includes(s.state);

  const move = async (to: PaymentState, source: string, message: string | null, extra: Partial<PaymentMoveInput> = {}) => {
    const out: PaymentMoved = await db.movePayment({ accountId: input.accountId, payment: input.paymentId, to, source, message, ...extra });
    s.state = cancelled ? 'cancelled' : out.state;
    if (!out.applied) s.refusals.push(out.refusal);
    return out.applied;
  };

  const apply = async (r: PaymentResultSignal, source: string) => {
    if (r.receipt) s.receipt = r.receipt;
    if (!s.providerRef) s.providerRef = r.providerRef;
    const words = [r.message, r.reason, r.providerCode].filter(Boolean).join(' · ');
    await move(r.outcome, source, words || null, {
      providerRef: r.providerRef,
      ...(r.outcome === 'failed' ? { lastError: words || r.message } : {}),
      // recordMove refuses a paid result for another amount or currency than the payment's.
      ...(r.outcome === 'paid' ? { reported: { amountMinor: r.amountMinor, currency: r.currency ?? null } } : {}),
      // Kept on the payment: a refund reverses it by this receipt.
      ...(r.receipt ? { receipt: r.receipt } : {}),
    });
  };

  // Push the prompt (when there is a payer to push to) and move to pending.
  const pushOnce = async (): Promise<PushOutcome> => {
    s.pushes++;
    return push.pushPayment({
      accountId: input.accountId,
      paymentId: input.paymentId,
      reference: input.reference,
      amountMinor: input.amountMinor,
      currency: input.currency,
      payer: input.payer!,
      provider: input.provider,
      push: s.pushes,
    });
  };
  if (input.payer && isOpen()) {
    const pushed = await pushOnce();
    if (cancelled) {
      // Cancelled while the push was out: nothing more to move (a result still comes as a callback).
      if (pushed.kind === 'acknowledged') s.providerRef = pushed.providerRef;
    } else if (pushed.kind === 'refused') {
      if (s.state === 'draft') await move('pending', 'provider', 'Push refused by the provider.');
      await move('failed', 'provider', pushed.message, { lastError: `${pushed.code}: ${pushed.message}` });
    } else {
      if (pushed.kind === 'acknowledged') s.providerRef = pushed.providerRef;
      const note =
        pushed.kind === 'acknowledged' ? pushed.message : 'The provider did not answer the push in time; the payer may have been asked.';
      if (s.state === 'draft')
        await move('pending', 'provider', note, pushed.kind === 'acknowledged' ? { providerRef: pushed.providerRef } : {});
    }
  }

  // Wait for the result: callbacks first, status polls on a backoff, expiry at expires_at.
  s.phase = 'waiting';
  let pollEvery = POLL_FIRST_MS;
  let nextPush = Date.now() + PROMPT_LIFE_MS;
  while (isOpen()) {
    const next = inbox.shift();
    if (next) {
      await apply(next, 'provider');
      continue;
    }
    const now = Date.now();
    if (now >= until) {
      if (expiresAt !== null) await move('expired', 'expiry', `Not paid by ${input.expiresAt}.`);
      break;
    }
    // Without a provider id (a push that timed out) there is nothing to poll: after the prompt's
    // life, when no callback named the attempt, the payer is asked again.
    const polling = s.providerRef !== null;
    const canRepush = !polling && input.payer !== null && s.pushes > 0 && s.pushes < MAX_PUSHES && s.state === 'pending';
    const wake = Math.min(until, polling ? now + pollEvery : canRepush ? nextPush : until);
    const got = await condition(() => inbox.length > 0 || cancelled, Math.max(1, wake - now));
    if (got) continue;
    if (Date.now() >= until) continue;
    if (polling) {
      s.polls++;
      pollEvery = Math.min(POLL_MAX_MS, pollEvery * 2);
      const st = await poll.paymentStatus({ provider: input.provider, providerRef: s.providerRef! });
      if (st.state !== 'pending' && inbox.length === 0) {
        const eventId = `${s.providerRef}:${st.state}`;
        if (!s.seen.includes(eventId)) {
          s.seen.push(eventId);
          await apply(
            {
              eventId,
              providerRef: s.providerRef!,
              outcome: st.state,
              reason: st.reason,
              providerCode: st.providerCode,
              message: st.message,
              receipt: null,
              amountMinor: null,
            },
            'provider_poll',
          );
        }
      }
    } else if (canRepush) {
      const pushed = await pushOnce();
      nextPush = Date.now() + PROMPT_LIFE_MS;
      if (pushed.kind === 'acknowledged') {
        s.providerRef = pushed.providerRef;
        pollEvery = POLL_FIRST_MS;
      } else if (pushed.kind === 'refused')
        await move('failed', 'provider', pushed.message, { lastError: `${pushed.code}: ${pushed.message}` });
    }
  }

  // Settled (or no longer ours to drive): late and replayed callbacks are still taken for a while,
  // so a payment the payer paid after it expired is recorded as a refused move, not lost.
  s.phase = 'settled';
  const lingerUntil = Date.now() + LINGER_MS;
  for (;;) {
    const left = lingerUntil - Date.now();
    if (left <= 0) break;
    if (!(await condition(() => inbox.length > 0, left))) break;
    const late = inbox.shift()!;
    await apply(late, 'provider');
  }
  s.phase = 'done';
  return s;
}
