import {
  tokenRetryAfterMs,
  type HeldSlotRef,
  type LimitStore,
  type RequestAdmission,
  type SettledUsage,
  type StoreOutcome,
  type StoreRefusal,
  type TokenReservation,
  type TokenSettlement,
} from './store';
import { MINUTE_WINDOW_MS, SECOND_WINDOW_MS, type WindowSnapshot } from './windows';

/** A new log's room, and the least a log shrinks to. A power of two: a slot is an index masked. */
const MIN_LOG_CAPACITY = 16;

/**
 * A sliding log: entries (time, weight) kept oldest first, with their running total, so
 * counting the window is O(1) and dropping what left it is amortized O(1). The entries live in
 * typed arrays used as a ring (outside V8's heap: a minute of requests is never copied by a
 * scavenge, nor counted in the heap whose growth a full collection sets); the ring doubles when
 * full and halves when a quarter full, so its memory follows the traffic both ways. A log whose
 * entries all weigh 1 (the request log) keeps no weights: its total is its size.
 */
class SlidingLog {
  private times = new Float64Array(MIN_LOG_CAPACITY);
  private weights: Float64Array | null;
  /** Ring index of the oldest entry. */
  private head = 0;
  private count = 0;
  total = 0;

  constructor(weighted: boolean) {
    this.weights = weighted ? new Float64Array(MIN_LOG_CAPACITY) : null;
  }

  get size(): number {
    return this.count;
  }

  private slot(i: number): number {
    return (this.head + i) & (this.times.length - 1);
  }

  /** Time of the i-th oldest entry. */
  timeAt(i: number): number {
    return this.times[this.slot(i)];
  }

  private weightAt(i: number): number {
    return this.weights === null ? 1 : this.weights[this.slot(i)];
  }

  oldest(): number | null {
    return this.count > 0 ? this.times[this.head] : null;
  }

  newest(): number | null {
    return this.count > 0 ? this.timeAt(this.count - 1) : null;
  }

  /** Drops the entries recorded at or before `cutoff` (they have left the window). */
  expire(cutoff: number): void {
    while (this.count > 0 && this.times[this.head] <= cutoff) {
      this.total -= this.weights === null ? 1 : this.weights[this.head];
      this.head = (this.head + 1) & (this.times.length - 1);
      this.count--;
    }
    if (this.times.length > MIN_LOG_CAPACITY && this.count * 4 <= this.times.length) this.resize(this.times.length / 2);
  }

  add(at: number, weight: number): void {
    if (this.weights === null && weight !== 1) throw new Error('An unweighted log takes entries of weight 1.');
    if (this.count === this.times.length) this.resize(this.times.length * 2);
    this.total += weight;
    // Clocks normally move forward; a step back (NTP, a test clock) still keeps the order, the
    // newer entries moved up by one.
    let index = this.count;
    if (this.count > 0 && at < this.timeAt(this.count - 1)) {
      index = this.firstIndexAfter(at);
      for (let i = this.count; i > index; i--) this.copy(this.slot(i - 1), this.slot(i));
    }
    const slot = this.slot(index);
    this.times[slot] = at;
    if (this.weights !== null) this.weights[slot] = weight;
    this.count++;
  }

  private copy(from: number, to: number): void {
    this.times[to] = this.times[from];
    if (this.weights !== null) this.weights[to] = this.weights[from];
  }

  /** Index (from the oldest) of the first entry recorded after `t`. */
  firstIndexAfter(t: number): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.timeAt(mid) <= t) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  *entries(): IterableIterator<readonly [number, number]> {
    for (let i = 0; i < this.count; i++) yield [this.timeAt(i), this.weightAt(i)];
  }

  /** The entries moved, oldest first, into rings of `capacity` (a power of two, at least the size). */
  private resize(capacity: number): void {
    const times = new Float64Array(capacity);
    const weights = this.weights === null ? null : new Float64Array(capacity);
    for (let i = 0; i < this.count; i++) {
      const slot = this.slot(i);
      times[i] = this.times[slot];
      if (weights !== null) weights[i] = this.weights![slot];
    }
    this.times = times;
    this.weights = weights;
    this.head = 0;
  }
}

