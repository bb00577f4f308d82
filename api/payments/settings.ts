import { defineOperation } from '../operation.js';
import { actingForAccount } from '../../services/account/index.js';
import { getPayment, listPayments, paymentListQuery } from '../../services/payments/payments.js';
import { afterPaymentRequested, cancelPayment, refundPayment, requestPaymentFor } from '../../services/payments/index.js';
import { paymentDetailSchema, paymentListOutput, paymentSummarySchema } from './payments.js';

// The operator's side of an account's payments (issue 26, points 2 and 4): the writes the contract
// keeps off the account's REST (request one for any subject, refund, cancel) and the same reads as
// GET /api/v3/payments, acting as the operator for the account the path names
// (services/account actingForAccount), so another account's payment is 404 as it is there.

const P = '/admin/v1/accounts/{account}/payments';
const base = { tag: 'Payments (operator)', auth: 'operator' } as const;
const summaryOutput = (status: 200 | 201, description: string) =>
  ({ kind: 'resource', status, description, schema: paymentSummarySchema }) as const;

const requestBody = {
  type: 'object',
  required: ['amount_minor', 'currency'],
  additionalProperties: false,
  properties: {
    subject_type: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'what kind of record the payment is for: order, basket, invoice, …',
    },
    subject_id: { type: 'string', minLength: 1, maxLength: 191, description: 'the record the payment is for' },
    amount_minor: { type: 'integer', minimum: 1, description: '100 minor units a major unit for every currency (TZS 12,000 is 1200000)' },
    currency: { type: 'string', description: 'ISO 4217 code, 3 capital letters' },
    payer: { type: 'string', maxLength: 32, description: 'the payer’s phone number, international format (+255…)' },
    method: { type: 'string', minLength: 1, maxLength: 32, description: 'how the payer pays: mobile_money, …' },
    expires_at: { type: 'string', format: 'date-time', description: 'when an open payment becomes expired; in the future' },
  },
} as const;

export const paymentSettingsOperations = [
  defineOperation({
    ...base,
    name: 'admin_list_payments',
    method: 'GET',
    path: P,
    summary: 'List an account’s payments, newest first',
    description: 'The answer of list_payments for that account: state (open, one state, all), subject_id, page, per_page, limit.',
    query: paymentListQuery,
    output: paymentListOutput,
    cli: [{ command: 'payments:list' }],
    handler: async ({ oc }, { account, ...query }) => listPayments(await actingForAccount(oc, account), query),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_payment',
    method: 'GET',
    path: `${P}/{payment}`,
    summary: 'Read one of an account’s payments: its timeline, ledger and refunds',
    description: 'By UUID or reference (PAY-<digits>-<digits>, any case), as get_payment.',
    output: { kind: 'resource', status: 200, description: 'The payment', schema: paymentDetailSchema },
    cli: [{ command: 'payments:show' }],
    handler: async ({ oc }, { account, payment }) => getPayment(await actingForAccount(oc, account), payment),
  }),
  defineOperation({
    ...base,
    name: 'admin_request_payment',
    method: 'POST',
    path: P,
    summary: 'Request a payment for any subject the operator names',
    description:
      'A draft payment of amount_minor in currency, for subject_type / subject_id, from payer. Refused whole (422 naming the field): ' +
      'an amount that is not a whole number of at least 1, a currency that is not an ISO 4217 code, a payer that is not a phone ' +
      'number, an expiry in the past.',
    body: requestBody,
    output: summaryOutput(201, 'The payment requested'),
    cli: [{ command: 'payments:request', help: 'Request a payment (draft) for a subject: --amount-minor, --currency, --payer' }],
    handler: async ({ oc, deps }, { account, ...body }) => {
      const rc = await actingForAccount(oc, account);
      const payment = await requestPaymentFor(rc, body);
      await afterPaymentRequested(deps, payment, rc.account.id);
      return payment;
    },
  }),
  defineOperation({
    ...base,
    name: 'admin_refund_payment',
    method: 'POST',
    path: `${P}/{payment}/refunds`,
    summary: 'Refund a settled payment, fully or in part, with a reason',
    description:
      'A refund is a payment of its own (is_refund, refund_of, reason), in draft; its workflow then asks the provider to reverse it ' +
      '(pending) and its result settles it (paid, and the payment partly_refunded or refunded) or fails it. amount_minor, or all ' +
      'that is still refundable when absent. Taken from the payment’s refundable amount in one guarded statement, so refunds never ' +
      'give back more than was paid: more than refundable_minor, zero or a negative amount is 422 (amount_minor); a payment not ' +
      'paid or partly refunded, or a refund, is 409.',
    body: {
      type: 'object',
      required: ['reason'],
      additionalProperties: false,
      properties: {
        amount_minor: { type: 'integer', minimum: 1, description: 'default: all of refundable_minor' },
        reason: { type: 'string', minLength: 1, maxLength: 1000, description: 'why the money goes back' },
      },
    } as const,
    output: summaryOutput(201, 'The refund'),
    cli: [{ command: 'payments:refund', help: 'Refund a payment: --amount-minor (default all that is left), --reason' }],
    handler: async ({ oc, deps }, { account, payment, ...body }) => {
      const rc = await actingForAccount(oc, account);
      const refund = await refundPayment(rc, payment, body);
      await afterPaymentRequested(deps, refund, rc.account.id);
      return refund;
    },
  }),
  defineOperation({
    ...base,
    name: 'admin_cancel_payment',
    method: 'POST',
    path: `${P}/{payment}/cancel`,
    summary: 'Cancel an open payment',
    description:
      'draft, pending, authorised or failed → cancelled, recorded on its timeline as the operator’s; its workflow then stops ' +
      'pushing and polling. Any other state is 409, and the refused move is recorded on the timeline too.',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { reason: { type: 'string', minLength: 1, maxLength: 500, description: 'recorded on the timeline' } },
    } as const,
    output: summaryOutput(200, 'The payment, cancelled'),
    cli: [{ command: 'payments:cancel' }],
    handler: async ({ oc, deps }, { account, payment, ...body }) => cancelPayment(await actingForAccount(oc, account), deps, payment, body),
  }),
];
