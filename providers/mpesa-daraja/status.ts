// Daraja's STK ResultCodes in our words (notes §5.1: EdLugz C2BStatusCodes and community handlers).
// Callbacks carry the code as a number, STK Query as a string; both are read as strings here.
import type { PaymentFailureReason, PaymentProviderState } from '../types.js';

interface Meaning {
  state: Exclude<PaymentProviderState, 'pending' | 'paid'>;
  reason: PaymentFailureReason;
}

const FINAL: Record<string, Meaning> = {
  '1': { state: 'failed', reason: 'insufficient_funds' },
  '1001': { state: 'failed', reason: 'payer_busy' },
  '1019': { state: 'expired', reason: 'expired' },
  '1025': { state: 'failed', reason: 'push_failed' },
  '9999': { state: 'failed', reason: 'push_failed' },
  // "Request cancelled by user": the payer (our customer) declined the prompt. Our contract's
  // `cancelled` is a customer's or merchant's cancellation, so it is that, not a failure.
  '1032': { state: 'cancelled', reason: 'payer_cancelled' },
  '1036': { state: 'failed', reason: 'push_failed' },
  // "DS timeout, user cannot be reached": the prompt went unanswered, the attempt is over.
  '1037': { state: 'expired', reason: 'no_answer' },
  '2001': { state: 'failed', reason: 'wrong_pin' },
  '17': { state: 'failed', reason: 'provider_error' },
  '26': { state: 'failed', reason: 'provider_error' },
};

/** STK Query's "still under processing" (HTTP 200, ResultCode 4999). */
export const STILL_PROCESSING_CODE = '4999';
/** The error envelope's "The transaction is being processed" (HTTP 500 on STK Query). */
export const BEING_PROCESSED_ERROR = '500.001.1001';

/** A callback's ResultCode: 0 is paid; any other code ends the attempt (an unknown one as a provider error). */
export function callbackOutcome(code: string): { state: Exclude<PaymentProviderState, 'pending'>; reason: PaymentFailureReason | null } {
  if (code === '0') return { state: 'paid', reason: null };
  return FINAL[code] ?? { state: 'failed', reason: 'provider_error' };
}

/** A query's ResultCode: known codes are final; 4999 and anything unknown are still pending (never finalise on an unknown code). */
export function queryOutcome(code: string): { state: PaymentProviderState; reason: PaymentFailureReason | null } {
  if (code === '0') return { state: 'paid', reason: null };
  return FINAL[code] ?? { state: 'pending', reason: null };
}
