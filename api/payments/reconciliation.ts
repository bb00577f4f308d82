import { defineOperation } from '../operation.js';
import { actingForAccount } from '../../services/account/index.js';
import { listMismatches, runReconciliation } from '../../services/payments/index.js';
import { pageSchema } from '../../services/platform/pagination.js';
import {
  mismatchQuerySchema,
  mismatchSchema,
  reconcileBodySchema,
  reconciliationRunSchema,
} from '../../services/payments/reconciliation.js';

// The operator's side of payment reconciliation (issue 26 point 5; docs/payments.md
// "Reconciliation"): run it now over a period (every account's payments, or one account's), and
// list the mismatches found, by this run or by the hourly schedule. Provider-wide, so not under an
// account's path: the provider's report covers every account.

const base = { tag: 'Payments (operator)', auth: 'operator' } as const;

export const paymentReconciliationOperations = [
  defineOperation({
    ...base,
    name: 'admin_reconcile_payments',
    method: 'POST',
    path: '/admin/v1/payments/reconciliations',
    summary: 'Reconcile the payment ledger with the provider’s report now',
    description:
      'Starts a reconciliation run over from … to (default: the schedule’s window, ending the schedule’s lag before now) for every ' +
      'account, or for `account` only, and waits up to 10 s for it. Each mismatch (missing_at_provider, missing_in_ours, ' +
      'amount_differs) is recorded once, with a payment.mismatch notice and business event for the account whose money it is; a ' +
      'period reconciled again records nothing twice. A period that ends before it starts, or longer than 31 days, is 422.',
    body: reconcileBodySchema,
    output: { kind: 'outcome', status: 200, description: 'The run: its counts, or running', schema: reconciliationRunSchema },
    cli: [{ command: 'payments:reconcile', help: 'Reconcile payments with the provider’s report now: --from, --to (ISO 8601), --account' }],
    handler: async ({ oc, deps }, body) =>
      runReconciliation(deps, body, body.account !== undefined ? await actingForAccount(oc, String(body.account)) : undefined),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_payment_mismatches',
    method: 'GET',
    path: '/admin/v1/payments/mismatches',
    summary: 'Mismatches between the payment ledger and the provider’s report, newest first',
    description: 'Every account’s, or one account’s (`account`); of one kind, settlement or provider. Page-number pagination, 20 a page.',
    query: mismatchQuerySchema,
    output: { kind: 'list', status: 200, description: 'A page of mismatches', schema: pageSchema('mismatches', mismatchSchema) },
    cli: [{ command: 'payments:mismatches', help: 'Mismatches reconciliation found, newest first: --account, --kind' }],
    handler: async ({ oc }, query) => listMismatches(oc, query),
  }),
];
