import { utcMonthKeyOfMs, type Clock } from '../shared/clock';
import { TOPIC_BUDGET_PRESSURE, type EventBus } from '../shared/events';
import type { IdGenerator } from '../shared/ids';
import { runAutoTopUp } from './auto-top-up';
import type { HoldPurpose } from './entities';
import { chargeWithinHold } from './pricing';
import { LeaseOpWriter, type SettlementBacklog } from './lease-op-writer';
import { LeaseLifecycle } from './lease-lifecycle';
import { unavailable } from '../shared/errors';
import {
  carveHold,
  claimHold,
  inFlightOf,
  maxBig,
  NOTHING,
  roomyLease,
  SettlementListener,
  settleOpOf,
  sharesConstraint,
  type Budget,
  type SettlementFailed,
  type Lease,
  type LeasedHold,
  type OpenHold,
} from './lease-budgets';
import type { LeaseOpResult, LeaseStore } from './lease-store';
import { DEFAULT_HOLD_TTL_MS, type BillingPrincipal, type ReleaseInput, type RefusalReason, type SettleInput } from './hold-requests';
import type { BillingService } from './service';

/**
 * Budget leases: the request path's reservations without a database round trip.
 *
 * A reservation per request in PostgreSQL costs a round trip and a commit before the vendor is
 * called, and every request of one account queues on that account's row. Instead an instance
 * takes a *lease*: one conditional step (tollgate_take_lease) reserves a slice of the balance,
 * of the key's month limit and of the plan allowance, exactly as a hold does (a lease is a
 * hold with purpose `lease`). Request holds are then carved out of the lease in memory, and
 * their settlements are written in batches (tollgate_apply_lease_ops): one statement and one
 * commit for everything that finished while the previous batch was being written.
 *
 * What stays true, on any number of instances:
 * - money is never spent beyond the balance, key limit or plan allowance: a request runs only
 *   inside a lease, and a lease is taken under the same conditional checks as a hold;
 * - a request is charged at most once: its settlement writes its usage record (unique per
 *   request hold), which is its claim, and its ledger row in one transaction. A request hold
 *   is never a row: it lives in memory from carve to settlement;
 * - a dead instance's leases expire (TTL, renewed while the instance lives) and the sweeper
 *   releases them; committed charges stay booked, unfinished requests cost nothing, and
 *   answered charges not yet committed are lost: never more than the settlement backlog's
 *   limit (admission waits while it is full, and so does the end of an answer).
 *
 * The price is slack: money reserved by a lease but not yet used by a request. A lease takes at
 * most a quarter of what is left (tollgate_take_lease), an idle lease is given back after
 * LEASE_IDLE_MS, and a refusal first gives back this instance's slack and asks every instance
 * (event bus) to do the same, then retries with an exact reservation before answering 402.
 */

/** How many request holds a new lease should cover, at least (more when many run at once). */
const LEASE_REQUESTS = 16;
/** Settlement operations not yet committed at which admission pushes back: about a second of one busy instance's traffic. */
export const DEFAULT_SETTLEMENT_BACKLOG = 3_000;
/** How long a request waits for room in a full settlement backlog before a 503. */
const BACKLOG_WAIT_MS = 2_000;

const settlementBehind = () =>
  unavailable('Charges are being written more slowly than requests arrive; nothing was charged. Retry shortly.', { 'retry-after': '1' });

export interface LeasedHoldRequest {
  principal: BillingPrincipal;
  purpose: Exclude<HoldPurpose, 'lease'>;
  model: string;
  amountMicro: bigint;
}

export interface BudgetLeasesOptions {
  /** Where batches are written; its own connection keeps give-backs from queueing behind lease takes. */
  writerStore?: LeaseStore;
  /**
   * How long a settlement may wait for others to share its batch (ms; default 0: the next turn of
   * the event loop); worth it only when nobody awaits the commit (fewer, larger batches).
   */
  settlementDelayMs?: number;
  /** How long a lease outlives its instance's last renewal (ms; renewed every third of it). */
  leaseTtlMs?: number;
  /** Settlement operations not yet committed at which admission and answers wait (LeaseOpWriter). */
  settlementBacklog?: number;
  /** Batches written at once on disjoint accounts (writerStore needs that many connections). */
  writerLanes?: number;
  /** Most operations of one batch statement (benches compare; default LeaseOpWriter's). */
  maxBatchOps?: number;
}

