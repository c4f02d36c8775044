import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows } from '../shared/sql';
import { type ClosedHold, closeExpiredHolds, isPlanBilled } from './hold-rows';

/**
 * Crash safety: a process that dies mid-request leaves its hold active. Once the hold's
 * `expires_at` has passed it is presumed orphaned and released (nothing charged, counters
 * restored). Several instances may sweep at once: each batch claims its holds with
 * `FOR UPDATE SKIP LOCKED` and the same `status = 'active'` condition as settlement, so a
 * hold is released once, and a settlement racing the sweeper either wins (the sweeper skips
 * or no longer matches it) or finds the hold released and changes nothing.
 */
export const SWEEP_BATCH_SIZE = 100;

/**
 * Releases one batch of expired holds in the caller's transaction; returns how many. Counter
 * rows are updated in sorted order (accounts, then key months, then plan months), the global
 * lock order, so concurrent sweepers and reservations cannot deadlock.
 */
export async function releaseExpiredBatch(tx: EntityManager, now: Date, limit = SWEEP_BATCH_SIZE): Promise<number> {
  const holds = await closeExpiredHolds(tx, now, limit);
  for (const [accountId, amount] of sumBy(holds.filter((h) => !isPlanBilled(h)), (h) => h.accountId)) {
    await sqlRows(tx, 'update accounts set reserved_micro = reserved_micro - ? where id = ? returning id', [amount.toString(), accountId]);
  }
  for (const [key, amount] of sumBy(holds.filter((h) => h.keyId !== null), (h) => `${h.keyId}\u0000${h.month}`)) {
    const [keyId, month] = key.split('\u0000');
    await sqlRows(tx, 'update key_month_spend set reserved_micro = reserved_micro - ? where key_id = ? and month = ? returning key_id', [amount.toString(), keyId, month]);
  }
  for (const [key, amount] of sumBy(holds.filter(isPlanBilled), (h) => `${h.planUserId}\u0000${h.month}`)) {
    const [userId, month] = key.split('\u0000');
    await sqlRows(tx, 'update plan_month_usage set reserved_micro = reserved_micro - ? where user_id = ? and month = ? returning user_id', [amount.toString(), userId, month]);
  }
  return holds.length;
}

function sumBy(holds: ClosedHold[], keyOf: (hold: ClosedHold) => string): [string, bigint][] {
  const sums = new Map<string, bigint>();
  for (const hold of holds) sums.set(keyOf(hold), (sums.get(keyOf(hold)) ?? 0n) + hold.amountMicro);
  return [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** What the sweeper needs from the billing service (kept narrow so it can be tested alone). */
export interface ExpiredHoldSweep {
  sweepExpiredHolds(now?: Date): Promise<number>;
}

/**
 * Runs `sweepExpiredHolds` on an interval. The timer is unref'd (it never keeps the process
 * alive) and runs never overlap; `stop()` waits for a run in progress.
 */
export class HoldSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly billing: ExpiredHoldSweep,
    private readonly options: { intervalMs?: number; onError?: (error: unknown) => void; onSwept?: (released: number) => void } = {},
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.options.intervalMs ?? 30_000);
    this.timer.unref();
  }

  /** One sweep now (skipped when one is already running); never rejects. */
  runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.billing
      .sweepExpiredHolds()
      .then((released) => {
        if (released > 0) this.options.onSwept?.(released);
      })
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
