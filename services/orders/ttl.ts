import { loadConfig } from '../../config.js';

// The length of one "hour" of reservation_ttl_hours. 3600 everywhere but in tests and benchmarks
// (ORDER_HOLD_TTL_UNIT_SECONDS), where a TTL of one hour may pass in seconds. Read once per process
// through config.ts: createOrder runs inside callers' transactions that carry no config.

let unit: number | null = null;
let checkoutUnit: number | null = null;

export function holdTtlUnitSeconds(): number {
  unit ??= loadConfig().orderHoldTtlUnitSeconds;
  return unit;
}

/** The length of one minute of a shop's checkout_hold_minutes (CHECKOUT_HOLD_UNIT_SECONDS; 60 but in tests). */
export function checkoutHoldUnitSeconds(): number {
  checkoutUnit ??= loadConfig().checkoutHoldUnitSeconds;
  return checkoutUnit;
}

/** Tests and benchmarks that create orders in their own process set it here. */
export function setHoldTtlUnitSeconds(seconds: number): void {
  unit = seconds;
}
