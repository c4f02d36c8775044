import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { KeyPrincipal } from '../shared/principal';
import type { Clock } from '../shared/clock';
import type { HeldSlotRef, LimitStore, RequestAdmission, SettledUsage, StoreOutcome } from './store';
import { concurrencyRefusal, refusalFor } from './refusals';
import { DeferredTicket, Ticket, type AdmissionTicket } from './ticket';
import { PendingReleases } from './pending-releases';
import { KnownRefusals } from './known-refusals';
import type { TierLookup } from './tier-lookup';
import { limitsOfPlan, limitsOfTier, subjectOf, subjectOfAccount } from './applied-limits';
import { rateLimitHeaders, remainingTokens, type AppliedLimits, type RateLimitHeaders } from './windows';

/**
 * Admission control: the pipeline step that admits a request under its rate and concurrency limits.
 *
 * Prepaid keys are limited per ACCOUNT by its tier: requests per second and per minute,
 * tokens per minute and concurrent requests. Plan-billed keys are limited per USER by their
 * plan's requests per minute only. All windows are rolling (see windows.ts).
 *
 * Outage policy: FAIL-OPEN TO LOCAL LIMITS. When the shared store (Redis) fails, admission
 * goes on against an in-process store on each instance, with a logged warning: traffic keeps
 * flowing and each instance still enforces the tier limits on what it sees (so the account
 * can get up to N× its limits across N instances while Redis is down), never a 500. Ticket
 * operations on a broken store are skipped (slots then expire by their TTL).
 *
 * Round trips to a shared store: a text request is admitted once its body is decoded, with its
 * token estimate, so every check and the take (request windows, slot, tokens in flight) are one
 * store operation (DeferredTicket); other requests are admitted before their body. The end of a
 * request records its settled usage with the release of its slot in one operation, which the
 * Redis store batches with the next operation it sends (redis-limit-store.ts). While a request window is known to be full (a refusal said
 * until when), further requests of that subject are refused here without asking the store:
 * request windows only fill up until their entries leave at known times, so the answer,
 * headers included, is the one the store would give, unless another instance changes it.
 */

/** The few logger methods admission uses (pino's Logger fits). */
export interface AdmissionLogger {
  warn(details: object, message: string): void;
}

export interface AdmissionServiceOptions {
  store: LimitStore;
  /** Used while `store` fails; without one, store failures propagate. */
  fallbackStore?: LimitStore;
  tiers: TierLookup;
  clock: Clock;
  log?: AdmissionLogger;
  /**
   * A held slot counts until this long after its last heartbeat (default 30 s); holders
   * refresh every third of it, so only slots of a crashed or stalled instance ever expire.
   */
  slotTtlMs?: number;
  /** How often held slots are refreshed; default a third of the slot TTL. */
  heartbeatIntervalMs?: number;
  /** After a store failure, how long to admit locally before trying the store again (default 1 s). */
  storeRetryMs?: number;
}

/** A concurrency slot held by a long job (e.g. a running video), released when the job ends. */
export interface SlotHold {
  readonly accountId: string;
  readonly slotId: string;
  release(): Promise<void>;
}

const WARN_EVERY_MS = 10_000;

interface HeldSlot extends HeldSlotRef {
  store: LimitStore;
}

/** One admission as asked of the store. */
interface Admission {
  subject: string;
  limits: AppliedLimits;
  input: RequestAdmission;
}

export class AdmissionService {
  private readonly store: LimitStore;
  private readonly fallback: LimitStore | null;
  private readonly log: AdmissionLogger | null;
  readonly slotTtlMs: number;
  private readonly storeRetryMs: number;
  private readonly held = new Map<string, HeldSlot>();
  /** Slots to free in the shared store once it answers again (pending-releases.ts). */
  private readonly pendingReleases: PendingReleases;
  /** Recent request-window refusals, answered again without a round trip (known-refusals.ts). */
  private readonly knownRefusals = new KnownRefusals();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly idPrefix = randomBytes(5).toString('hex');
  private sequence = 0;
  private storeDownUntil = 0;
  private lastWarnAt = -Infinity;

