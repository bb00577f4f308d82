// The contract's retry schedules, in seconds after each failed attempt. Pure data: workflows use it.

/** Communication callbacks: first attempt at once, then 1 min, 5 min, 30 min, 2 h, 6 h; then failed. */
export const COMMUNICATION_RETRY_SECONDS = [60, 300, 1800, 7200, 21600];

/** Automation subscription callbacks (our choice, the contract leaves it open): 30 s, 2 min, 10 min. */
export const AUTOMATION_RETRY_SECONDS = [30, 120, 600];

/** Only a 2xx answer ends a delivery; a 3xx is a failure (redirects are not followed). */
export const isDelivered = (statusCode: number | null) => statusCode !== null && statusCode >= 200 && statusCode < 300;

/**
 * An endpoint failing without pause is disabled (and the account told) when a delivery exhausts
 * its retries and either this many deliveries in a row have done so, or no attempt has succeeded
 * for DISABLE_AFTER_FAILING_HOURS. A 410 Gone answer disables it at once.
 */
export const DISABLE_AFTER_FAILED_DELIVERIES = 20;
export const DISABLE_AFTER_FAILING_HOURS = 24;

/** Bounded time for one HTTP attempt, connection to last byte. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
