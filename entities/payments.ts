import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import {
  LEDGER_ACCOUNTS,
  LEDGER_DIRECTIONS,
  LEDGER_KINDS,
  MISMATCH_KINDS,
  PAYMENT_STATES,
  SETTLEMENT_KINDS,
} from '../domain/payments/index.js';

// Payments (Resources > Payment; States and transitions > Payment; docs/payments.md). A payment is
// the money a business collects for one of its records; a refund is a payment of its own linked by
// refund_of. Its timeline and its ledger are append-only tables beside it.

export const Payment = defineEntity({
  name: 'Payment',
  tableName: 'payments',
  properties: {
    id: p.uuid().primary(),
    accountId: p.integer(),
    /** PAY-<yyyymmdd>-<8 digits> (domain/payments/reference.ts), unique per account. */
    reference: p.string().length(32),
    state: p.enum(PAYMENT_STATES).default('draft'),
    /** 100 minor units a major unit, whatever the currency (the contract's convention). */
    amountMinor: p.bigint('string'),
    currency: p.string().length(3),
    /**
     * Given back, or being given back: refunds requested and not failed, expired or cancelled (as
     * Stripe's amount_refunded). Moved by one guarded statement per refund, so it never passes
     * amount_minor, and refundable_minor is amount_minor minus it.
     */
    refundedMinor: p.bigint('string').default(0),
    subjectId: p.string().length(191).nullable(),
    subjectType: p.string().length(64).nullable(),
    isRefund: p.boolean().default(false),
    /** The payment a refund gives money back from (same account). */
    refundOf: p.uuid().nullable(),
    reason: p.text().nullable(),
    payer: p.string().length(191).nullable(),
    method: p.string().length(32).nullable(),
    provider: p.string().length(64).nullable(),
    /** The provider's id of the payment (its request-to-pay or transaction id): unique per provider, the key its callbacks name. */
    providerRef: p.string().length(191).nullable(),
    /**
     * The provider's receipt of the money moved, from its result: a paid payment's (what a refund
     * reverses: Daraja reverses by the M-Pesa receipt number, not by the push's id) or a settled
     * refund's. Stored, not shown, like provider_ref; null when the result carried none (a payment
     * settled by a status query alone).
     */
    providerReceipt: p.string().length(191).nullable(),
    /** How many times it was pushed to the payer (each move into pending). */
    attempts: p.integer().default(0),
    lastError: p.text().nullable(),
    expiresAt: p.datetime().nullable(),
    settledAt: p.datetime().nullable(),
    /** Checkout handles: a page the payer can pay on, a code the payer enters (USSD, paybill reference). */
    checkoutUrl: p.text().nullable(),
    checkoutCode: p.string().length(64).nullable(),
    /** Who asked for it: an actor label (api_key:12, operator, system:shop-page). */
    createdBy: p.string().length(191).nullable(),
    /**
     * The workflow's pushes whose call to the provider began (1, 2, …), written before the call: a
     * retried push that finds its number here with no provider_ref answers timed_out instead of
     * prompting the payer again (Daraja keeps no idempotency). Put back when the provider answered
     * that nothing was pushed (503, throttled), so that push may be tried again.
     */
    pushesStarted: p.integer().default(0),
    /** When its workflow was started (or found running); null while one is owed: the reconciler starts it. */
    workflowStartedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'reference'] }],
  indexes: [
    // The list, newest first, and its filters (Endpoints > Payments); a b-tree reads backwards.
    { name: 'payments_account_created_index', properties: ['accountId', 'createdAt', 'id'] },
    { name: 'payments_account_state_index', properties: ['accountId', 'state', 'createdAt', 'id'] },
    { name: 'payments_account_subject_index', properties: ['accountId', 'subjectId', 'createdAt', 'id'] },
    {
      name: 'payments_open_index',
      expression: `create index "payments_open_index" on "payments" ("account_id", "created_at", "id") where "state" in ('draft', 'pending', 'authorised')`,
    },
    {
      name: 'payments_refunds_index',
      expression: `create index "payments_refunds_index" on "payments" ("refund_of", "created_at") where "refund_of" is not null`,
    },
    // The callback's `?ref=` lookup (services/payments/store.ts paymentForCallback): by reference
    // alone, across accounts; the unique (account_id, reference) leads with the account.
    { name: 'payments_reference_index', properties: ['reference'] },
    {
      // The reconciler's owed workflow starts: the few payments and refunds still owed one.
      name: 'payments_workflow_owed_index',
      expression: `create index "payments_workflow_owed_index" on "payments" ("created_at") where "workflow_started_at" is null and "state" in ('draft', 'pending')`,
    },
    {
      // Reconciliation's lookup of a statement line by its M-Pesa receipt (services/payments/store/reconciliation.ts).
      name: 'payments_provider_receipt_index',
      expression: `create index "payments_provider_receipt_index" on "payments" ("provider_receipt") where "provider_receipt" is not null`,
    },
    {
      name: 'payments_provider_ref_unique',
      expression: `create unique index "payments_provider_ref_unique" on "payments" ("provider", "provider_ref") where "provider_ref" is not null`,
    },
  ],
  checks: [
    { name: 'payments_amount_check', expression: 'amount_minor > 0' },
    { name: 'payments_refunded_check', expression: 'refunded_minor >= 0 and refunded_minor <= amount_minor' },
  ],
});