  constructor(private readonly options: AdmissionServiceOptions) {
    this.store = options.store;
    this.fallback = options.fallbackStore ?? null;
    this.log = options.log ?? null;
    this.slotTtlMs = options.slotTtlMs ?? 30_000;
    this.storeRetryMs = options.storeRetryMs ?? 1_000;
    this.pendingReleases = new PendingReleases(this.storeRetryMs, () => this.withStore(async () => undefined));
    const heartbeatMs = options.heartbeatIntervalMs ?? Math.max(100, Math.floor(this.slotTtlMs / 3));
    this.heartbeat = setInterval(() => void this.refreshHeldSlots().catch(() => undefined), heartbeatMs);
    this.heartbeat.unref();
  }

  /** The limits that apply to the key's subject (tier lookup is cached). */
  async limitsFor(principal: KeyPrincipal): Promise<AppliedLimits> {
    return principal.kind === 'prepaid' ? limitsOfTier(await this.options.tiers.tierOf(principal.accountId)) : limitsOfPlan(principal);
  }

  /**
   * Admits one API request: checks RPS, RPM and concurrency atomically, then records the
   * request and takes a slot. Refusal: RateLimitRefusal, and nothing recorded.
   */
  async admit(principal: KeyPrincipal): Promise<AdmissionTicket> {
    const limits = await this.limitsFor(principal);
    return this.admitSubject(subjectOf(principal), limits, { tokens: null, slot: true });
  }

