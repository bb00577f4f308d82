// Failure injection. A fault is armed for the next N matching sends; each provider fake turns the
// fault into its own wire shape (Twilio JSON vs Graph envelope), so this module only does matching.
import { digitsOf } from './util.js';

/** Faults of a message send (SMS or WhatsApp). */
export const SEND_FAULT_KINDS = ['http_500', 'http_429', 'timeout', 'error', 'no_receipt'] as const;
/**
 * Faults of the WhatsApp Groups API (simulator/whatsapp-groups.ts), matched on the business
 * phone-number id in `to`: creation that never confirms, creation confirmed by a failure webhook,
 * and a synchronous Graph error on the next group call. Sends never take them.
 */
export const GROUP_FAULT_KINDS = ['group_create_hang', 'group_create_fail', 'group_error'] as const;
/**
 * Faults of the mobile-money provider (simulator/mpesa-daraja.ts), matched on the payer's phone in
 * `to` (a reversal: the reversed payment's payer). The push's own answer: `payment_timeout` (the
 * push is made, its answer comes after timeoutFaultMs), `payment_unavailable` (503, no push); armed
 * once the payment is paid, the same two are a reversal's answer (made, answered late; 503, none
 * made). The result: `insufficient_funds` (1), `payer_cancels` (1032), `no_answer` (1037), `expiry`
 * (1019), `wrong_pin` (2001), `payment_result` (any ResultCode in `code`; with `amount`, in whole
 * units, a success reports that amount paid instead of the push's). Its delivery:
 * `duplicate_callback` (posted twice), `late_callback` (settled on time, posted lateCallbackMs later),
 * `no_callback` (settled, never posted: only a query finds it). A reversal: `reversal_fails`
 * (ResultCode `code`, default 2001).
 */
export const PAYMENT_PUSH_FAULT_KINDS = ['payment_timeout', 'payment_unavailable'] as const;
export const PAYMENT_RESULT_FAULT_KINDS = [
  'insufficient_funds',
  'payer_cancels',
  'no_answer',
  'expiry',
  'wrong_pin',
  'payment_result',
] as const;
export const PAYMENT_DELIVERY_FAULT_KINDS = ['duplicate_callback', 'late_callback', 'no_callback'] as const;
export const PAYMENT_REVERSAL_FAULT_KINDS = ['reversal_fails'] as const;
/** The organisation statement's download answers 503 (a fault without `to`: the statement names no payer). */
export const PAYMENT_STATEMENT_FAULT_KINDS = ['statement_unavailable'] as const;
export const PAYMENT_FAULT_KINDS = [
  ...PAYMENT_PUSH_FAULT_KINDS,
  ...PAYMENT_RESULT_FAULT_KINDS,
  ...PAYMENT_DELIVERY_FAULT_KINDS,
  ...PAYMENT_REVERSAL_FAULT_KINDS,
  ...PAYMENT_STATEMENT_FAULT_KINDS,
] as const;
export const FAULT_KINDS = [...SEND_FAULT_KINDS, ...GROUP_FAULT_KINDS, ...PAYMENT_FAULT_KINDS] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export const PROVIDERS = ['sms', 'whatsapp', 'payment'] as const;
export type Provider = (typeof PROVIDERS)[number];
export const isProvider = (v: unknown): v is Provider => (PROVIDERS as readonly unknown[]).includes(v);

export interface Fault {
  id: number;
  provider: Provider;
  kind: FaultKind;
  /** Recipient digits; null matches every recipient. */
  to: string | null;
  /** Sends still to be affected; -1 means until cleared. */
  remaining: number;
  code: number | null;
  message: string | null;
  retryAfter: number | null;
  /** A payment result's amount, whole units, reported instead of the push's (payment_result only). */
  amount: number | null;
  hits: number;
}

export class FaultInputError extends Error {}

export class FaultStore {
  private faults: Fault[] = [];
  private seq = 0;

