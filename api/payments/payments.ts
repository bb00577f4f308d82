import { HINTS, defineOperation } from '../operation.js';
import { LEDGER_ACCOUNTS, LEDGER_DIRECTIONS, LEDGER_KINDS, PAYMENT_STATES } from '../../domain/payments/index.js';
import { getPayment, listPayments, paymentListQuery } from '../../services/payments/payments.js';

// Payments (Endpoints > Payments; Resources > Payment; States and transitions > Payment): two reads,
// no write (the contract has none on REST; another method on these paths is 405 with Allow). They
// need payments.view on a live issuer (a newer family: a legacy key is refused), and are the tools
// of the MCP `payments` server with the payments capability.

const P = '/api/v3/payments';
const base = { tag: 'Payments', auth: 'rest', issuerRequired: true, permission: 'payments.view' } as const;
const tools = { servers: ['payments'], scope: 'mcp:payments', annotations: HINTS.read } as const;

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const stateSchema = { enum: PAYMENT_STATES } as const;

const summaryProperties = {
  id: { type: 'string', format: 'uuid', description: 'the stable key' },
  reference: { type: 'string', pattern: '^PAY-[0-9]+-[0-9]+$', description: 'human reference, PAY-<yyyymmdd>-<8 digits>' },
  state: stateSchema,
  amount_minor: { type: 'integer', description: 'use for arithmetic; 100 minor units a major unit for every currency' },
  amount: { type: 'string', description: 'display string (TZS 12,000; USD 11.50)' },
  currency: { type: 'string' },
  refunded_minor: { type: 'integer', description: 'refunds requested and not failed, expired or cancelled' },
  refundable_minor: { type: 'integer', description: 'amount_minor − refunded_minor' },
  refunded: { ...nullableString, description: 'display string of refunded_minor; null when nothing is refunded' },
  is_open: { type: 'boolean', description: 'true only for draft, pending, authorised' },
  is_settled: { type: 'boolean', description: 'true for paid, partly_refunded, refunded' },
  next_states: { type: 'array', items: stateSchema, description: 'describes the state machine; grants no write' },
  subject_id: { ...nullableString, description: 'the business record the payment is for' },
  subject_type: { ...nullableString, description: 'what kind of record subject_id names (order, basket, …)' },
  is_refund: { type: 'boolean' },
  refund_of: { type: ['string', 'null'], format: 'uuid', description: 'the payment a refund gives money back from' },
  reason: nullableString,
  payer: nullableString,
  method: nullableString,
  provider: nullableString,
  attempts: { type: 'integer' },
  last_error: nullableString,
  expires_at: nullableDateTime,
  settled_at: nullableDateTime,
  checkout_url: { ...nullableString, description: 'a page the payer can pay on' },
  checkout_code: { ...nullableString, description: 'a code the payer enters (USSD, paybill reference)' },
  created_at: dateTime,
  updated_at: dateTime,
} as const;
const summaryRequired = Object.keys(summaryProperties) as (keyof typeof summaryProperties)[];

export const paymentSummarySchema = { type: 'object', required: summaryRequired, properties: summaryProperties } as const;

const timelineSchema = {
  type: 'object',
  required: ['old_state', 'new_state', 'source', 'message', 'occurred_at'],
  properties: {
    old_state: { enum: [...PAYMENT_STATES, null], description: 'null on the request' },
    new_state: { ...stateSchema, description: 'the state after; the same as old_state when the move asked for was refused' },
    source: { type: 'string' },
    message: nullableString,
    occurred_at: dateTime,
  },
} as const;

const ledgerSchema = {
  type: 'object',
  required: ['entry_no', 'kind', 'direction', 'account', 'amount_minor', 'amount', 'currency', 'occurred_at'],
  properties: {
    entry_no: { type: 'integer', minimum: 1, description: '1, 2, 3 … per payment, without a gap' },
    kind: { enum: LEDGER_KINDS },
    direction: { enum: LEDGER_DIRECTIONS },
    account: { enum: LEDGER_ACCOUNTS },
    amount_minor: { type: 'integer' },
    amount: { type: 'string' },
    currency: { type: 'string' },
    occurred_at: dateTime,
  },
} as const;

export const paymentDetailSchema = {
  type: 'object',
  required: [...summaryRequired, 'created_by', 'timeline', 'ledger', 'refunds'],
  properties: {
    ...summaryProperties,
    created_by: { ...nullableString, description: 'who requested it' },
    timeline: { type: 'array', items: timelineSchema, description: 'oldest first' },
    ledger: { type: 'array', items: ledgerSchema, description: 'by entry_no' },
    refunds: { type: 'array', items: paymentSummarySchema, description: 'newest first' },
  },
} as const;

const metaSchema = {
  type: 'object',
  required: ['current_page', 'per_page', 'total', 'last_page'],
  properties: {
    current_page: { type: 'integer' },
    per_page: { type: 'integer' },
    total: { type: 'integer' },
    last_page: { type: 'integer' },
  },
} as const;

/** The list's answer, `{data, meta}` beside the envelope's status (the operator's list answers the same). */
export const paymentListOutput = {
  kind: 'list',
  status: 200,
  description: 'A page of payment summaries and its meta',
  schema: {
    type: 'object',
    required: ['data', 'meta'],
    properties: { data: { type: 'array', items: paymentSummarySchema }, meta: metaSchema },
  },
  besideStatus: true,
  contract: '{data:[summary], meta:{current_page, per_page, total, last_page}} newest first (Endpoints > Payments)',
} as const;

export const paymentOperations = [
  defineOperation({
    ...base,
    name: 'list_payments',
    method: 'GET',
    path: P,
    summary: 'List payments, newest first',
    description:
      'state: open (draft, pending, authorised), one state, or all; trimmed and lower-cased; an unrecognised value leaves the list ' +
      'unfiltered. subject_id: one business record’s payments. Page-number pagination: default 25, at most 100; limit wins over per_page.',
    query: paymentListQuery,
    output: paymentListOutput,
    mcp: tools,
    // A subject's page is one statement that can count and admit the request too (services/payments/store.ts).
    admitsInStatement: (query) => query.subject_id !== undefined,
    handler: async ({ rc }, query) => listPayments(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'get_payment',
    method: 'GET',
    path: `${P}/{payment}`,
    summary: 'Read a payment: its timeline, ledger and refunds',
    description: 'By UUID or human reference (PAY-<digits>-<digits>). A malformed or another account’s reference is 404.',
    output: { kind: 'resource', status: 200, description: 'The payment', schema: paymentDetailSchema },
    mcp: tools,
    handler: async ({ rc }, { payment }) => getPayment(rc, payment),
  }),
];
