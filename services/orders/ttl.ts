import { loadConfig } from '../../config.js';

// The length of one "hour" of reservation_ttl_hours. 3600 everywhere but in tests and benchmarks
// (ORDER_HOLD_TTL_UNIT_SECONDS), where a TTL of one hour may pass in seconds. Read once per process
// through config.ts: createOrder runs inside callers' transactions that carry no config.

let unit: number | null = null;

export function holdTtlUnitSeconds(): number {
  unit ??= loadConfig().orderHoldTtlUnitSeconds;
  return unit;
}

/** Tests and benchmarks that create orders in their own process set it here. */
export function setHoldTtlUnitSeconds(seconds: number): void {
  unit = seconds;
}
