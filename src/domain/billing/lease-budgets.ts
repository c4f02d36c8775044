import type { IdGenerator } from '../shared/ids';
import type { RefusalReason, SettleInput } from './hold-requests';
import type { LeaseOpResult, SettleOp } from './lease-store';
import type { OpListener } from './lease-op-writer';
import { recordedTokenCounts, usageCount } from './usage-counts';

/*
 * The in-memory bookkeeping of budget leases (leases.ts): per key and month, its leases, and
 * the request holds carved out of them; and the settlement operation of a closed hold.
 */

/** A request's hold, carved out of a lease; lives in memory until settled or released. */
export interface LeasedHold {
  readonly id: string;
  readonly amountMicro: bigint;
}

export interface Lease {
  id: string;
  /** What the lease still reserves in PostgreSQL (charges of settled requests moved out). */
  remaining: bigint;
  /** Σ amounts of the request holds carved out of it and still open. */
  inFlight: bigint;
  open: number;
  /** No new request holds; given back once the last open one closes. */
  retired: boolean;
  lastUsedMs: number;
}

export interface Budget {
  key: string;
  accountId: string;
  keyId: string;
  planUserId: string | null;
  month: string;
  /** The settlement writer's lane of the account (LeaseOpWriter.laneOf). */
  lane: number;
  leases: Lease[];
  /** A lease being taken: concurrent requests wait for it instead of taking their own. */
  taking: Promise<unknown> | null;
  /** Σ amounts of requests waiting for `taking`: the lease is sized for them too. */
  waiting: bigint;
  exactUntilMs: number;
}

export interface OpenHold extends LeasedHold {
  /** Grown, and moved to another lease, only when a fallback model serves instead (BudgetLeases.moveHold). */
  amountMicro: bigint;
  lease: Lease;
  budget: Budget;
  model: string;
  closed: boolean;
}

/** Whether a refusal of `refused` for `reason` could be eased by slack in `budget`. */
export function sharesConstraint(budget: Budget, refused: Budget, reason: RefusalReason): boolean {
  if (reason === 'balance') return budget.accountId === refused.accountId && budget.planUserId === null;
  if (reason === 'key_limit') return budget.keyId === refused.keyId && budget.month === refused.month;
  return budget.planUserId === refused.planUserId && budget.month === refused.month;
}

export const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** A lease of the budget that can carve `amountMicro` now. */
export function roomyLease(budget: Budget, amountMicro: bigint): Lease | undefined {
  for (const lease of budget.leases) if (!lease.retired && lease.remaining - lease.inFlight >= amountMicro) return lease;
  return undefined;
}

/** A request hold carved out of `lease` (which has room for it: roomyLease). */
export function carveHold(
  budget: Budget,
  lease: Lease,
  id: string,
  request: { amountMicro: bigint; model: string },
  nowMs: number,
): OpenHold {
  lease.inFlight += request.amountMicro;
  lease.open++;
  lease.lastUsedMs = nowMs;
  return { id, amountMicro: request.amountMicro, lease, budget, model: request.model, closed: false };
}

/** Closes a request hold, once: out of its lease's in-flight sum; null when it was closed already. */
export function claimHold(hold: LeasedHold, nowMs: number): OpenHold | null {
  const open = hold as OpenHold;
  if (open.closed) return null;
  open.closed = true;
  open.lease.inFlight -= open.amountMicro;
  open.lease.open--;
  open.lease.lastUsedMs = nowMs;
  return open;
}

/** The operation that books a closed request hold: its charge, the part its lease pays, its usage record and ledger row. */
export function settleOpOf(
  open: OpenHold,
  cost: bigint,
  /** `status` 'ok' unless given. */
  usage: { status?: string; usage?: SettleInput['usage']; latencyMs?: number; requestId?: string | null; deployment?: string | null },
  atMs: number,
  ids: IdGenerator,
): SettleOp {
  const counts = recordedTokenCounts(usage.usage ?? {});
  return {
    op: 'settle',
    leaseId: open.lease.id,
    holdId: open.id,
    costMicro: cost,
    holdMicro: open.amountMicro,
    model: open.model,
    atMs,
    ledgerId: ids.next('led'),
    usageId: ids.next('use'),
    usageStatus: usage.status ?? 'ok',
    requestId: usage.requestId ?? null,
    // Field by field, not a spread: the spread copies by a slow path and makes the op a new shape.
    inputTokens: counts.inputTokens,
    cachedInputTokens: counts.cachedInputTokens,
    cacheWrite5mInputTokens: counts.cacheWrite5mInputTokens,
    cacheWrite1hInputTokens: counts.cacheWrite1hInputTokens,
    outputTokens: counts.outputTokens,
    reasoningTokens: counts.reasoningTokens,
    latencyMs: usageCount(Math.round(usage.latencyMs ?? 0), 'latencyMs'),
    deployment: usage.deployment ?? null,
  };
}

/** What a budget's leases have in flight (metrics). */
export function inFlightOf(budgets: Iterable<Budget>): { holds: number; holdsMicro: bigint; leases: number; leasesMicro: bigint } {
  let holds = 0;
  let holdsMicro = 0n;
  let leases = 0;
  let leasesMicro = 0n;
  for (const budget of budgets) {
    for (const lease of budget.leases) {
      holds += lease.open;
      holdsMicro += lease.inFlight;
      leases++;
      leasesMicro += lease.remaining;
    }
  }
  return { holds, holdsMicro, leases, leasesMicro };
}

export const NOTHING = (): void => undefined;

/** Told that a settlement could not be written, with the id of the request it charges. */
export type SettlementFailed = (error: unknown, requestId: string | null) => void;

/** A queued settlement's listener (LeaseOpWriter): what follows its commit, then whoever asked. */
export class SettlementListener implements OpListener {
  constructor(
    private readonly leases: { afterSettled(open: OpenHold, result: LeaseOpResult): Promise<unknown> | null },
    private readonly open: OpenHold,
    private readonly settled: () => void,
    private readonly notSettled: SettlementFailed,
    private readonly requestId: string | null,
  ) {}

  committed(result: LeaseOpResult): void {
    try {
      const after = this.leases.afterSettled(this.open, result);
      if (after === null) this.settled();
      else after.then(this.settled, (error: unknown) => this.failed(error));
    } catch (error) {
      this.failed(error);
    }
  }

  failed(error: unknown): void {
    this.notSettled(error, this.requestId);
  }
}