  add(input: unknown): Fault {
    if (typeof input !== 'object' || input === null) throw new FaultInputError('body must be a JSON object');
    const i = input as Record<string, unknown>;
    if (!isProvider(i.provider)) throw new FaultInputError("provider must be 'sms', 'whatsapp' or 'payment'");
    if (!FAULT_KINDS.includes(i.kind as FaultKind)) throw new FaultInputError(`kind must be one of ${FAULT_KINDS.join(', ')}`);
    const count = i.count === undefined ? 1 : i.count;
    if (typeof count !== 'number' || !Number.isInteger(count) || (count < 1 && count !== -1)) {
      throw new FaultInputError('count must be a positive integer or -1');
    }
    if (i.to !== undefined && (typeof i.to !== 'string' || digitsOf(i.to) === '')) throw new FaultInputError('to must be a phone number');
    if (i.code !== undefined && (typeof i.code !== 'number' || !Number.isInteger(i.code)))
      throw new FaultInputError('code must be an integer');
    if ((GROUP_FAULT_KINDS as readonly string[]).includes(i.kind as string) && i.provider !== 'whatsapp') {
      throw new FaultInputError(`kind '${String(i.kind)}' needs provider 'whatsapp'`);
    }
    if ((PAYMENT_FAULT_KINDS as readonly string[]).includes(i.kind as string) !== (i.provider === 'payment')) {
      throw new FaultInputError(`kind '${String(i.kind)}' does not apply to provider '${String(i.provider)}'`);
    }
    if (i.kind === 'payment_result' && i.code === undefined)
      throw new FaultInputError("kind 'payment_result' needs the ResultCode in `code`");
    if (i.kind === 'error' && i.code === undefined) throw new FaultInputError("kind 'error' needs the provider error code in `code`");
    if (i.message !== undefined && typeof i.message !== 'string') throw new FaultInputError('message must be a string');
    if (i.retryAfter !== undefined && (typeof i.retryAfter !== 'number' || i.retryAfter < 0)) {
      throw new FaultInputError('retryAfter must be a non-negative number of seconds');
    }
    if (
      i.amount !== undefined &&
      (i.kind !== 'payment_result' || typeof i.amount !== 'number' || !Number.isInteger(i.amount) || i.amount < 1)
    )
      throw new FaultInputError("amount must be a whole number of at least 1, with kind 'payment_result'");
    const fault: Fault = {
      id: ++this.seq,
      provider: i.provider,
      kind: i.kind as FaultKind,
      to: typeof i.to === 'string' ? digitsOf(i.to) : null,
      remaining: count,
      code: typeof i.code === 'number' ? i.code : null,
      message: typeof i.message === 'string' ? i.message : null,
      retryAfter: typeof i.retryAfter === 'number' ? i.retryAfter : null,
      amount: typeof i.amount === 'number' ? i.amount : null,
      hits: 0,
    };
    this.faults.push(fault);
    return fault;
  }

  /** Consumes one use of the oldest fault of one of `kinds` (by default a send's) matching this call, if any. */
  take(provider: Provider, to: string | null, kinds: readonly FaultKind[] = SEND_FAULT_KINDS): Fault | null {
    if (this.faults.length === 0) return null;
    const toDigits = to === null ? null : digitsOf(to);
    const fault = this.faults.find(
      (f) => f.provider === provider && kinds.includes(f.kind) && (f.to === null || f.to === toDigits) && f.remaining !== 0,
    );
    if (!fault) return null;
    fault.hits += 1;
    if (fault.remaining > 0) fault.remaining -= 1;
    if (fault.remaining === 0) this.faults = this.faults.filter((f) => f !== fault);
    return { ...fault };
  }

  clear(provider?: Provider): number {
    const before = this.faults.length;
    this.faults = provider ? this.faults.filter((f) => f.provider !== provider) : [];
    return before - this.faults.length;
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }
}
