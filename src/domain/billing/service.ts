import { nextUtcMonthStart, unixSeconds, utcMonthKey, type Clock } from '../shared/clock';
import { insufficientBalance, keySpendLimitReached, notFound, planAllowanceExhausted, type ApiError } from '../shared/errors';
import { TOPIC_KEY_EVENTS, type EventBus } from '../shared/events';
import type { IdGenerator } from '../shared/ids';
import { runAutoTopUp, validateAutoTopUp, type AutoTopUpDeps, type AutoTopUpSettings, type AutoTopUpStore } from './auto-top-up';
import type { HoldClosed, HoldStore } from './hold-store';
import type { PaymentPort } from './payments';
import type { KeyLimitSpend, SpendLimitStore } from './spend-limit-store';
import {
  DEFAULT_HOLD_TTL_MS,
  type BillingPrincipal,
  type HoldOutcome,
  type HoldRequest,
  type Overage,
  type OverageObserver,
  type RefusalReason,
  type ReleaseInput,
  type SettleInput,
} from './hold-requests';
import { recordedTokenCounts, usageCount, type UsageMeta } from './usage-counts';
import { SWEEP_BATCH_SIZE } from './sweeper';
import {
  readUsagePage,
  keyMonthSpendView,
  toHoldView,
  type AccountAudit,
  type BillingReads,
  type HoldView,
  type KeyMonthSpendView,
  type UsageFilter,
  type UsageRecordPage,
  type UsageRecordView,
} from './queries';

/** Thrown inside the reservation transaction to roll it back; mapped to a 402 outside. */
class Refusal extends Error {
  constructor(readonly reason: RefusalReason) {
    super(reason);
  }
}

/**
 * Money: holds before the provider call, exact settlement after, release on failure, sweeping
 * of orphaned holds, automatic top-up. Invariants, on any number of instances:
 * - a reservation takes all of its constraints or none (one transaction of conditional UPDATEs);
 * - available balance, key month limit and plan allowance are never exceeded by holds;
 * - a hold is settled or released at most once (the hold's status is claimed first);
 * - balance = Σ ledger; reserved = Σ active prepaid holds.
 *
 * Month rollover: a hold books against the UTC month it was reserved in (recorded on the
 * hold). A request admitted on 30 November at 23:59:59.999 and settled in December gives its
 * hold back to, and adds its charge to, November's key and plan counters; December's start
 * empty. The charge itself reaches the balance when it is settled.
 */
export class BillingService {
  constructor(
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
    private readonly payments: PaymentPort,
    private readonly holds: HoldStore,
    private readonly reads: BillingReads,
    private readonly topUps: AutoTopUpStore,
    private readonly spendLimits: SpendLimitStore,
    /** Told of each settlement whose cost was above its hold (here and in budget leases). */
    private readonly onOverage: OverageObserver = () => undefined,
  ) {}

  /** A settlement was charged up to its hold and the excess recorded as overage: tell the operator. */
  overageObserved(overage: Overage): void {
    this.onOverage(overage);
  }

  /**
   * Reserves `amountMicro` before a provider is called, atomically: (a) the prepaid balance,
   * (b) the key's month spend within its current limit, (c) a plan key's allowance; nothing is
   * taken when any refuses. Plan-billed keys skip (a): they draw on the plan, not the balance.
   * Refusals: 402 `api_insufficient_balance`, `api_key_spend_limit_reached`, `plan_allowance_exhausted`.
   */
  async reserveHold(request: HoldRequest): Promise<HoldView> {
    if (request.amountMicro < 0n) throw new RangeError('a hold amount cannot be negative');
    const ttlMs = request.ttlMs ?? DEFAULT_HOLD_TTL_MS[request.purpose];
    if (!(ttlMs > 0)) throw new RangeError('a hold needs a positive TTL');
    const { principal } = request;
    if (principal.kind === 'plan' && principal.userId === null) {
      throw planAllowanceExhausted(
        0n,
        0n,
        unixSeconds(nextUtcMonthStart(this.clock.now())),
        'This plan-billed key has no user plan to draw on.',
      );
    }
    const taken = await this.tryTakeHold(request, ttlMs);
    if (!(taken instanceof Refusal)) return taken;
    if (taken.reason === 'balance' && (await this.topUpBeforeRefusing(principal.accountId))) {
      const retried = await this.tryTakeHold(request, ttlMs);
      if (!(retried instanceof Refusal)) return retried;
      throw await this.refusalError(retried.reason, request);
    }
    throw await this.refusalError(taken.reason, request);
  }

