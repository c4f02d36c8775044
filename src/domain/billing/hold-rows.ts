import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows } from '../shared/sql';

/*
 * Statements on hold rows outside the database functions. Reservation and settlement run
 * server-side (tollgate_take_hold, tollgate_close_hold: migrations/functions/): every
 * constraint is one conditional UPDATE whose WHERE clause is the check, so check and deduction
 * are one atomic step under the row lock, on any number of instances. Row locks are taken in
 * one global order, which rules out deadlocks:
 *
 *   holds → accounts → key_month_spend → plan_month_usage
 *
 * Money travels as decimal strings (bigint columns), never as JS numbers.
 */

/** A hold this transaction just moved out of `active`: what its counters must give back. */
export interface ClosedHold {
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
export async function closeExpiredHolds(tx: EntityManager, now: Date, limit: number): Promise<ClosedHold[]> {
  const rows = await sqlRows<ClosedHoldRow>(
    tx,
    `update holds set status = 'released', charged_micro = 0, closed_at = ?
      where id in (select id from holds where status = 'active' and expires_at <= ? order by expires_at limit ? for update skip locked)
      returning ${CLOSED_HOLD_COLUMNS}`,
    [now.toISOString(), now.toISOString(), limit],
  );
  return rows.map(toClosedHold);
}

/**
 * Plan-billed holds draw on the plan allowance and never touch the prepaid balance; a hold
 * is plan-billed exactly when it names the plan user.
 */
export const isPlanBilled = (hold: Pick<ClosedHold, 'planUserId'>): boolean => hold.planUserId !== null;

/** Pushes an active hold's expiry out (long video jobs, long streams); false when it is no longer active. */
export async function extendHoldExpiry(tx: EntityManager, holdId: string, expiresAt: Date): Promise<boolean> {
  const rows = await sqlRows(tx, `update holds set expires_at = greatest(expires_at, ?) where id = ? and status = 'active' returning id`, [expiresAt.toISOString(), holdId]);
  return rows.length === 1;
}
