import { FailureThrottle, type RateDecision } from '../http/ratelimit.js';
import type { Config } from '../../config.js';

// The authorization server's throttles, per API process and in memory like the failed-authentication
// ones (api/http/ratelimit.ts): the same sliding minute, keyed by client address and by what the
// request names (a client id, an email).

/** A limit on two keys at once: a request is refused when either key is over, and counted on both. */
export class PairThrottle {
  private readonly first: FailureThrottle;
  private readonly second: FailureThrottle;

  constructor(firstLimit: number, secondLimit: number, clock: () => number = Date.now) {
    this.first = new FailureThrottle(firstLimit, clock);
    this.second = new FailureThrottle(secondLimit, clock);
  }

  /** The refusal (the longer wait) when either key has used its minute up, else null; counts nothing. */
  blocked(first: string, second: string | null): RateDecision | null {
    const a = this.first.blocked(first);
    const b = second === null ? null : this.second.blocked(second);
    if (!a) return b;
    if (!b) return a;
    return a.retryAfter >= b.retryAfter ? a : b;
  }

  count(first: string, second: string | null): void {
    this.first.fail(first);
    if (second !== null) this.second.fail(second);
  }
}

export interface OAuthThrottles {
  /**
   * Token and revocation requests: every request counts, per client address (the limit) and per
   * client id (ten times it: one client id, such as a client ID metadata document's URL, may serve
   * many people at once).
   */
  token: PairThrottle;
  /** Registrations per client address (registration takes no credential). */
  registration: FailureThrottle;
  /**
   * Failed sign-ins per client address and per email. While either is over, sign-in is refused
   * without checking the password (unlike keys: a password is guessable, a key is not), so a
   * guesser gets that many tries a minute at one email from anywhere.
   */
  signIn: PairThrottle;
}

export function oauthThrottles(
  config: Pick<Config, 'oauthTokenRequestsPerMinute' | 'oauthRegistrationsPerMinute' | 'signInFailuresPerMinute'>,
): OAuthThrottles {
  return {
    token: new PairThrottle(config.oauthTokenRequestsPerMinute, config.oauthTokenRequestsPerMinute * 10),
    registration: new FailureThrottle(config.oauthRegistrationsPerMinute),
    signIn: new PairThrottle(config.signInFailuresPerMinute, config.signInFailuresPerMinute),
  };
}