export class BudgetLeases {
  private readonly budgets = new Map<string, Budget>();
  private readonly writer: LeaseOpWriter;
  /** Giving leases back, renewing them and housekeeping (lease-lifecycle.ts). */
  private readonly lifecycle: LeaseLifecycle;
  private readonly leaseTtlMs: number;

  constructor(
    private readonly store: LeaseStore,
    private readonly billing: BillingService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
    options: BudgetLeasesOptions = {},
  ) {
    this.writer = new LeaseOpWriter(options.writerStore ?? store, {
      settlementDelayMs: options.settlementDelayMs ?? 0,
      backlogLimit: options.settlementBacklog ?? DEFAULT_SETTLEMENT_BACKLOG,
      lanes: options.writerLanes ?? 1,
      maxBatchOps: options.maxBatchOps,
    });
    this.leaseTtlMs = options.leaseTtlMs ?? DEFAULT_HOLD_TTL_MS.lease;
    this.lifecycle = new LeaseLifecycle(this.budgets, this.writer, clock, bus, this.leaseTtlMs);
  }

  /** What this instance has in flight right now (read when metrics are scraped, not per request). */
  inFlight(): { holds: number; holdsMicro: bigint; leases: number; leasesMicro: bigint } {
    return inFlightOf(this.budgets.values());
  }

  /** Read when metrics are scraped. */
  settlementBacklog(): SettlementBacklog {
    return this.writer.backlog();
  }

  /**
   * Whether a settlement made now may be committed after its answer ends (after-answer). False
   * while the backlog is at its limit: that answer then waits for its charge, so that no more
   * than the limit of answered charges are ever uncommitted.
   */
  settlementMayTrail(): boolean {
    return this.writer.mayTrail();
  }

