import type { Clock } from '../shared/clock';
import { tooManySignIns } from '../shared/errors';
import { accountKey, addressKey, FAILURE_MEMORY_MS, KNOWN_ADDRESS_MS, SIGN_IN_RULES } from './sign-in-rules';
import type { AttemptCounter, SignInAttemptStore } from './sign-in-store';

/** The few logger methods the throttle uses (pino's Logger fits). */
export interface ThrottleLogger {
  warn(details: object, message: string): void;
}

/** What a claimed attempt reports back once the password was checked. */
export interface SignInAttempt {
  succeeded(): Promise<void>;
}

const WARN_EVERY_MS = 10_000;

/**
 * Throttles failed sign-ins (rules in sign-in-rules.ts) on a store shared by every instance
 * when there is one. While the shared store fails, each instance counts on its own (logged),
 * as the rate limits do: sign-in keeps working, throttled per instance.
 */
export class SignInThrottle {
  private storeDownUntil = 0;
  private lastWarnAt = -Infinity;

  constructor(
    private readonly store: SignInAttemptStore,
    private readonly fallback: SignInAttemptStore | null,
    private readonly clock: Clock,
    private readonly log: ThrottleLogger | null = null,
  ) {}

  /**
   * Claims an attempt to sign in as `email` (normalised) from `address`, before the password is
   * checked: 429 `rate_limited` with `Retry-After` while a counter waits. The same for every
   * email, known or not, so the answer tells nothing about which exist.
   */
  async claim(email: string, address: string | undefined): Promise<SignInAttempt> {
    const now = this.clock.nowMs();
    const account = `acct:${accountKey(email)}`;
    const from = addressKey(address);
    const pair = `pair:${accountKey(email)}:${from}`;
    const known = `known:${accountKey(email)}:${from}`;
    const remembered = await this.pick(async (s) => s.remembered(known, now));
    const store = remembered.store;
    const pairCounter: AttemptCounter = { key: pair, rule: SIGN_IN_RULES.pair, memoryMs: FAILURE_MEMORY_MS };
    // From an address its user signed in from lately, only the pair counts: guesses from
    // elsewhere (other addresses, or other accounts from this one) cannot keep that user out.
    const counters: AttemptCounter[] = remembered.value
      ? [pairCounter]
      : [
          pairCounter,
          { key: account, rule: SIGN_IN_RULES.account, memoryMs: FAILURE_MEMORY_MS },
          { key: `addr:${from}`, rule: SIGN_IN_RULES.address, memoryMs: FAILURE_MEMORY_MS },
        ];
    const waitMs = await this.guard(store, (s) => s.claim(counters, now));
    if (waitMs > 0) throw tooManySignIns(waitMs);
    const outcome = {
      clear: [pair, account],
      uncount: remembered.value ? [] : [`addr:${from}`],
      remember: known,
      rememberMs: KNOWN_ADDRESS_MS,
    };
    return { succeeded: () => this.guard(store, (s) => s.succeeded(outcome, this.clock.nowMs())) };
  }

  async close(): Promise<void> {
    await this.store.close();
    await this.fallback?.close();
  }

  /** The first operation of an attempt picks the store the rest of it uses. */
  private async pick<T>(operation: (store: SignInAttemptStore) => Promise<T>): Promise<{ value: T; store: SignInAttemptStore }> {
    if (this.fallback && performance.now() < this.storeDownUntil) return { value: await operation(this.fallback), store: this.fallback };
    try {
      return { value: await operation(this.store), store: this.store };
    } catch (error) {
      if (!this.fallback) throw error;
      this.noteFailure(error);
      return { value: await operation(this.fallback), store: this.fallback };
    }
  }

  private async guard<T>(store: SignInAttemptStore, operation: (store: SignInAttemptStore) => Promise<T>): Promise<T> {
    try {
      return await operation(store);
    } catch (error) {
      if (!this.fallback || store === this.fallback) throw error;
      this.noteFailure(error);
      return operation(this.fallback);
    }
  }

  private noteFailure(error: unknown): void {
    const now = performance.now();
    this.storeDownUntil = now + 1_000;
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = now;
    this.log?.warn(
      { err: String((error as Error)?.message ?? error) },
      'sign-in throttle store unavailable: counting failed sign-ins per instance',
    );
  }
}