  private async tryTakeHold(request: HoldRequest, ttlMs: number): Promise<HoldView | Refusal> {
    try {
      return await this.takeHold(request, ttlMs);
    } catch (error) {
      if (error instanceof Refusal) return error;
      throw error;
    }
  }

  private async takeHold(request: HoldRequest, ttlMs: number): Promise<HoldView> {
    const now = this.clock.now();
    const month = utcMonthKey(now);
    const { principal } = request;
    const planUserId = principal.kind === 'plan' ? principal.userId : null;
    const hold = {
      id: this.ids.next('hold'),
      accountId: principal.accountId,
      keyId: principal.keyId,
      planUserId,
      month,
      purpose: request.purpose,
      model: request.model,
      amountMicro: request.amountMicro,
      expiresAt: new Date(now.getTime() + ttlMs),
      createdAt: now,
    };
    const refusal = await this.holds.takeHold(hold);
    if (refusal !== null) throw new Refusal(refusal);
    return { ...hold, status: 'active', chargedMicro: null, closedAt: null };
  }

  /**
   * A balance refusal tops up first when automatic top-up is on: an account that ran dry would
   * otherwise never settle again to trigger it. Off (the common case): one read, no transaction.
   */
  async topUpBeforeRefusing(accountId: string): Promise<boolean> {
    const setting = await this.reads.autoTopUp(accountId);
    if (setting?.thresholdMicro == null || setting.amountMicro === null) return false;
    const outcome = await runAutoTopUp(this.autoTopUpDeps(), accountId);
    return outcome.status === 'credited';
  }

  async refusalError(reason: RefusalReason, request: HoldRequest): Promise<ApiError> {
    const now = this.clock.now();
    const resetsAt = nextUtcMonthStart(now);
    const { principal } = request;
    if (reason === 'balance') {
      return insufficientBalance(request.amountMicro, ((await this.reads.availableMicro(principal.accountId)) ?? 0n).toString());
    }
    if (reason === 'plan_allowance') {
      const use =
        principal.userId === null
          ? { allowanceMicro: 0n, usedMicro: 0n }
          : await this.reads.planAllowanceUse(principal.userId, utcMonthKey(now));
      return planAllowanceExhausted(use.allowanceMicro, use.usedMicro, unixSeconds(resetsAt));
    }
    const { limitMicro, spentMicro } = await this.recordSpendLimitReached(principal, now);
    return keySpendLimitReached(limitMicro, spentMicro, unixSeconds(resetsAt));
  }

  /**
   * The first refusal of a key in a month writes a `spend_limit_reached` key event, exactly
   * once even when many requests are refused at once (see SpendLimitStore). It commits although
   * the request is refused, and is published after commit.
   */
  private async recordSpendLimitReached(principal: BillingPrincipal, now: Date): Promise<KeyLimitSpend> {
    const resetsAt = unixSeconds(nextUtcMonthStart(now));
    const { spend, event } = await this.spendLimits.recordLimitReached(
      principal.keyId,
      utcMonthKey(now),
      now,
      ({ limitMicro, spentMicro }) => ({
        id: this.ids.next('kev'),
        keyId: principal.keyId,
        accountId: principal.accountId,
        kind: 'spend_limit_reached',
        actorUserId: null,
        data: { limit_micro: limitMicro.toString(), spent_micro: spentMicro.toString(), resets_at: resetsAt },
        createdAt: now,
      }),
    );
    if (event) this.bus.publish(TOPIC_KEY_EVENTS, event);
    return spend;
  }