interface HeldSlot {
  expiresAt: number;
  reservedTokens: number;
}

class SubjectWindows {
  readonly requests = new SlidingLog(false);
  readonly settled = new SlidingLog(true);
  readonly slots = new Map<string, HeldSlot>();

  /** Forgets what has left the windows and the slots whose holder stopped refreshing them. */
  prune(now: number): void {
    this.requests.expire(now - MINUTE_WINDOW_MS);
    this.settled.expire(now - MINUTE_WINDOW_MS);
    // forEach rather than for-of over entries: no [id, slot] pair per slot on every operation.
    this.slots.forEach((slot, id) => {
      if (slot.expiresAt <= now) this.slots.delete(id);
    });
  }

  inFlightTokens(): number {
    let sum = 0;
    for (const slot of this.slots.values()) sum += slot.reservedTokens;
    return sum;
  }

  snapshot(now: number): WindowSnapshot {
    return {
      at: now,
      requestsInMinute: this.requests.size,
      oldestRequestAt: this.requests.oldest(),
      settledTokens: this.settled.total,
      oldestSettledAt: this.settled.oldest(),
      inFlightTokens: this.inFlightTokens(),
      slotsInUse: this.slots.size,
    };
  }

  isIdle(now: number): boolean {
    this.prune(now);
    return this.requests.size === 0 && this.settled.size === 0 && this.slots.size === 0;
  }
}

/** The token window's refusal of `tokens` more in flight, or null when they fit. */
function refusalByTokens(w: SubjectWindows, tokens: number, tokensPerMinute: number, now: number): StoreRefusal | null {
  const remaining = tokensPerMinute - w.settled.total - w.inFlightTokens();
  // An estimate above the whole limit needs the whole (empty) window, not forever.
  const required = Math.min(tokens, tokensPerMinute);
  if (required <= remaining) return null;
  return { limit: 'tokens_per_minute', retryAfterMs: tokenRetryAfterMs(w.settled.entries(), required - remaining, now, MINUTE_WINDOW_MS) };
}

/** Idle subjects are swept after this many operations, so memory follows active accounts only. */
const SWEEP_EVERY_OPERATIONS = 10_000;

/**
 * Limits for a single instance: everything in this process's memory. Same semantics as the
 * Redis store (the unit tests run one table against both); also the local fallback while
 * Redis is unreachable.
 */
/** Of two refusals, the one with the longer wait (the first when equal). */
const longerWait = (current: StoreRefusal | null, candidate: StoreRefusal): StoreRefusal =>
  current === null || candidate.retryAfterMs > current.retryAfterMs ? candidate : current;

export class InMemoryLimitStore implements LimitStore {
  private readonly subjects = new Map<string, SubjectWindows>();
  private operations = 0;

  private windows(subject: string, now: number): SubjectWindows {
    if (++this.operations % SWEEP_EVERY_OPERATIONS === 0) this.sweep(now);
    let windows = this.subjects.get(subject);
    if (!windows) {
      windows = new SubjectWindows();
      this.subjects.set(subject, windows);
    }
    windows.prune(now);
    return windows;
  }

  /** Drops subjects with nothing left in any window. */
  sweep(now: number): void {
    for (const [subject, windows] of this.subjects) if (windows.isIdle(now)) this.subjects.delete(subject);
  }

  /** How many subjects are tracked (for tests of the sweep). */
  get trackedSubjects(): number {
    return this.subjects.size;
  }

