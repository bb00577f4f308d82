// Meta's two send throttles (notes §1.6): per-number throughput (130429) and the business–user pair
// rate (131056). Both are enforced synchronously, before a wamid is issued, as Meta does.

export interface RateSettings {
  waThroughputPerSecond: number;
  waPairBurst: number;
  waPairIntervalMs: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  readonly settings: RateSettings;
  private readonly recent = new Map<string, number[]>();
  private readonly pairs = new Map<string, Bucket>();

  constructor(settings: RateSettings) {
    this.settings = {
      waThroughputPerSecond: settings.waThroughputPerSecond,
      waPairBurst: settings.waPairBurst,
      waPairIntervalMs: settings.waPairIntervalMs,
    };
  }

  /**
   * Returns the Graph code that refuses this send, or null after recording it. Nothing is consumed
   * on refusal, so a client that backs off correctly is eventually let through.
   */
  admit(phoneNumberId: string, waId: string, now: number = Date.now()): 130429 | 131056 | null {
    const window = (this.recent.get(phoneNumberId) ?? []).filter((t) => now - t < 1000);
    if (window.length >= this.settings.waThroughputPerSecond) {
      this.recent.set(phoneNumberId, window);
      return 130429;
    }
    const key = `${phoneNumberId}:${waId}`;
    const bucket = this.refill(this.pairs.get(key), now);
    if (bucket.tokens < 1) {
      this.pairs.set(key, bucket);
      return 131056;
    }
    bucket.tokens -= 1;
    this.pairs.set(key, bucket);
    window.push(now);
    this.recent.set(phoneNumberId, window);
    return null;
  }

  clear(): void {
    this.recent.clear();
    this.pairs.clear();
  }

  private refill(bucket: Bucket | undefined, now: number): Bucket {
    const { waPairBurst, waPairIntervalMs } = this.settings;
    if (!bucket) return { tokens: waPairBurst, updatedAt: now };
    const gained = waPairIntervalMs > 0 ? (now - bucket.updatedAt) / waPairIntervalMs : waPairBurst;
    return { tokens: Math.min(waPairBurst, bucket.tokens + gained), updatedAt: now };
  }
}