  /**
   * Reserves a request's hold: in memory when a lease of its key and month has room, else
   * after taking a lease. Refusals are the 402s of BillingService.reserveHold, answered only
   * after this instance's and (asked over the bus) other instances' slack was given back.
   * While the settlement backlog is full the request first waits for room (503 beyond
   * BACKLOG_WAIT_MS): admission slows down to what settlement keeps up with.
   */
  // Not an async function: a hold carved from a lease with room (nearly every one) is answered without an async frame.
  reserve(request: LeasedHoldRequest): Promise<LeasedHold> {
    try {
      if (request.amountMicro < 0n) throw new RangeError('a hold amount cannot be negative');
      if (this.writer.hasRoom()) {
        const budget = this.budgetFor(request.principal);
        const lease = roomyLease(budget, request.amountMicro);
        if (lease) return Promise.resolve(this.carve(budget, lease, request));
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return this.reserveAfterWaiting(request);
  }

  /** reserve() when it must wait: for room in the settlement backlog, or for a lease. */
  private async reserveAfterWaiting(request: LeasedHoldRequest): Promise<LeasedHold> {
    if (!this.writer.hasRoom() && !(await this.writer.waitForRoom(BACKLOG_WAIT_MS))) throw settlementBehind();
    for (;;) {
      // Looked up again after every wait: housekeeping forgets budgets left without leases.
      const budget = this.budgetFor(request.principal);
      const lease = roomyLease(budget, request.amountMicro);
      if (lease) return this.carve(budget, lease, request);
      // One lease is taken at a time per budget, sized for every request waiting on it.
      if (budget.taking) {
        budget.waiting += request.amountMicro;
        try {
          // Only its end matters here: its failure is answered to the request that took it.
          await budget.taking.catch(() => undefined);
        } finally {
          budget.waiting -= request.amountMicro;
        }
        continue;
      }
      const taking = this.takeLease(budget, request);
      budget.taking = taking;
      try {
        return await taking;
      } finally {
        if (budget.taking === taking) budget.taking = null;
      }
    }
  }

  /**
   * Charges `costMicro` up to the hold, once; resolves when it is committed. A cost above the
   * hold is charged the hold, and the excess recorded as overage (docs/billing.md, Overage).
   */
  settle(hold: LeasedHold, input: SettleInput): Promise<void> {
    return new Promise((resolve, reject) => this.queueSettlement(hold, input, resolve, reject));
  }

  /**
   * settle() for a caller that does not wait for the commit (an answer that trails its charge):
   * no promise, only `failed` with the request's id if it cannot be written. Queued settlements
   * wait up to a batch window and a commit, and what each keeps alive that long is copied by
   * every young-generation collection meanwhile: here one small listener, and `failed` is the
   * caller's handler for all of them, not a closure per request (docs/performance.md).
   */
  settleTrailing(hold: LeasedHold, input: SettleInput, failed: SettlementFailed): void {
    try {
      this.queueSettlement(hold, input, NOTHING, failed);
    } catch (error) {
      failed(error, input.requestId ?? null);
    }
  }

  private queueSettlement(hold: LeasedHold, input: SettleInput, committed: () => void, failed: SettlementFailed): void {
    if (input.costMicro < 0n) throw new RangeError('a charge cannot be negative');
    const open = this.claim(hold);
    if (!open) return committed();
    // The hold's amount is in the lease (other open holds keep theirs), so its charge always is.
    const { chargedMicro, overageMicro } = chargeWithinHold(input.costMicro, open.amountMicro);
    open.lease.remaining -= chargedMicro;
    const op = settleOpOf(open, input.costMicro, input, this.clock.nowMs(), this.ids);
    if (overageMicro > 0n) {
      const { budget } = open;
      this.billing.overageObserved({
        requestId: op.requestId,
        accountId: budget.accountId,
        keyId: budget.keyId,
        model: open.model,
        holdMicro: open.amountMicro,
        costMicro: input.costMicro,
        chargedMicro,
        overageMicro,
      });
    }
    this.writer.pushSettlement(op, open.budget.lane, new SettlementListener(this, open, committed, failed, op.requestId));
  }

  /** After a settlement's commit: a retired lease may go back, a balance below its threshold is topped up (a promise then). */
  afterSettled(open: OpenHold, result: LeaseOpResult): Promise<unknown> | null {
    this.afterClose(open.budget, open.lease);
    const below =
      result.applied && !result.planBilled && result.thresholdMicro !== null && (result.balanceMicro ?? 0n) < result.thresholdMicro;
    return below ? runAutoTopUp(this.billing.autoTopUpDeps(), result.accountId!) : null;
  }

  /**
   * Gives the hold back to its lease, charging nothing. Only a usage record `failed`, when asked
   * for, is written: otherwise nothing in PostgreSQL changes (the hold was never a row).
   */
  async release(hold: LeasedHold, input: ReleaseInput = {}): Promise<void> {
    const open = this.claim(hold);
    if (!open) return;
    if (input.recordFailure) {
      const op = settleOpOf(
        open,
        0n,
        { status: 'failed', usage: input.usage, latencyMs: input.latencyMs, requestId: input.requestId, deployment: input.deployment },
        this.clock.nowMs(),
        this.ids,
      );
      await new Promise((resolve, reject) => this.writer.pushSettlement(op, open.budget.lane, { committed: resolve, failed: reject }));
    }
    this.afterClose(open.budget, open.lease);
  }

  /**
   * Moves an open request hold to another model (a fallback serving in the asked model's place,
   * docs/routing.md): its settlement names that model, and its amount grows to `amountMicro`
   * when that is more. The difference comes from slack already leased for its key (its own
   * lease first, else another of its budget with room for the whole amount), in memory and
   * without an await, so atomic on this instance; no lease is taken for a request already
   * running. False, and nothing changed, when no lease has that room.
   */
  moveHold(hold: LeasedHold, model: string, amountMicro: bigint): boolean {
    const open = hold as OpenHold;
    if (open.closed) return false;
    if (amountMicro > open.amountMicro) {
      const own = open.lease;
      const roomy = (lease: Lease) =>
        !lease.retired && lease.remaining - lease.inFlight >= amountMicro - (lease === own ? open.amountMicro : 0n);
      const lease = roomy(own) ? own : open.budget.leases.find(roomy);
      if (!lease) return false;
      own.inFlight -= open.amountMicro;
      own.open--;
      lease.inFlight += amountMicro;
      lease.open++;
      open.lease = lease;
      open.amountMicro = amountMicro;
      if (lease !== own) this.afterClose(open.budget, own);
    }
    open.model = model;
    return true;
  }

  /** Writes what is queued, gives every lease back and stops (shutdown). */
  async close(): Promise<void> {
    await this.lifecycle.close();
    await this.writer.idle();
  }

  private budgetFor(principal: BillingPrincipal): Budget {
    const month = utcMonthKeyOfMs(this.clock.nowMs());
    const planUserId = principal.kind === 'plan' ? principal.userId : null;
    const key = `${principal.keyId}\u0000${month}\u0000${planUserId ?? ''}`;
    let budget = this.budgets.get(key);
    if (!budget) {
      budget = {
        key,
        accountId: principal.accountId,
        keyId: principal.keyId,
        planUserId,
        month,
        lane: this.writer.laneOf(principal.accountId),
        leases: [],
        taking: null,
        waiting: 0n,
        exactUntilMs: 0,
      };
      this.budgets.set(key, budget);
    }
    return budget;
  }

  private carve(budget: Budget, lease: Lease, request: LeasedHoldRequest): OpenHold {
    return carveHold(budget, lease, this.ids.next('hold'), request, this.clock.nowMs());
  }

  private claim(hold: LeasedHold): OpenHold | null {
    return claimHold(hold, this.clock.nowMs());
  }

  /** A retired lease is given back once its last request closed. */
  private afterClose(budget: Budget, lease: Lease): void {
    if (lease.retired && lease.open === 0) void this.lifecycle.releaseLease(budget, lease).catch(() => undefined);
  }

  /**
   * Takes a lease big enough for this request and, unless the account was refused recently,
   * for LEASE_REQUESTS more like it (or twice what is in flight, when more run at once).
   */
  private async takeLease(budget: Budget, request: LeasedHoldRequest): Promise<OpenHold> {
    const amount = request.amountMicro;
    const exact = this.clock.nowMs() < budget.exactUntilMs;
    const inFlight = budget.leases.reduce((sum, l) => sum + l.inFlight, 0n);
    const want = exact ? amount : maxBig(amount * BigInt(LEASE_REQUESTS), (inFlight + budget.waiting) * 2n + amount);
    const givenBackBefore = this.lifecycle.givenBack;
    let taken = await this.tryTake(budget, amount, want);
    if (typeof taken === 'string') {
      // Refused: give back this instance's slack on the same money (and wait for give-backs
      // already under way, which a burst of refusals races with), ask the other instances to
      // do the same, top up when the account asks for it, then try once more for exactly this
      // request if any of that freed money.
      const reason = taken;
      await this.lifecycle.giveBackSlack((b) => sharesConstraint(b, budget, reason));
      await this.lifecycle.giveBacksUnderWay();
      this.bus.publish(TOPIC_BUDGET_PRESSURE, { accountId: budget.accountId });
      const toppedUp = reason === 'balance' && budget.planUserId === null && (await this.billing.topUpBeforeRefusing(budget.accountId));
      if (this.lifecycle.givenBack !== givenBackBefore || toppedUp) taken = await this.tryTake(budget, amount, amount);
      if (typeof taken === 'string') {
        throw await this.billing.refusalError(taken, {
          principal: {
            accountId: budget.accountId,
            keyId: budget.keyId,
            kind: budget.planUserId ? 'plan' : 'prepaid',
            userId: budget.planUserId,
          },
          purpose: request.purpose,
          model: request.model,
          amountMicro: amount,
        });
      }
    }
    // Leases too small for this request would only strand their slack: retire them.
    for (const old of [...budget.leases]) if (!old.retired && old.remaining - old.inFlight < amount) this.lifecycle.retire(budget, old);
    budget.leases.push(taken);
    // Carved at once: the requests that waited for this lease must not take the taker's share.
    return this.carve(budget, taken, request);
  }

  private async tryTake(budget: Budget, min: bigint, want: bigint): Promise<Lease | RefusalReason> {
    const now = this.clock.now();
    const id = this.ids.next('lease');
    const taken = await this.store.takeLease({
      id,
      accountId: budget.accountId,
      keyId: budget.keyId,
      planUserId: budget.planUserId,
      month: budget.month,
      minMicro: min,
      wantMicro: want,
      expiresAt: new Date(now.getTime() + this.leaseTtlMs),
      now,
    });
    if (taken.refusal !== null) return taken.refusal;
    return { id, remaining: taken.grantedMicro, inFlight: 0n, open: 0, retired: false, lastUsedMs: now.getTime() };
  }
}