  /**
   * Charges `costMicro` (the provider's total) up to the hold and releases the rest of it:
   * balance −= charge and reserved −= hold (prepaid), the hold's month counters likewise, one
   * ledger row (prepaid, charge above zero) and one usage record. A cost above the hold (a vendor
   * reporting more than the request could use) is charged up to the hold; the excess is the usage
   * record's overage, charged to no one, and reported (docs/billing.md, Overage). Idempotent: a
   * second call changes nothing and returns `applied: false`. May then top the account up (see
   * runAutoTopUp).
   */
  async settleHold(holdId: string, input: SettleInput): Promise<HoldOutcome> {
    if (input.costMicro < 0n) throw new RangeError('a charge cannot be negative');
    const now = this.clock.now();
    const usage: UsageMeta = {
      usage: input.usage,
      status: input.status ?? 'ok',
      latencyMs: input.latencyMs ?? 0,
      requestId: input.requestId ?? null,
      deployment: input.deployment ?? null,
    };
    const closed = await this.closeHold(holdId, 'settled', input.costMicro, now, usage);
    if (!closed.applied) return this.alreadyClosed(holdId);
    if (closed.overageMicro > 0n) {
      this.onOverage({
        requestId: usage.requestId,
        accountId: closed.accountId!,
        keyId: closed.keyId,
        model: closed.model ?? '',
        holdMicro: closed.holdMicro ?? 0n,
        costMicro: input.costMicro,
        chargedMicro: closed.chargedMicro,
        overageMicro: closed.overageMicro,
      });
    }
    const belowThreshold = !closed.planBilled && closed.thresholdMicro !== null && (closed.balanceMicro ?? 0n) < closed.thresholdMicro;
    const autoTopUp = belowThreshold ? await runAutoTopUp(this.autoTopUpDeps(), closed.accountId!) : null;
    return { holdId, applied: true, status: 'settled', chargedMicro: closed.chargedMicro, autoTopUp };
  }

  /** Releases a hold that delivered nothing (provider failure, timeout, dropped client): no charge. Idempotent. */
  async releaseHold(holdId: string, input: ReleaseInput = {}): Promise<HoldOutcome> {
    const now = this.clock.now();
    const closed = await this.closeHold(
      holdId,
      'released',
      0n,
      now,
      input.recordFailure
        ? {
            usage: input.usage,
            status: 'failed',
            latencyMs: input.latencyMs ?? 0,
            requestId: input.requestId ?? null,
            deployment: input.deployment ?? null,
          }
        : null,
    );
    if (!closed.applied) return this.alreadyClosed(holdId);
    return { holdId, applied: true, status: 'released', chargedMicro: 0n, autoTopUp: null };
  }

  /** Settles or releases the hold in one step (see HoldStore); the usage record when there is one. */
  private closeHold(
    holdId: string,
    status: 'settled' | 'released',
    costMicro: bigint,
    now: Date,
    usage: UsageMeta | null,
  ): Promise<HoldClosed> {
    const u = usage?.usage ?? {};
    return this.holds.closeHold({
      holdId,
      status,
      costMicro,
      at: now,
      ledgerId: this.ids.next('led'),
      usage: usage && {
        id: this.ids.next('use'),
        status: usage.status,
        requestId: usage.requestId,
        ...recordedTokenCounts(u),
        images: usageCount(u.images, 'images'),
        videoSeconds: usageCount(u.videoSeconds, 'videoSeconds'),
        latencyMs: usageCount(Math.round(usage.latencyMs ?? 0), 'latencyMs'),
        deployment: usage.deployment ?? null,
      },
    });
  }

