import type { StoreOutcome, StoreRefusal } from './store';
import { MINUTE_WINDOW_MS, requestsResetMs, SECOND_WINDOW_MS, type AppliedLimits } from './windows';

interface KnownRefusal {
  limits: AppliedLimits;
  /** The store's refusal, as of `outcome.snapshot.at`. */
  outcome: StoreOutcome;
  /** Epoch ms: from then on, ask the store again. */
  until: number;
}

/** Bounds the memory of known refusals (one entry per refused subject). */
const MAX_KNOWN_REFUSALS = 10_000;

const sameRequestLimits = (a: AppliedLimits, b: AppliedLimits): boolean =>
  a.requestsPerSecond === b.requestsPerSecond &&
  a.requestsPerMinute === b.requestsPerMinute &&
  a.tokensPerMinute === b.tokensPerMinute &&
  a.concurrentRequests === b.concurrentRequests;

/**
 * Subjects whose request window (RPS or RPM) a store refusal showed full, with the refusal,
 * until the first moment the answer could differ: refused again without a round trip.
 * Any change this instance makes to the subject's windows (a reservation, settlement or
 * release) drops the entry (forget), so what it says stays what the store would say.
 */
export class KnownRefusals {
  private readonly bySubject = new Map<string, KnownRefusal>();

  /** This instance changed the subject's windows: a known refusal may no longer hold. */
  forget(subject: string): void {
    if (this.bySubject.size > 0) this.bySubject.delete(subject);
  }

  /** The refusal the store would give now, when a recent one still answers for it; else null (ask the store). */
  answer(subject: string, limits: AppliedLimits, at: number): StoreOutcome | null {
    const known = this.bySubject.get(subject);
    if (!known) return null;
    const elapsed = at - known.outcome.snapshot.at;
    if (elapsed < 0 || at >= known.until || !sameRequestLimits(known.limits, limits)) {
      this.bySubject.delete(subject);
      return null;
    }
    const refusal = known.outcome.refusal as StoreRefusal;
    return { refusal: { limit: refusal.limit, retryAfterMs: refusal.retryAfterMs - elapsed }, snapshot: { ...known.outcome.snapshot, at } };
  }

  /**
   * Keeps a request-window refusal for as long as the store's answer is sure to be the same:
   * until the refused request would fit, and no longer than the moment an entry leaves a window
   * the headers show (the oldest request, the oldest settled usage). When the concurrency limit
   * was also reached, only while the window's wait is the longer one (a full slot table asks
   * for a one-second retry, and the longest wait is the one reported).
   */
  remember(subject: string, limits: AppliedLimits, outcome: StoreOutcome): void {
    const refusal = outcome.refusal as StoreRefusal;
    if (refusal.limit !== 'requests_per_second' && refusal.limit !== 'requests_per_minute') return;
    const s = outcome.snapshot;
    let lasts = Math.min(refusal.retryAfterMs, requestsResetMs(s));
    if (s.oldestSettledAt !== null) lasts = Math.min(lasts, s.oldestSettledAt + MINUTE_WINDOW_MS - s.at);
    if (limits.concurrentRequests !== null && s.slotsInUse >= limits.concurrentRequests)
      lasts = Math.min(lasts, refusal.retryAfterMs - SECOND_WINDOW_MS);
    if (lasts <= 0) return;
    if (this.bySubject.size >= MAX_KNOWN_REFUSALS) this.forgetStale(s.at);
    this.bySubject.set(subject, { limits, outcome, until: s.at + lasts });
  }

  private forgetStale(now: number): void {
    for (const [subject, known] of this.bySubject) if (known.until <= now) this.bySubject.delete(subject);
    // Still full (a flood of distinct subjects): start over; the store answers meanwhile.
    if (this.bySubject.size >= MAX_KNOWN_REFUSALS) this.bySubject.clear();
  }
}
