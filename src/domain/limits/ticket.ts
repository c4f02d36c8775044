import type { LimitStore, SettledUsage } from './store';
import { refusalFor } from './refusals';
import { rateLimitHeaders, remainingTokens, type AppliedLimits, type RateLimitHeaders, type WindowSnapshot } from './windows';

/** One admitted request: its concurrency slot, its token reservation and its header values. */
export interface AdmissionTicket {
  readonly subject: string;
  readonly limits: AppliedLimits;
  /** The current header values (as of the last admit/reserve/settle). */
  headers(): RateLimitHeaders;
  /**
   * Adds `tokens` (an estimate: prompt + output limit) to the in-flight part of the token
   * window. Refuses (429 `rate_limited`, limit `tokens_per_minute`) when they do not fit in
   * limit − (settled in the last 60 s + in flight); an estimate above the whole limit needs
   * an otherwise empty window. Nothing for plan keys, or after release or settlement.
   */
  reserveTokens(tokens: number): Promise<RateLimitHeaders>;
  /** Replaces the reservation by the actual usage, counted from now. Once per ticket; later calls do nothing. */
  settleTokens(tokens: number): Promise<RateLimitHeaders>;
  /** Frees the concurrency slot and any unsettled reservation; idempotent. */
  release(): Promise<void>;
}

/** What a ticket needs of the admission service that issued it. */
export interface TicketIssuer {
  readonly slotTtlMs: number;
  nowMs(): number;
  windowsChanged(subject: string): void;
  guard<T>(store: LimitStore, operation: () => Promise<T>): Promise<T | undefined>;
  releaseHeld(store: LimitStore, subject: string, slotId: string, settled?: SettledUsage): Promise<void>;
}

export class Ticket implements AdmissionTicket {
  private released = false;
  private settled = false;
  /** Tokens this ticket has in flight in the store (its accepted reservations). */
  private reserved = 0;
  /** Usage settled before the release: recorded by the store with the release, in one step. */
  private settledUsage: SettledUsage | undefined;

  constructor(
    private readonly service: TicketIssuer,
    private readonly store: LimitStore,
    readonly subject: string,
    readonly limits: AppliedLimits,
    private readonly slotId: string | null,
    private snapshot: WindowSnapshot,
  ) {}

  headers(): RateLimitHeaders {
    return rateLimitHeaders(this.limits, this.snapshot);
  }

  async reserveTokens(tokens: number): Promise<RateLimitHeaders> {
    assertTokenCount(tokens);
    const tokensPerMinute = this.limits.tokensPerMinute;
    if (tokensPerMinute === null || this.slotId === null || this.released || this.settled) return this.headers();
    const slotId = this.slotId;
    const now = this.service.nowMs();
    this.service.windowsChanged(this.subject);
    const outcome = await this.service.guard(this.store, () =>
      this.store.reserveTokens({ subject: this.subject, now, slotId, slotExpiresAt: now + this.service.slotTtlMs, tokens, tokensPerMinute }),
    );
    if (!outcome) return this.headers();
    this.snapshot = outcome.snapshot;
    if (outcome.refusal) throw refusalFor(this.limits, outcome, { requested_tokens: tokens, remaining_tokens: remainingTokens(tokensPerMinute, outcome.snapshot) });
    this.reserved += tokens;
    return this.headers();
  }

  async settleTokens(tokens: number): Promise<RateLimitHeaders> {
    assertTokenCount(tokens);
    if (this.limits.tokensPerMinute === null || this.slotId === null || this.settled) return this.headers();
    this.settled = true;
    const slotId = this.slotId;
    const now = this.service.nowMs();
    if (!this.released) {
      // The release follows (the answer's last byte): the store records both in one step. Until
      // then the reservation stands for the usage, and it is the larger of the two (an estimate
      // from above), so the window errs on the safe side for those milliseconds.
      this.settledUsage = { tokens, at: now };
      this.snapshot = settledLocally(this.snapshot, now, this.reserved, tokens);
      return this.headers();
    }
    this.service.windowsChanged(this.subject);
    const snapshot = await this.service.guard(this.store, () => this.store.settleTokens({ subject: this.subject, now, slotId, tokens }));
    if (snapshot) this.snapshot = snapshot;
    return this.headers();
  }

  async release(): Promise<void> {
    if (this.released || this.slotId === null) return;
    this.released = true;
    await this.service.releaseHeld(this.store, this.subject, this.slotId, this.settledUsage);
  }
}

/** The windows as this ticket last saw them, with its reservation replaced by its settled usage at `now`. */
function settledLocally(s: WindowSnapshot, now: number, reserved: number, tokens: number): WindowSnapshot {
  return {
    ...s,
    at: now,
    inFlightTokens: Math.max(0, s.inFlightTokens - reserved),
    settledTokens: s.settledTokens + tokens,
    oldestSettledAt: tokens > 0 && s.oldestSettledAt === null ? now : s.oldestSettledAt,
  };
}

function assertTokenCount(tokens: number): void {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`token count must be a non-negative integer, got ${tokens}`);
}