  private async alreadyClosed(holdId: string): Promise<HoldOutcome> {
    const hold = await this.getHold(holdId);
    if (!hold) throw notFound(`No hold '${holdId}'.`);
    if (hold.status === 'active') throw new Error(`hold ${holdId} is still active after a failed close`);
    return { holdId, applied: false, status: hold.status, chargedMicro: hold.chargedMicro ?? 0n, autoTopUp: null };
  }

  /** Keeps a long-running request's hold from being swept; false when it is no longer active. */
  async extendHold(holdId: string, ttlMs: number): Promise<boolean> {
    const expiresAt = new Date(this.clock.nowMs() + ttlMs);
    return this.holds.extendExpiry(holdId, expiresAt);
  }

  /** Releases every active hold whose expiry has passed (a process died mid-request); returns how many. */
  async sweepExpiredHolds(now: Date = this.clock.now()): Promise<number> {
    let total = 0;
    for (;;) {
      const released = await this.holds.releaseExpired(now, SWEEP_BATCH_SIZE);
      total += released;
      if (released < SWEEP_BATCH_SIZE) return total;
    }
  }

  async getAutoTopUp(accountId: string): Promise<AutoTopUpSettings> {
    const setting = await this.reads.autoTopUp(accountId);
    if (!setting) throw notFound(`No account '${accountId}'.`);
    return setting;
  }

  /** Turns automatic top-up on (threshold 0..$100,000, amount $1..$100,000) or off (null). */
  async setAutoTopUp(accountId: string, settings: { thresholdMicro: bigint; amountMicro: bigint } | null): Promise<AutoTopUpSettings> {
    const valid = validateAutoTopUp(settings);
    if (!(await this.topUps.saveSettings(accountId, valid))) throw notFound(`No account '${accountId}'.`);
    return valid;
  }

  /** Newest first, at most 200. */
  async listActiveHolds(accountId: string): Promise<HoldView[]> {
    return (await this.reads.listActiveHolds(accountId, 200)).map(toHoldView);
  }

  async getHold(holdId: string): Promise<HoldView | null> {
    const hold = await this.reads.findHold(holdId);
    return hold ? toHoldView(hold) : null;
  }

  /** `month` defaults to the current UTC month; 404 `not_found` when the key is not the account's. */
  async getKeyMonthSpend(accountId: string, keyId: string, month: string = utcMonthKey(this.clock.now())): Promise<KeyMonthSpendView> {
    const spend = await this.reads.keyMonthSpend(accountId, keyId, month);
    if (!spend) throw notFound(`No key '${keyId}' in this account.`);
    return keyMonthSpendView(keyId, month, spend);
  }

  /**
   * Usage records (the request log) of an account, newest first, filtered by key, model, status
   * and time range. The cursor is a record id; its position is looked up, so pages stay stable
   * while new records arrive, and each page is one index range read however deep (keyset).
   */
  async listUsageRecords(accountId: string, filter: UsageFilter): Promise<UsageRecordPage> {
    return readUsagePage(this.reads, accountId, filter);
  }

  /** One usage record of the account, by its id or its request id; null when there is none. */
  findUsageRecord(accountId: string, by: { id: string } | { requestId: string }): Promise<UsageRecordView | null> {
    return this.reads.findUsageRecord(accountId, by);
  }

  /** balance vs Σ ledger and reserved vs Σ active holds, read in one statement. */
  async auditAccount(accountId: string): Promise<AccountAudit> {
    const sums = await this.reads.accountSums(accountId);
    if (!sums) throw notFound(`No account '${accountId}'.`);
    return { ...sums, consistent: sums.balanceMicro === sums.ledgerSumMicro && sums.reservedMicro === sums.activeHoldsMicro };
  }

  autoTopUpDeps(): AutoTopUpDeps {
    return { topUps: this.topUps, payments: this.payments, ids: this.ids, clock: this.clock };
  }
}
