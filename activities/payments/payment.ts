import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from '../../logger.js';
import type { PaymentProvider, PaymentStatus } from '../../providers/index.js';
import type { PaymentState } from '../../domain/payments/index.js';
import {
  markPushStarted,
  recordMove,
  unmarkPush,
  setProviderRef,
  type MoveInput,
  type PaidSubjects,
} from '../../services/payments/index.js';

// The payment workflow's activities (workflows/payments/payment.ts). Each is safe to repeat: a move
// is recordMove, which refuses a second identical move (the state has moved on) and records the
// refusal; the status is a read; the push is the one call that is not, which is why it answers a
// timeout instead of throwing it, and why it marks its number on the payment before calling: a
// retry of a push whose worker died mid-call finds the mark and answers a timeout too (Daraja keeps
// no idempotency key: a retried push is a second prompt on the payer's phone).

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
  /** Which of the workflow's pushes this is (1, 2, …): the mark a retried attempt finds. Absent (a push scheduled before marks): unmarked. */
  push?: number;
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
      if (!out.applied && out.mismatch)
        deps.log.warn(
          { payment: input.payment, to: input.to, source: input.source, reported: input.reported, refusal: out.refusal },
          'payment result for another amount or currency refused',
        );
      else if (!out.applied)
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
      const push = input.push;
      if (push !== undefined) {
        const mark = await markPushStarted(deps.orm.em.fork(), input.accountId, input.paymentId, push);
        if (mark.before) {
          // An earlier attempt of this push began its call and never answered (its worker stopped):
          // the payer may have been asked, so no second prompt; the workflow waits out the first.
          if (mark.providerRef)
            return {
              kind: 'acknowledged',
              providerRef: mark.providerRef,
              message: 'The provider acknowledged this push before its attempt stopped.',
            };
          deps.log.warn({ payment: input.paymentId, push }, 'payment push retried after an attempt that never answered; not pushed again');
          return { kind: 'timed_out', message: `Push ${push} was begun by an attempt that never answered; the payer may have been asked.` };
        }
      }
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
      // An error status (503, throttled) means nothing was pushed: the mark is put back and the retry
      // policy pushes again. Without an answer (a dropped connection) or with an unreadable acceptance
      // the payer may have been asked: the mark stays, and the retry answers timed_out.
      if (push !== undefined && r.httpStatus !== undefined && (r.httpStatus < 200 || r.httpStatus >= 300))
        await unmarkPush(deps.orm.em.fork(), input.accountId, input.paymentId, push);
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
