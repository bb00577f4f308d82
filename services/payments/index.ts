// The payments family as other families and the workflow's activities see it.
export {
  requestPayment,
  requestRefund,
  recordMove,
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
export { startPaymentAfterCommit, type PaymentFlowDeps } from './flow.js';
export { paymentWebhooks, type PaymentWebhook, type PaymentIngressDeps } from './ingress.js';
export { setProviderRef } from './store.js';
export {
  reconcileSlice,
  recordMismatches,
  listMismatches,
  runReconciliation,
  RECONCILIATION_MARGIN_MS,
  type SliceInput,
  type SliceCounts,
} from './reconciliation.js';
