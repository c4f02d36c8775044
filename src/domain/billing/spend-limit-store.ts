import type { KeyEventView } from '../shared/events';

/** A key's month spend (settled charges and holds in flight) against its monthly limit. */
export interface KeyLimitSpend {
  /** null: the key has no limit. */
  limitMicro: bigint | null;
  spentMicro: bigint;
}

/** The port through which a key's month limit being reached is recorded (adapter: src/infra/pg-spend-limit-store.ts). */
export interface SpendLimitStore {
  /**
   * Reads the key's limit and month spend. When the key has a limit and the month has not been
   * marked as having reached it, marks it and writes the event `firstEvent` makes, in the same
   * transaction: one event per key and month however many requests are refused at once. Commits
   * although the request is refused; answers the event written (null when none was).
   */
  recordLimitReached(
    keyId: string,
    month: string,
    at: Date,
    firstEvent: (spend: { limitMicro: bigint; spentMicro: bigint }) => KeyEventView,
  ): Promise<{ spend: KeyLimitSpend; event: KeyEventView | null }>;
}
