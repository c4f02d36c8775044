import { backoffMs, type BackoffRule } from './sign-in-rules';

/**
 * Where failed sign-ins are counted: in process (one instance) or in Redis (every instance,
 * src/infra/redis-sign-in-store.ts). Each operation is atomic. Times are epoch ms from the
 * caller's clock. A store throws only when it is broken (Redis away), never to refuse.
 */
export interface SignInAttemptStore {
  /**
   * When none of the counters waits at `now`: counts the attempt on each (as a failure until
   * `succeeded` says otherwise, so parallel guesses count at once) and starts their waits by
   * their rules; returns 0. Otherwise counts nothing and returns the longest wait left (ms).
   */
  claim(counters: readonly AttemptCounter[], now: number): Promise<number>;
  /** The claimed attempt was right: `clear` counters are forgotten, `uncount` ones lose this attempt (their wait stays), `remember` is kept for `rememberMs`. */
  succeeded(
    outcome: { clear: readonly string[]; uncount: readonly string[]; remember: string; rememberMs: number },
    now: number,
  ): Promise<void>;
  /** Whether `key` was remembered (and not yet forgotten) at `now`. */
  remembered(key: string, now: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface AttemptCounter {
  key: string;
  rule: BackoffRule;
  /** Forgotten this long after its last counted failure. */
  memoryMs: number;
}

interface Counter {
  failures: number;
  /** No attempt before this (epoch ms). */
  until: number;
  forgetAt: number;
}

/** Bounds memory against a flood of distinct emails and addresses; the oldest entries go first. */
const MAX_ENTRIES = 100_000;

/** The store of one process. */
export class InMemorySignInStore implements SignInAttemptStore {
  private readonly counters = new Map<string, Counter>();
  private readonly remembers = new Map<string, number>();

  async claim(counters: readonly AttemptCounter[], now: number): Promise<number> {
    let wait = 0;
    for (const { key } of counters) {
      const counter = this.live(key, now);
      if (counter && counter.until > now) wait = Math.max(wait, counter.until - now);
    }
    if (wait > 0) return wait;
    for (const { key, rule, memoryMs } of counters) {
      const failures = (this.live(key, now)?.failures ?? 0) + 1;
      const backoff = backoffMs(failures, rule);
      this.counters.delete(key); // re-inserted last: Map order is then oldest activity first
      this.counters.set(key, { failures, until: backoff > 0 ? now + backoff : 0, forgetAt: now + memoryMs });
    }
    this.bound(this.counters);
    return 0;
  }

  async succeeded(
    outcome: { clear: readonly string[]; uncount: readonly string[]; remember: string; rememberMs: number },
    now: number,
  ): Promise<void> {
    for (const key of outcome.clear) this.counters.delete(key);
    for (const key of outcome.uncount) {
      const counter = this.live(key, now);
      if (counter) counter.failures = Math.max(0, counter.failures - 1);
    }
    this.remembers.delete(outcome.remember);
    this.remembers.set(outcome.remember, now + outcome.rememberMs);
    this.bound(this.remembers);
  }

  async remembered(key: string, now: number): Promise<boolean> {
    const until = this.remembers.get(key);
    return until !== undefined && until > now;
  }

  async close(): Promise<void> {}

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.forgetAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private bound(map: Map<string, unknown>): void {
    for (const key of map.keys()) {
      if (map.size <= MAX_ENTRIES) return;
      map.delete(key);
    }
  }
}
