import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import type { PaymentSummary } from './payments.js';
import { subjectCollectedMinor } from './store.js';

// What a payment's subject does when the payment is paid (issue 26, point 3: "paying the order's
// payment moves the order to paid"). The subject's family implements it and the worker wires it
// (activities/index.ts: `order` → the orders family), so payments imports nothing of the families
// that sell, and the families do not reach each other in a circle (docs/architecture.md).
//
// It runs inside the transaction of the move into paid, on the payment's locked row: the move, the
// subject's change and the subject's events commit together or not at all, and since a payment
// enters paid at most once (the state table has no way back), the subject hears of it exactly once
// whatever the provider repeats. Nothing is lost between the two: there is no "between".

/** A payment just moved into paid, as its subject's family is told of it. */
export interface PaidPayment {
  accountId: number;
  payment: PaymentSummary;
}

/** A step the subject asks for once the move has committed: best effort (a signal to a workflow whose own timer covers a lost one). */
export type AfterPaid = (deps: { temporal: Client; log: Logger }) => Promise<void>;

/**
 * A family's reaction to one of its records' payments being paid, in the move's transaction (lock
 * the record before reading anything that decides it). Answers what happened, for the log, and a
 * step for after the commit. A record that is not the payment's account's, or not there, is no error:
 * the answer says so and nothing is written.
 */
export type PaidSubject = (tx: EntityManager, paid: PaidPayment) => Promise<{ outcome: string; afterCommit?: AfterPaid }>;

/** subject_type → its family's reaction; a payment whose subject_type has none tells nobody. */
export type PaidSubjects = Readonly<Partial<Record<string, PaidSubject>>>;

/**
 * What the subject's other settled payments in the paid one's currency still hold (their amounts
 * less their refunds), the paid one left out: the subject adds the paid amount to know whether it
 * is now paid in full. Call it with the subject's record locked, so two of its payments settling at
 * once are counted one after the other.
 */
export const collectedBefore = (tx: EntityManager, paid: PaidPayment): Promise<number> =>
  subjectCollectedMinor(
    tx,
    paid.accountId,
    { type: paid.payment.subject_type!, id: paid.payment.subject_id!, currency: paid.payment.currency },
    paid.payment.id,
  );
