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
  /**
   * Admits a request of `subject` now: with `tokens`, its estimate is reserved in the same store
   * operation; with `slot: false`, it is only counted in the request windows (no slot taken).
   */
  admitSubject(subject: string, limits: AppliedLimits, take: { tokens: number | null; slot: boolean }): Promise<Ticket>;
  /** The same, answered at once by a store in this process's memory; null when the store answers later. */
  admitSubjectNow(subject: string, limits: AppliedLimits, take: { tokens: number | null; slot: boolean }): Ticket | null;
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
    /** Tokens the admission reserved on the slot already (admitted with the request's estimate). */
    reservedAtAdmission = 0,
  ) {
    this.reserved = reservedAtAdmission;
  }

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
      this.store.reserveTokens({
        subject: this.subject,
        now,
        slotId,
        slotExpiresAt: now + this.service.slotTtlMs,
        tokens,
        tokensPerMinute,
      }),
    );
    if (!outcome) return this.headers();
    this.snapshot = outcome.snapshot;
    if (outcome.refusal)
      throw refusalFor(this.limits, outcome, {
        requested_tokens: tokens,
        remaining_tokens: remainingTokens(tokensPerMinute, outcome.snapshot),
      });
    this.reserved += tokens;
    return this.headers();
  }

  async settleTokens(tokens: number): Promise<RateLimitHeaders> {
    await this.settle(tokens);
    return this.headers();
  }

  /**
   * settleTokens without the headers (the text endpoints read them once, for the answer).
   * Before the release (nearly always) it is settled here, at once: no promise (undefined).
   */
  settle(tokens: number): Promise<void> | undefined {
    assertTokenCount(tokens);
    if (this.limits.tokensPerMinute === null || this.slotId === null || this.settled) return undefined;
    this.settled = true;
    const now = this.service.nowMs();
    if (!this.released) {
      // The release follows (the answer's last byte): the store records both in one step. Until
      // then the reservation stands for the usage, and it is the larger of the two (an estimate
      // from above), so the window errs on the safe side for those milliseconds.
      this.settledUsage = { tokens, at: now };
      this.snapshot = settledLocally(this.snapshot, now, this.reserved, tokens);
      return undefined;
    }
    return this.settleInStore(this.slotId, now, tokens);
  }

  private async settleInStore(slotId: string, now: number, tokens: number): Promise<void> {
    this.service.windowsChanged(this.subject);
    const snapshot = await this.service.guard(this.store, () => this.store.settleTokens({ subject: this.subject, now, slotId, tokens }));
    if (snapshot) this.snapshot = snapshot;
  }

  // Not async (nor the deferred ticket's): the release is the store's promise, without a frame of its own per request.
  release(): Promise<void> {
    if (this.released || this.slotId === null) return Promise.resolve();
    this.released = true;
    return this.service.releaseHeld(this.store, this.subject, this.slotId, this.settledUsage);
  }
}

/**
 * A ticket whose admission waits for the request's token estimate (the text endpoints, once
 * the body is decoded): the request windows, the concurrency slot and the token window are
 * then checked and taken in ONE store operation, which for Redis is one round trip instead
 * of two. Before that it holds nothing. A request that fails before its estimate (a bad body,
 * an unknown model) is still counted in the request windows, by `recordUnserved`, and its
 * answer carries the headers; a subject already known to be refused was refused before the
 * body was read (AdmissionService.deferred).
 */
export class DeferredTicket {
  private ticket: Ticket | null = null;
  private admitting: Promise<Ticket> | null = null;
  private released = false;
  private refused = false;

  constructor(
    private readonly service: TicketIssuer,
    readonly subject: string,
    readonly limits: AppliedLimits,
  ) {}

  headers(): RateLimitHeaders {
    if (!this.ticket) throw new Error('headers of a request not admitted yet');
    return this.ticket.headers();
  }

  /**
   * Admits the request with `tokens` in flight (429 when a limit refuses); later calls add to the
   * reservation. Answers nothing: the headers are read once, for the answer (`headers()`).
   * Admitted at once by a store in this process's memory: no promise (undefined), and a refusal
   * is thrown here.
   */
  reserveTokens(tokens: number): Promise<void> | undefined {
    assertTokenCount(tokens);
    if (this.ticket) return this.ticket.reserveTokens(tokens).then(NOTHING);
    if (this.admitting) throw new Error('a request is admitted once');
    const take = { tokens: this.limits.tokensPerMinute === null ? null : tokens, slot: true };
    let ticket: Ticket | null;
    try {
      ticket = this.service.admitSubjectNow(this.subject, this.limits, take);
    } catch (error) {
      this.refused = true;
      throw error;
    }
    if (ticket === null) return this.admitLater(take);
    this.ticket = ticket;
    // The client left before its admission: free what the admission took.
    return this.released ? ticket.release() : undefined;
  }

  /** reserveTokens when the store answers later (Redis). */
  private async admitLater(take: { tokens: number | null; slot: boolean }): Promise<void> {
    this.admitting = this.service.admitSubject(this.subject, this.limits, take);
    try {
      this.ticket = await this.admitting;
    } catch (error) {
      this.refused = true;
      throw error;
    }
    // The client left while it was being admitted: free what the admission took.
    if (this.released) await this.ticket.release();
  }

  /** Replaces the reservation by the actual usage (nothing before admission: nothing is reserved); at once before the release. */
  settleTokens(tokens: number): Promise<void> | undefined {
    return this.ticket?.settle(tokens);
  }

  /**
   * For a request answered without being served (it failed before its token estimate): counts
   * it in the request windows, as every request is, and gives the headers for its answer.
   * Throws the refusal when the request windows are full (the answer is then that 429). Once
   * admitted, nothing more is recorded and the headers are the admission's; null when the
   * admission was refused (the refusal carries them).
   */
  async recordUnserved(): Promise<RateLimitHeaders | null> {
    if (this.refused) return null;
    // Admitted at once (an in-process store): its failure came after the admission.
    if (this.ticket && !this.admitting) return this.ticket.headers();
    if (this.admitting) {
      // Its failure was answered to the request it admitted; only that it ended matters here.
      await this.admitting.catch(() => undefined);
      return this.ticket ? this.ticket.headers() : null;
    }
    this.admitting = this.service.admitSubject(this.subject, this.limits, { tokens: null, slot: false });
    try {
      this.ticket = await this.admitting;
    } catch (error) {
      this.refused = true;
      throw error;
    }
    return this.ticket.headers();
  }

  release(): Promise<void> {
    this.released = true;
    if (this.ticket) return this.ticket.release();
    // Admission in flight: reserveTokens frees what it took once it lands.
    return Promise.resolve();
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

const NOTHING = (): void => undefined;

function assertTokenCount(tokens: number): void {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`token count must be a non-negative integer, got ${tokens}`);
}