  // The store's operations are promises (the shared store's are round trips); here they are
  // settled at once, without an async frame each (two of them run on every text request).
  admit(input: RequestAdmission): Promise<StoreOutcome> {
    try {
      return Promise.resolve(this.admitNow(input));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  admitNow(input: RequestAdmission): StoreOutcome {
    const { now } = input;
    const w = this.windows(input.subject, now);
    // Report the limit with the longest wait: the caller has to satisfy all of them.
    let refusal: StoreRefusal | null = null;
    if (input.requestId !== null) {
      if (input.requestsPerSecond !== null) {
        const firstInSecond = w.requests.firstIndexAfter(now - SECOND_WINDOW_MS);
        const inSecond = w.requests.size - firstInSecond;
        if (inSecond >= input.requestsPerSecond) {
          // Admission needs inSecond − limit + 1 entries gone: wait for the (inSecond − limit)-th.
          const index = firstInSecond + inSecond - input.requestsPerSecond;
          const wait = index < w.requests.size ? w.requests.timeAt(index) + SECOND_WINDOW_MS - now : SECOND_WINDOW_MS;
          refusal = longerWait(refusal, { limit: 'requests_per_second', retryAfterMs: wait });
        }
      }
      if (input.requestsPerMinute !== null && w.requests.size >= input.requestsPerMinute) {
        const index = w.requests.size - input.requestsPerMinute;
        const wait = index < w.requests.size ? w.requests.timeAt(index) + MINUTE_WINDOW_MS - now : MINUTE_WINDOW_MS;
        refusal = longerWait(refusal, { limit: 'requests_per_minute', retryAfterMs: wait });
      }
    }
    const slot = input.slot;
    const alreadyHeld = slot !== null && w.slots.has(slot.id);
    if (slot && !alreadyHeld && w.slots.size >= slot.limit) {
      // When a slot frees is unknown (a request finishing); one second is the polite poll.
      refusal = longerWait(refusal, { limit: 'concurrent_requests', retryAfterMs: SECOND_WINDOW_MS });
    }
    const tokens = slot && input.tokens ? input.tokens.count : 0;
    if (tokens > 0) {
      const tokenRefusal = refusalByTokens(w, tokens, input.tokens!.perMinute, now);
      if (tokenRefusal) refusal = longerWait(refusal, tokenRefusal);
    }
    if (refusal) return { refusal, snapshot: w.snapshot(now) };

    if (input.requestId !== null) w.requests.add(now, 1);
    if (slot) {
      const held = w.slots.get(slot.id);
      if (held) {
        held.expiresAt = Math.max(held.expiresAt, slot.expiresAt);
        held.reservedTokens += tokens;
      } else w.slots.set(slot.id, { expiresAt: slot.expiresAt, reservedTokens: tokens });
    }
    return { refusal: null, snapshot: w.snapshot(now) };
  }

  async reserveTokens(input: TokenReservation): Promise<StoreOutcome> {
    const { now } = input;
    const w = this.windows(input.subject, now);
    if (input.tokens > 0) {
      const refusal = refusalByTokens(w, input.tokens, input.tokensPerMinute, now);
      if (refusal) return { refusal, snapshot: w.snapshot(now) };
    }
    let held = w.slots.get(input.slotId);
    if (!held) {
      // The slot expired while held (a stalled heartbeat): take it back, it is in use.
      held = { expiresAt: input.slotExpiresAt, reservedTokens: 0 };
      w.slots.set(input.slotId, held);
    }
    held.reservedTokens += input.tokens;
    return { refusal: null, snapshot: w.snapshot(now) };
  }

  async settleTokens(input: TokenSettlement): Promise<WindowSnapshot> {
    return this.settle(input).snapshot(input.now);
  }

  releaseSlot(subject: string, slotId: string, settled?: SettledUsage): Promise<void> {
    try {
      // Settled in the same step, without a snapshot nobody reads.
      if (settled && settled.tokens > 0) this.settle({ subject, now: settled.at, slotId, tokens: settled.tokens });
      this.subjects.get(subject)?.slots.delete(slotId);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private settle(input: TokenSettlement): SubjectWindows {
    const w = this.windows(input.subject, input.now);
    const held = w.slots.get(input.slotId);
    if (held) held.reservedTokens = 0;
    if (input.tokens > 0) w.settled.add(input.now, input.tokens);
    return w;
  }

  async refreshSlots(slots: readonly HeldSlotRef[], _now: number, expiresAt: number): Promise<void> {
    for (const ref of slots) {
      const held = this.subjects.get(ref.subject)?.slots.get(ref.slotId);
      if (held) held.expiresAt = Math.max(held.expiresAt, expiresAt);
    }
  }

  async snapshot(subject: string, now: number): Promise<WindowSnapshot> {
    return this.windows(subject, now).snapshot(now);
  }

  async close(): Promise<void> {
    this.subjects.clear();
  }
}
