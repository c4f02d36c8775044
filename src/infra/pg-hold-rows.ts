import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows } from './sql';

/*
 * Statements on hold rows outside the database functions (pg-hold-store.ts): the sweeper's
 * release of expired holds and the extension of a long request's hold. Row locks are taken in
 * the global order of reservation and settlement, which rules out deadlocks among them:
 *
 *   holds → accounts → key_month_spend → plan_month_usage
 *
 * Money travels as decimal strings (bigint columns), never as JS numbers.
 */

/** A hold this transaction just moved out of `active`: what its counters must give back. */
interface ClosedHold {
  id: string;
  accountId: string;
  keyId: string | null;
  planUserId: string | null;
  month: string;
  model: string;
  amountMicro: bigint;
}

interface ClosedHoldRow {
  id: string;
  account_id: string;
  key_id: string | null;
  plan_user_id: string | null;
  month: string;
  model: string;
  amount_micro: string;
}

const toClosedHold = (row: ClosedHoldRow): ClosedHold => ({
  id: row.id,
  accountId: row.account_id,
  keyId: row.key_id,
  planUserId: row.plan_user_id,
  month: row.month,
  model: row.model,
  amountMicro: BigInt(row.amount_micro),
});

const CLOSED_HOLD_COLUMNS = 'id, account_id, key_id, plan_user_id, month, model, amount_micro';

/** Batch form for the sweeper: expired active holds, skipping those another transaction holds. */
async function closeExpiredHolds(tx: EntityManager, now: Date, limit: number): Promise<ClosedHold[]> {
  const rows = await sqlRows<ClosedHoldRow>(
    tx,
    `update holds set status = 'released', charged_micro = 0, closed_at = ?
      where id in (select id from holds where status = 'active' and expires_at <= ? order by expires_at limit ? for update skip locked)
      returning ${CLOSED_HOLD_COLUMNS}`,
    [now.toISOString(), now.toISOString(), limit],
  );
  return rows.map(toClosedHold);
}

/** Plan-billed holds draw on the plan allowance, never on the prepaid balance: they name the plan user. */
const isPlanBilled = (hold: Pick<ClosedHold, 'planUserId'>): boolean => hold.planUserId !== null;

/** Pushes an active hold's expiry out (long video jobs, long streams); false when it is no longer active. */
export async function extendHoldExpiry(tx: EntityManager, holdId: string, expiresAt: Date): Promise<boolean> {
  const rows = await sqlRows(tx, `update holds set expires_at = greatest(expires_at, ?) where id = ? and status = 'active' returning id`, [
    expiresAt.toISOString(),
    holdId,
  ]);
  return rows.length === 1;
}

/**
 * Releases one batch of expired holds in the caller's transaction; returns how many. Counter
 * rows are updated in sorted order (accounts, then key months, then plan months), the global
 * lock order, so concurrent sweepers and reservations cannot deadlock.
 */
export async function releaseExpiredBatch(tx: EntityManager, now: Date, limit: number): Promise<number> {
  const holds = await closeExpiredHolds(tx, now, limit);
  for (const [accountId, amount] of sumBy(
    holds.filter((h) => !isPlanBilled(h)),
    (h) => h.accountId,
  )) {
    await sqlRows(tx, 'update accounts set reserved_micro = reserved_micro - ? where id = ? returning id', [amount.toString(), accountId]);
  }
  for (const [key, amount] of sumBy(
    holds.filter((h) => h.keyId !== null),
    (h) => `${h.keyId}\u0000${h.month}`,
  )) {
    const [keyId, month] = key.split('\u0000');
    await sqlRows(tx, 'update key_month_spend set reserved_micro = reserved_micro - ? where key_id = ? and month = ? returning key_id', [
      amount.toString(),
      keyId,
      month,
    ]);
  }
  for (const [key, amount] of sumBy(holds.filter(isPlanBilled), (h) => `${h.planUserId}\u0000${h.month}`)) {
    const [userId, month] = key.split('\u0000');
    await sqlRows(tx, 'update plan_month_usage set reserved_micro = reserved_micro - ? where user_id = ? and month = ? returning user_id', [
      amount.toString(),
      userId,
      month,
    ]);
  }
  return holds.length;
}

function sumBy(holds: ClosedHold[], keyOf: (hold: ClosedHold) => string): [string, bigint][] {
  const sums = new Map<string, bigint>();
  for (const hold of holds) sums.set(keyOf(hold), (sums.get(keyOf(hold)) ?? 0n) + hold.amountMicro);
  return [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
