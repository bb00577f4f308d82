import { heartbeat } from '@temporalio/activity';

/**
 * Heartbeats at most once a second. Each call encodes its details and crosses into the SDK's native
 * core even when the core then throttles it; 64 send loops heartbeating while they waited for a
 * refill cost the worker more CPU than the claims (profile of the 100,000-message campaign). For
 * the long-running dispatch activities (batch sends, webhook first attempts).
 */
export function throttledHeartbeat(everyMs = 1000) {
  let last = 0;
  return (details?: unknown) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    heartbeat(details);
  };
}
