import type { WindowSnapshot } from './windows';

/**
 * Where rolling windows and concurrency slots live: in process (one instance) or in Redis
 * (shared by every instance). Each operation is atomic per subject. A refusal is an
 * outcome, not an exception: a store throws only when it is broken (e.g. Redis down), so
 * the caller can tell "over the limit" from "cannot tell" and apply its outage policy.
 * Times are epoch milliseconds from the caller's clock.
 */
export interface LimitStore {
  /** Checks the request windows, the concurrency limit and (with `tokens`) the token window; records, takes a slot and reserves only when admitted. */
  admit(input: RequestAdmission): Promise<StoreOutcome>;
  /** admit() answered at once, by a store in this process's memory (none for a shared store). */
  admitNow?(input: RequestAdmission): StoreOutcome;
  /** Adds in-flight tokens to a held slot when they fit the token window. */
  reserveTokens(input: TokenReservation): Promise<StoreOutcome>;
  /** Drops the slot's reservation and records `tokens` as settled usage at `now`. */
  settleTokens(input: TokenSettlement): Promise<WindowSnapshot>;
  /**
   * Frees a slot and its reservation; freeing a slot that is gone is fine. With `settled`, also
   * records that usage as settled at `settled.at`, in the same step: a request's settlement and
   * release cost one operation (one round trip to a shared store), not two.
   */
  releaseSlot(subject: string, slotId: string, settled?: SettledUsage): Promise<void>;
  /** Pushes the expiry of held slots (heartbeat); slots already gone stay gone. */
  refreshSlots(slots: readonly HeldSlotRef[], now: number, expiresAt: number): Promise<void>;
  /** The subject's windows now, recording nothing. */
  snapshot(subject: string, now: number): Promise<WindowSnapshot>;
  close(): Promise<void>;
}

export type LimitName = 'requests_per_second' | 'requests_per_minute' | 'concurrent_requests' | 'tokens_per_minute';

export interface StoreRefusal {
  limit: LimitName;
  /** How long until the refused request would fit (≥ 0, ms). */
  retryAfterMs: number;
}

export interface StoreOutcome {
  /** Null when admitted. */
  refusal: StoreRefusal | null;
  /** The windows after the operation (unchanged on refusal). */
  snapshot: WindowSnapshot;
}

export interface HeldSlotRef {
  subject: string;
  slotId: string;
}

export interface RequestAdmission {
  /** Whose windows: `acct:<id>` for prepaid accounts, `user:<id>` for plan users. */
  subject: string;
  now: number;
  /** Unique id recorded in the request windows; null takes a slot only (a long job's slot). */
  requestId: string | null;
  /** Null: not limited. */
  requestsPerSecond: number | null;
  requestsPerMinute: number | null;
  /** The concurrency slot to take; null: no concurrency limit (plan users). */
  slot: { id: string; limit: number; expiresAt: number } | null;
  /**
   * Tokens to reserve on the new slot, when the request's estimate is known at admission:
   * checked against the token window with the other limits, in the same step (one round trip
   * to a shared store instead of two). Needs `slot`.
   */
  tokens?: { count: number; perMinute: number };
}

export interface TokenReservation {
  subject: string;
  now: number;
  slotId: string;
  /** Expiry to give the slot if it has to be re-taken (it expired while held). */
  slotExpiresAt: number;
  tokens: number;
  tokensPerMinute: number;
}

export interface SettledUsage {
  tokens: number;
  /** When the request settled (epoch ms): the usage counts in the token window until a minute after. */
  at: number;
}

export interface TokenSettlement {
  subject: string;
  now: number;
  slotId: string;
  tokens: number;
}

/**
 * How long until `needed` more tokens are free, given the settled entries oldest first
 * (time, tokens): the moment enough of them have left the window. When even all settled
 * usage leaving is not enough (in-flight reservations hold the rest), a full window.
 */
export function tokenRetryAfterMs(settled: Iterable<readonly [number, number]>, needed: number, now: number, windowMs: number): number {
  let freed = 0;
  for (const [at, tokens] of settled) {
    freed += tokens;
    if (freed >= needed) return Math.max(0, at + windowMs - now);
  }
  return windowMs;
}