/** One move of a payment, or a move refused (new_state the state it stayed in, refused the one asked for). Oldest first. */
export const PaymentEvent = defineEntity({
  name: 'PaymentEvent',
  tableName: 'payment_events',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    payment: p.manyToOne(Payment).deleteRule('cascade'),
    /** Null on the first row (the request). */
    oldState: p.enum(PAYMENT_STATES).nullable(),
    newState: p.enum(PAYMENT_STATES),
    /** The move asked for and refused (an illegal move is recorded, never applied); null when applied. */
    refused: p.enum(PAYMENT_STATES).nullable(),
    /** Who moved it: request, provider, provider_poll, expiry, refund, operator, … */
    source: p.string().length(64),
    message: p.text().nullable(),
    occurredAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['payment', 'occurredAt', 'id'] }],
});

/**
 * A ledger leg (double entry): append-only, by the database too (a trigger refuses UPDATE and DELETE,
 * Migration20261128093117); entry_no counts 1, 2, 3 … per payment without a gap.
 */
export const LedgerEntry = defineEntity({
  name: 'LedgerEntry',
  tableName: 'ledger_entries',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    payment: p.manyToOne(Payment).deleteRule('cascade'),
    entryNo: p.integer(),
    kind: p.enum(LEDGER_KINDS),
    direction: p.enum(LEDGER_DIRECTIONS),
    account: p.enum(LEDGER_ACCOUNTS),
    amountMinor: p.bigint('string'),
    currency: p.string().length(3),
    occurredAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['payment', 'entryNo'] }],
  indexes: [
    {
      // Reconciliation reads the provider_clearing legs of a period (docs/payments.md, "Reconciliation").
      name: 'ledger_entries_clearing_index',
      expression: `create index "ledger_entries_clearing_index" on "ledger_entries" ("occurred_at", "payment_id") where "account" = 'provider_clearing'`,
    },
  ],
  checks: [{ name: 'ledger_entries_amount_check', expression: 'amount_minor > 0' }],
});

/**
 * A disagreement between our ledger and the payment provider's report, found by reconciliation
 * (docs/payments.md, "Reconciliation"): recorded once per provider and key, however many runs find
 * it again, with the account's notice and business event written in the same transaction.
 */
export const PaymentMismatch = defineEntity({
  name: 'PaymentMismatch',
  tableName: 'payment_mismatches',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    /** The provider adapter's key (mpesa-daraja). */
    provider: p.string().length(64),
    kind: p.enum(MISMATCH_KINDS),
    settlement: p.enum(SETTLEMENT_KINDS),
    /** The disagreement's identity (domain/payments/reconciliation.ts): unique per provider. */
    key: p.string().length(300),
    /** Whose money; null when the provider's line names no payment of ours. */
    accountId: p.integer().nullable(),
    payment: p.manyToOne(Payment).deleteRule('cascade').nullable(),
    reference: p.string().length(32).nullable(),
    providerRef: p.string().length(191).nullable(),
    receipt: p.string().length(64).nullable(),
    ourAmountMinor: p.bigint('string').nullable(),
    providerAmountMinor: p.bigint('string').nullable(),
    currency: p.string().length(3).nullable(),
    providerCurrency: p.string().length(3).nullable(),
    payer: p.string().length(32).nullable(),
    /** When the money moved (the provider's completion, else our ledger's entry). */
    occurredAt: p.datetime(),
    /** The reconciliation run that found it first (its workflow id). */
    foundBy: p.string().length(200),
    foundAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['provider', 'key'] }],
  indexes: [
    { name: 'payment_mismatches_found_index', properties: ['foundAt', 'id'] },
    { name: 'payment_mismatches_account_index', properties: ['accountId', 'foundAt', 'id'] },
  ],
});
