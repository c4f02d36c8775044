import { utcMonthKey, type Clock } from '../shared/clock';
import { TOPIC_BUDGET_PRESSURE, TOPIC_KEY_EVENTS, type EventBus } from '../shared/events';
import type { Budget, Lease } from './lease-budgets';
import type { LeaseOpWriter } from './lease-op-writer';
import type { LeaseOp, LeaseOpResult } from './lease-store';

/** An unused lease is given back after this long (ms). */
export const LEASE_IDLE_MS = 1_000;
/** After a refusal, leases of the account are taken exactly (no slack) for this long (ms). */
const EXACT_AFTER_REFUSAL_MS = 10_000;
const HOUSEKEEPING_MS = 500;

/**
 * The life of an instance's leases after they are taken (leases.ts takes them and carves
 * requests out of them): renewing them while the instance lives, giving back idle leases and
 * slack (on a refusal here, on another instance's over the bus, on a key's changed rules), and
 * giving every lease back at shutdown.
 */
export class LeaseLifecycle {
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: Array<() => void>;
  private lastRenewMs: number;
  private closing = false;
  /** Trims and releases being written, and how many were ever issued (a refusal checks both). */
  private readonly givingBack = new Set<Promise<LeaseOpResult>>();
  private issued = 0;

  constructor(
    private readonly budgets: Map<string, Budget>,
    private readonly writer: LeaseOpWriter,
    private readonly clock: Clock,
    bus: EventBus,
    private readonly leaseTtlMs: number,
  ) {
    this.lastRenewMs = clock.nowMs();
    // Housekeeping and giving leases back are best effort here and in leases.ts (the
    // `void … .catch(() => undefined)` calls): a lease not given back, the database away, expires
    // at its TTL and its money returns then; the next housekeeping pass tries again.
    this.timer = setInterval(() => void this.housekeeping().catch(() => undefined), HOUSEKEEPING_MS);
    this.timer.unref();
    this.unsubscribe = [
      // Another instance was refused for lack of money: give back what we hold of that account.
      bus.subscribe(
        TOPIC_BUDGET_PRESSURE,
        (pressure) => void this.giveBackSlack((b) => b.accountId === pressure.accountId).catch(() => undefined),
      ),
      // A key's limit changed or it was revoked: its leases were taken under the old rules.
      bus.subscribe(TOPIC_KEY_EVENTS, (event) => {
        if (event.kind === 'spend_limit_changed' || event.kind === 'revoked')
          void this.giveBackSlack((b) => b.keyId === event.keyId, true).catch(() => undefined);
      }),
    ];
  }

  /** How many give-backs were ever issued: a change means some money may have been freed. */
  get givenBack(): number {
    return this.issued;
  }

  /** Resolves once the give-backs under way now are written (or failed). */
  async giveBacksUnderWay(): Promise<void> {
    await Promise.allSettled([...this.givingBack]);
  }

  /** Stops housekeeping and gives back every lease without open requests (shutdown). */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    const releases: Promise<unknown>[] = [];
    for (const budget of this.budgets.values()) {
      for (const lease of [...budget.leases]) if (lease.open === 0) releases.push(this.releaseLease(budget, lease));
    }
    await Promise.allSettled(releases);
  }

  /**
   * Gives back the unused part of the matching budgets' leases and takes their next leases
   * exactly for a while. `retire`: the leases take no new requests either (rules changed).
   */
  async giveBackSlack(matches: (budget: Budget) => boolean, retire = false): Promise<void> {
    const trims: Promise<LeaseOpResult>[] = [];
    for (const budget of this.budgets.values()) {
      if (!matches(budget)) continue;
      budget.exactUntilMs = this.clock.nowMs() + EXACT_AFTER_REFUSAL_MS;
      for (const lease of [...budget.leases]) {
        if (retire) this.retire(budget, lease);
        const slack = lease.remaining - lease.inFlight;
        if (lease.open === 0) trims.push(this.releaseLease(budget, lease));
        else if (slack > 0n) {
          lease.remaining -= slack;
          trims.push(this.giveBack({ op: 'trim', leaseId: lease.id, byMicro: slack }, budget.lane));
        }
      }
    }
    await Promise.all(trims);
  }

  retire(budget: Budget, lease: Lease): void {
    lease.retired = true;
    if (lease.open === 0) void this.releaseLease(budget, lease).catch(() => undefined);
  }

  releaseLease(budget: Budget, lease: Lease): Promise<LeaseOpResult> {
    const index = budget.leases.indexOf(lease);
    if (index < 0) return Promise.resolve({ applied: false, accountId: null, planBilled: null, balanceMicro: null, thresholdMicro: null });
    budget.leases.splice(index, 1);
    lease.retired = true;
    return this.giveBack({ op: 'release', leaseId: lease.id, at: this.clock.now() }, budget.lane);
  }

  private giveBack(op: LeaseOp, lane: number): Promise<LeaseOpResult> {
    this.issued++;
    const written = this.writer.push(op, lane);
    this.givingBack.add(written);
    const forget = () => void this.givingBack.delete(written);
    written.then(forget, forget);
    return written;
  }

  /** Gives idle leases back; renews the others well before they expire. */
  private async housekeeping(): Promise<void> {
    if (this.closing) return;
    const nowMs = this.clock.nowMs();
    const month = utcMonthKey(this.clock.now());
    const renew: Promise<LeaseOpResult>[] = [];
    const renewDue = nowMs - this.lastRenewMs >= this.leaseTtlMs / 3;
    if (renewDue) this.lastRenewMs = nowMs;
    const expiresAt = new Date(nowMs + this.leaseTtlMs);
    for (const budget of [...this.budgets.values()]) {
      for (const lease of [...budget.leases]) {
        // A month that ended takes no new requests; idle leases go back.
        if (budget.month !== month) lease.retired = true;
        if (lease.open === 0 && (lease.retired || nowMs - lease.lastUsedMs >= LEASE_IDLE_MS))
          void this.releaseLease(budget, lease).catch(() => undefined);
        else if (renewDue) {
          renew.push(
            this.writer.push({ op: 'renew', leaseId: lease.id, expiresAt }, budget.lane).then((result) => {
              // Swept (this instance stalled past the TTL): its requests are charged directly; take no more on it.
              if (!result.applied) lease.retired = true;
              return result;
            }),
          );
        }
      }
      if (budget.leases.length === 0 && !budget.taking) this.budgets.delete(budget.key);
    }
    await Promise.all(renew);
  }
}
