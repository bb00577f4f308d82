import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from '../../logger.js';
import type { PaymentProvider, PaymentStatus } from '../../providers/index.js';
import type { PaymentState } from '../../domain/payments/index.js';
import { recordMove, setProviderRef, type MoveInput, type PaidSubjects } from '../../services/payments/index.js';

// The payment workflow's activities (workflows/payments/payment.ts). Each is safe to repeat: a move
// is recordMove, which refuses a second identical move (the state has moved on) and records the
// refusal; the status is a read; the push is the one call that is not, which is why it answers a
// timeout instead of throwing it (Daraja keeps no idempotency key: a retried push is a second
// prompt on the payer's phone).

export interface PaymentDeps {
  orm: MikroORM;
  log: Logger;
  /** The payment provider a payment stores (null: the configured one); the registry's payments(). */
  payments(stored?: string | null): PaymentProvider;
  /** What a paid payment's subject does, by subject_type (the orders family for `order`), in the move's transaction. */
  paidSubjects?: PaidSubjects;
}

/** A move the workflow asks for: the service's own input (recordMove). */
export type PaymentMoveInput = MoveInput;

export type PaymentMoved = { applied: true; state: PaymentState } | { applied: false; state: PaymentState; refusal: string };

export interface PushInput {
  accountId: number;
  paymentId: string;
  reference: string;
  amountMinor: number;
  currency: string;
  payer: string;
  provider: string | null;
}

/** acknowledged: the payer is asked; refused: the provider will not (permanent); timed_out: no answer, the payer may have been asked. */
export type PushOutcome =
  | { kind: 'acknowledged'; providerRef: string; message: string }
  | { kind: 'refused'; code: string; message: string }
  | { kind: 'timed_out'; message: string };

export function createPaymentActivities(deps: PaymentDeps) {
  return {
    /** One move through recordMove: applied, or refused and recorded on the timeline (an answer, not a failure). */
    async movePayment(input: PaymentMoveInput): Promise<PaymentMoved> {
      const out = await recordMove(deps.orm.em.fork(), input, { paidSubjects: deps.paidSubjects });
      if (!out.applied)
        deps.log.info({ payment: input.payment, to: input.to, source: input.source, refusal: out.refusal }, 'payment move refused');
      else if (out.subject) {
        deps.log.info(
          { payment: out.payment.id, subject: out.payment.subject_id, outcome: out.subject.outcome },
          'paid payment told its subject',
        );
        // Committed already; a lost step is covered by its own workflow (an order's hold TTL finds nothing held).
        try {
          await out.subject.afterCommit?.({ temporal: Context.current().client, log: deps.log });
        } catch (err) {
          deps.log.warn({ err, payment: out.payment.id }, 'after-paid step failed; left to the subject’s own timer');
        }
      }
      return out.applied ? { applied: true, state: out.payment.state } : { applied: false, state: out.payment.state, refusal: out.refusal };
    },

    /** Asks the provider to push the prompt; our reference is the idempotency key the provider is given. */
    async pushPayment(input: PushInput): Promise<PushOutcome> {
      const provider = deps.payments(input.provider);
      const r = await provider.requestToPay({
        reference: input.reference,
        amountMinor: input.amountMinor,
        currency: input.currency,
        payer: input.payer,
        note: input.reference,
      });
      if (r.ok) {
        // Stored at once, before the workflow's move: the result callback may come first and is found by it.
        await setProviderRef(deps.orm.em.fork(), input.accountId, input.paymentId, provider.key, r.value.providerRef);
        return { kind: 'acknowledged', providerRef: r.value.providerRef, message: r.value.message };
      }
      if (r.permanent) return { kind: 'refused', code: r.code, message: r.message };
      if (r.code === 'timeout') return { kind: 'timed_out', message: r.message };
      // Nothing was pushed (unavailable, throttled): the retry policy tries again.
      throw ApplicationFailure.retryable(r.message, `ProviderFailure.${r.code}`);
    },

    /** Where the attempt stands at the provider; a refusal to say reads as still pending. */
    async paymentStatus(input: { provider: string | null; providerRef: string }): Promise<PaymentStatus> {
      const r = await deps.payments(input.provider).status(input.providerRef);
      if (r.ok) return r.value;
      if (r.permanent) return { state: 'pending', reason: null, providerCode: r.code, message: r.message };
      throw ApplicationFailure.retryable(r.message, `ProviderFailure.${r.code}`);
    },
  };
}

export type PaymentActivities = ReturnType<typeof createPaymentActivities>;