  /**
   * A ticket for a request whose admission waits for its token estimate (DeferredTicket): no
   * store operation now. What is answered here, before the request's body is read, is the
   * refusal of a subject known to be over its request windows (RateLimitRefusal).
   */
  // Not an async function: with the tier cached (nearly every request) no promise is awaited on the way.
  deferred(principal: KeyPrincipal): Promise<DeferredTicket> {
    const tier = principal.kind === 'prepaid' ? this.options.tiers.cachedTierOf(principal.accountId) : undefined;
    if (tier === undefined && principal.kind === 'prepaid')
      return this.limitsFor(principal).then((limits) => this.deferredWith(principal, limits));
    try {
      return Promise.resolve(this.deferredWith(principal, tier ? limitsOfTier(tier) : limitsOfPlan(principal)));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private deferredWith(principal: KeyPrincipal, limits: AppliedLimits): DeferredTicket {
    const subject = subjectOf(principal);
    const known = this.knownRefusals.answer(subject, limits, this.options.clock.nowMs());
    if (known) throw refusalFor(limits, known);
    return new DeferredTicket(this, subject, limits);
  }

  /** @internal for tickets (TicketIssuer.admitSubject). */
  admitSubject(subject: string, limits: AppliedLimits, take: { tokens: number | null; slot: boolean }): Promise<Ticket> {
    try {
      const admission = this.admission(subject, limits, take);
      return this.withStore((s) => s.admit(admission.input)).then(({ value, store, sharedFailed }) =>
        this.admitted(admission, value, store, sharedFailed),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal for tickets (TicketIssuer.admitSubjectNow): admitSubject answered at once when the
   * store is this process's own and nothing to fall back to (one instance, no Redis): no promise,
   * no async step on the way to the vendor. Null: the store answers later (use admitSubject).
   */
  admitSubjectNow(subject: string, limits: AppliedLimits, take: { tokens: number | null; slot: boolean }): Ticket | null {
    const { store } = this;
    if (this.fallback !== null || store.admitNow === undefined) return null;
    const admission = this.admission(subject, limits, take);
    return this.admitted(admission, store.admitNow(admission.input), store, false);
  }

  /** What admitting a request of `subject` asks of the store (a known refusal is thrown here). */
  private admission(subject: string, limits: AppliedLimits, take: { tokens: number | null; slot: boolean }): Admission {
    const at = this.options.clock.nowMs();
    const known = this.knownRefusals.answer(subject, limits, at);
    if (known) throw refusalFor(limits, known);
    const id = this.nextId();
    const slot =
      !take.slot || limits.concurrentRequests === null ? null : { id, limit: limits.concurrentRequests, expiresAt: at + this.slotTtlMs };
    const tokens =
      slot && take.tokens !== null && limits.tokensPerMinute !== null
        ? { count: take.tokens, perMinute: limits.tokensPerMinute }
        : undefined;
    if (tokens) this.windowsChanged(subject);
    return {
      subject,
      limits,
      input: {
        subject,
        now: at,
        requestId: id,
        requestsPerSecond: limits.requestsPerSecond,
        requestsPerMinute: limits.requestsPerMinute,
        slot,
        tokens,
      },
    };
  }

  /** The store's answer to an admission: its ticket, or its refusal (thrown). */
  private admitted(admission: Admission, outcome: StoreOutcome, store: LimitStore, sharedFailed: boolean): Ticket {
    const { subject, limits, input } = admission;
    const { slot, tokens } = input;
    if (sharedFailed && slot) this.pendingReleases.add(subject, slot.id);
    if (outcome.refusal) {
      this.knownRefusals.remember(subject, limits, outcome);
      const byTokens = tokens && outcome.refusal.limit === 'tokens_per_minute';
      throw refusalFor(
        limits,
        outcome,
        byTokens ? { requested_tokens: tokens.count, remaining_tokens: remainingTokens(tokens.perMinute, outcome.snapshot) } : undefined,
      );
    }
    if (slot) this.held.set(slot.id, { subject, slotId: slot.id, store });
    return new Ticket(this, store, subject, limits, slot ? slot.id : null, outcome.snapshot, tokens?.count ?? 0);
  }

  /**
   * Takes a concurrency slot of the account for a long job (no request recorded). With a
   * stable `slotId` (e.g. `video:<id>`), taking it again is idempotent, so a job resumed
   * after a restart does not count twice. Refusal: 429 `api_concurrency_limit`.
   */
  async acquireSlot(accountId: string, options: { slotId?: string } = {}): Promise<SlotHold> {
    const limits = limitsOfTier(await this.options.tiers.tierOf(accountId));
    const subject = subjectOfAccount(accountId);
    const slotId = options.slotId ?? this.nextId();
    const at = this.options.clock.nowMs();
    this.windowsChanged(subject);
    const {
      value: outcome,
      store,
      sharedFailed,
    } = await this.withStore((s) =>
      s.admit({
        subject,
        now: at,
        requestId: null,
        requestsPerSecond: null,
        requestsPerMinute: null,
        slot: { id: slotId, limit: limits.concurrentRequests ?? 0, expiresAt: at + this.slotTtlMs },
      }),
    );
    if (sharedFailed) this.pendingReleases.add(subject, slotId);
    if (outcome.refusal) throw concurrencyRefusal(limits, null);
    this.held.set(slotId, { subject, slotId, store });
    let released = false;
    return {
      accountId,
      slotId,
      release: async () => {
        if (released) return;
        released = true;
        await this.releaseHeld(store, subject, slotId);
      },
    };
  }

  /**
   * Stops this instance's heartbeat for a slot without freeing it: a long job between two of
   * its steps (the next may run on another instance) keeps it until its TTL unless refreshed.
   */
  forgetSlot(slotId: string): void {
    this.held.delete(slotId);
  }

  /** Slots of the account held right now, on every instance (for operators and tests). */
  async slotsInUse(accountId: string): Promise<number> {
    const at = this.options.clock.nowMs();
    return (await this.withStore((s) => s.snapshot(subjectOfAccount(accountId), at))).value.slotsInUse;
  }

  /** The header values for a key right now, recording nothing. */
  async currentHeaders(principal: KeyPrincipal): Promise<RateLimitHeaders> {
    const limits = await this.limitsFor(principal);
    const at = this.options.clock.nowMs();
    return rateLimitHeaders(limits, (await this.withStore((s) => s.snapshot(subjectOf(principal), at))).value);
  }

  /** Heartbeat: pushes the expiry of every slot this instance holds (runs on a timer). */
  async refreshHeldSlots(): Promise<void> {
    if (this.held.size === 0) return;
    const now = this.options.clock.nowMs();
    const byStore = new Map<LimitStore, HeldSlotRef[]>();
    for (const slot of this.held.values()) {
      const refs = byStore.get(slot.store) ?? [];
      refs.push({ subject: slot.subject, slotId: slot.slotId });
      byStore.set(slot.store, refs);
    }
    await Promise.all([...byStore].map(([store, refs]) => this.guard(store, () => store.refreshSlots(refs, now, now + this.slotTtlMs))));
  }

  /** Stops the heartbeat and frees the slots still held (graceful shutdown, after draining). */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.pendingReleases.close();
    await Promise.all([...this.held.values()].map((slot) => this.releaseHeld(slot.store, slot.subject, slot.slotId)));
    this.options.tiers.close();
    await this.store.close();
    await this.fallback?.close();
  }

  /** @internal for tickets: frees a slot, recording the request's settled usage with it when given. */
  // Not an async function: with no shared store to fall back from, the release is the store's own promise.
  releaseHeld(store: LimitStore, subject: string, slotId: string, settled?: SettledUsage): Promise<void> {
    this.held.delete(slotId);
    this.windowsChanged(subject);
    const released = store.releaseSlot(subject, slotId, settled);
    if (store === this.fallback || !this.fallback) return released;
    return released.catch((error: unknown) => {
      this.noteStoreFailure(error);
      this.pendingReleases.add(subject, slotId, settled);
    });
  }

  /** @internal for tickets: this instance changed the subject's windows, so a known refusal may no longer hold. */
  windowsChanged(subject: string): void {
    this.knownRefusals.forget(subject);
  }

  /** @internal for tickets */
  nowMs(): number {
    return this.options.clock.nowMs();
  }

  /**
   * Runs an operation of an existing ticket on the store that admitted it. Failure of the
   * shared store is logged and skipped (fail-open): undefined.
   */
  async guard<T>(store: LimitStore, operation: () => Promise<T>): Promise<T | undefined> {
    try {
      return await operation();
    } catch (error) {
      if (store === this.fallback || !this.fallback) throw error;
      this.noteStoreFailure(error);
      return undefined;
    }
  }

  /** `sharedFailed`: the shared store was asked and failed (it may have done the operation all the same). */
  private withStore<T>(operation: (store: LimitStore) => Promise<T>): Promise<{ value: T; store: LimitStore; sharedFailed: boolean }> {
    // One store, so nothing to fall back to or replay (releases wait only for a shared store): no async frame.
    if (!this.fallback) {
      const { store } = this;
      return operation(store).then((value) => ({ value, store, sharedFailed: false }));
    }
    return this.withStores(operation);
  }

  private async withStores<T>(
    operation: (store: LimitStore) => Promise<T>,
  ): Promise<{ value: T; store: LimitStore; sharedFailed: boolean }> {
    if (this.fallback && performance.now() < this.storeDownUntil)
      return { value: await operation(this.fallback), store: this.fallback, sharedFailed: false };
    try {
      if (this.pendingReleases.size > 0) await this.pendingReleases.flush(this.store);
      return { value: await operation(this.store), store: this.store, sharedFailed: false };
    } catch (error) {
      if (!this.fallback) throw error;
      this.noteStoreFailure(error);
      return { value: await operation(this.fallback), store: this.fallback, sharedFailed: true };
    }
  }

  private noteStoreFailure(error: unknown): void {
    const now = performance.now();
    this.storeDownUntil = now + this.storeRetryMs;
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = now;
    this.log?.warn(
      { err: String((error as Error)?.message ?? error) },
      'rate-limit store unavailable: admitting against per-instance limits (fail-open)',
    );
  }

  private nextId(): string {
    return `${this.idPrefix}.${(this.sequence++).toString(36)}`;
  }
}
