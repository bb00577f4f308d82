// The payments family as other families and the workflow's activities see it.
export {
  requestPayment,
  requestRefund,
  recordMove,
  markPushStarted,
  unmarkPush,
  type RequestPaymentInput,
  type RequestRefundInput,
  type MoveInput,
  type MoveOutcome,
} from './moves.js';
export { paymentSummary, type PaymentSummary, type PaymentDetail } from './payments.js';
export {
  afterPaymentRequested,
  requestOrderPayment,
  requestPaymentFor,
  refundPayment,
  cancelPayment,
  type OrderPaymentInput,
  type OperatorPaymentRequest,
} from './requests.js';
export { startPaymentAfterCommit, startOwedPayments, tellPaymentCancelled, type PaymentFlowDeps } from './flow.js';
export { startRefundAfterCommit } from './refunds.js';
export { paymentWebhooks, type PaymentWebhook, type PaymentIngressDeps } from './ingress.js';
export { setProviderRef, receiptToReverse } from './store.js';
export { collectedBefore, type PaidPayment, type PaidSubject, type PaidSubjects, type AfterPaid } from './subjects.js';
export {
  reconcileSlice,
  recordMismatches,
  listMismatches,
  runReconciliation,
  RECONCILIATION_MARGIN_MS,
  type SliceInput,
  type SliceCounts,
} from './reconciliation.js';
