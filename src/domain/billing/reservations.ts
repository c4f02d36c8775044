import type { EntityManager } from '@mikro-orm/postgresql';
import type { IdGenerator } from '../shared/ids';
import type { HoldPurpose, HoldStatus } from './entities';

/**
 * The SQL steps of the reservation scheme (GUIDE.md, Money and concurrency), each run inside
 * the caller's transaction. Every constraint is one conditional UPDATE whose WHERE clause is
 * the check, so the check and the deduction are one atomic step under the row lock, on any
 * number of instances. Callers take row locks in one global order, which rules out deadlocks:
 *
 *   holds → accounts → key_month_spend → plan_month_usage
 *
 * (a reservation inserts its hold row last; nobody else can see it before commit).
 *
 * Money travels as decimal strings (bigint columns), never as JS numbers.
 */
type SqlParam = string | number | null;

export async function sqlRows<T>(tx: EntityManager, sql: string, params: SqlParam[]): Promise<T[]> {
  return (await tx.execute(sql, params, 'all')) as unknown as T[];
}

const micro = (value: bigint): string => value.toString();

/** (a) Prepaid balance: available (balance − reserved) must cover the hold. */
export async function takeAccountFunds(tx: EntityManager, accountId: string, amountMicro: bigint): Promise<boolean> {
  const rows = await sqlRows(
    tx,
    'update accounts set reserved_micro = reserved_micro + ? where id = ? and balance_micro - reserved_micro >= ? returning id',
    [micro(amountMicro), accountId, micro(amountMicro)],
  );
  return rows.length === 1;
}

/**
 * Runs a conditional UPDATE on a per-month counter row, creating the row when it is missing.
 * The UPDATE is tried first (the common case, one round trip); when it matches nothing the
 * row is inserted if missing and the UPDATE retried once. The retry is needed even when our
 * INSERT did nothing: a concurrent transaction may have just created and committed the row.
 */
async function updateMonthCounter(tx: EntityManager, update: () => Promise<boolean>, insertSql: string, insertParams: SqlParam[]): Promise<boolean> {
  if (await update()) return true;
  await tx.execute(insertSql, insertParams, 'run');
  return update();
}

/**
 * (b) Key month spend: settled + in flight + hold must stay within the key's CURRENT limit,
 * read from `api_keys` in the same statement (no limit: always passes, but still tracked).
 */
export function takeKeyMonthSpend(tx: EntityManager, keyId: string, month: string, amountMicro: bigint): Promise<boolean> {
  const update = async () =>
    (
      await sqlRows(
        tx,
        `update key_month_spend s set reserved_micro = s.reserved_micro + ?
           from api_keys k
          where s.key_id = ? and s.month = ? and k.id = s.key_id
            and (k.monthly_spend_limit_micro is null or s.settled_micro + s.reserved_micro + ? <= k.monthly_spend_limit_micro)
          returning s.key_id`,
        [micro(amountMicro), keyId, month, micro(amountMicro)],
      )
    ).length === 1;
  return updateMonthCounter(tx, update, 'insert into key_month_spend (key_id, month) values (?, ?) on conflict do nothing', [keyId, month]);
}

/** (c) Plan allowance of the key's user: used + in flight + hold within the plan's CURRENT allowance. */
export function takePlanAllowance(tx: EntityManager, userId: string, month: string, amountMicro: bigint): Promise<boolean> {
  const update = async () =>
    (
      await sqlRows(
        tx,
        `update plan_month_usage u set reserved_micro = u.reserved_micro + ?
           from users us join plans p on p.id = us.plan_id
          where u.user_id = ? and u.month = ? and us.id = u.user_id
            and u.used_micro + u.reserved_micro + ? <= p.monthly_allowance_micro
          returning u.user_id`,
        [micro(amountMicro), userId, month, micro(amountMicro)],
      )
    ).length === 1;
  return updateMonthCounter(tx, update, 'insert into plan_month_usage (user_id, month) values (?, ?) on conflict do nothing', [userId, month]);
}

export interface NewHold {
  id: string;
  accountId: string;
  keyId: string;
  planUserId: string | null;
  month: string;
  purpose: HoldPurpose;
  model: string;
  amountMicro: bigint;
  expiresAt: Date;
  createdAt: Date;
}

export async function insertHold(tx: EntityManager, hold: NewHold): Promise<void> {
  await tx.execute(
    `insert into holds (id, account_id, key_id, plan_user_id, month, purpose, model, amount_micro, status, expires_at, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
    [hold.id, hold.accountId, hold.keyId, hold.planUserId, hold.month, hold.purpose, hold.model, micro(hold.amountMicro), hold.expiresAt.toISOString(), hold.createdAt.toISOString()],
    'run',
  );
}

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

/**
 * The first statement of every settlement and release: moves the hold out of `active` only if
 * it still is. Whoever gets the row back owns the hold's money; a second settlement, a settle
 * after a release or a sweeper racing a settlement gets null and changes nothing.
 */
export async function closeHold(tx: EntityManager, holdId: string, status: Exclude<HoldStatus, 'active'>, chargedMicro: bigint, now: Date): Promise<ClosedHold | null> {
  const rows = await sqlRows<ClosedHoldRow>(
    tx,
    `update holds set status = ?, charged_micro = ?, closed_at = ? where id = ? and status = 'active' returning ${CLOSED_HOLD_COLUMNS}`,
    [status, micro(chargedMicro), now.toISOString(), holdId],
  );
  return rows[0] ? toClosedHold(rows[0]) : null;
}

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

export interface AccountAfterCharge {
  balanceMicro: bigint;
  autoTopUpThresholdMicro: bigint | null;
}

/** Prepaid: the hold leaves `reserved`, the charge leaves `balance` (which may dip below zero by an overshoot). */
export async function chargeAccount(tx: EntityManager, accountId: string, holdMicro: bigint, chargeMicro: bigint): Promise<AccountAfterCharge> {
  const rows = await sqlRows<{ balance_micro: string; auto_top_up_threshold_micro: string | null }>(
    tx,
    `update accounts set balance_micro = balance_micro - ?, reserved_micro = reserved_micro - ? where id = ?
     returning balance_micro, auto_top_up_threshold_micro`,
    [micro(chargeMicro), micro(holdMicro), accountId],
  );
  const row = rows[0];
  if (!row) throw new Error(`hold of a missing account ${accountId}`);
  return {
    balanceMicro: BigInt(row.balance_micro),
    autoTopUpThresholdMicro: row.auto_top_up_threshold_micro === null ? null : BigInt(row.auto_top_up_threshold_micro),
  };
}

/** The hold's month (not the current one) gives back the hold and records the charge. */
export async function settleKeyMonthSpend(tx: EntityManager, keyId: string, month: string, holdMicro: bigint, chargeMicro: bigint): Promise<void> {
  await tx.execute(
    'update key_month_spend set reserved_micro = reserved_micro - ?, settled_micro = settled_micro + ? where key_id = ? and month = ?',
    [micro(holdMicro), micro(chargeMicro), keyId, month],
    'run',
  );
}

export async function settlePlanMonthUsage(tx: EntityManager, userId: string, month: string, holdMicro: bigint, chargeMicro: bigint): Promise<void> {
  await tx.execute(
    'update plan_month_usage set reserved_micro = reserved_micro - ?, used_micro = used_micro + ? where user_id = ? and month = ?',
    [micro(holdMicro), micro(chargeMicro), userId, month],
    'run',
  );
}

/**
 * Gives back what a closed hold reserved and books `chargeMicro` where it belongs. Returns
 * the account's balance after a prepaid charge (null for plan-billed holds).
 */
export async function applyClosedHold(tx: EntityManager, hold: ClosedHold, chargeMicro: bigint): Promise<AccountAfterCharge | null> {
  const account = isPlanBilled(hold) ? null : await chargeAccount(tx, hold.accountId, hold.amountMicro, chargeMicro);
  if (hold.keyId) await settleKeyMonthSpend(tx, hold.keyId, hold.month, hold.amountMicro, chargeMicro);
  if (hold.planUserId) await settlePlanMonthUsage(tx, hold.planUserId, hold.month, hold.amountMicro, chargeMicro);
  return account;
}

/** The ledger row of a prepaid charge; `hold_id` is unique, a second charge of a hold cannot exist. */
export async function insertChargeLedgerEntry(tx: EntityManager, ids: IdGenerator, hold: ClosedHold, chargeMicro: bigint, now: Date): Promise<void> {
  await tx.execute(
    `insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at) values (?, ?, 'charge', ?, ?, ?, ?, ?)`,
    [ids.next('led'), hold.accountId, micro(-chargeMicro), hold.id, hold.keyId, hold.model, now.toISOString()],
    'run',
  );
}

export type UsageStatus = 'ok' | 'partial' | 'failed';

/** Counts as the provider reported them (spec 2.8); all optional, default 0. */
export interface UsageCounts {
  inputTokens?: number;
  cachedInputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  images?: number;
  videoSeconds?: number;
}

export interface UsageMeta {
  usage?: UsageCounts;
  status: UsageStatus;
  latencyMs: number;
  requestId: string | null;
}

const count = (value: number | undefined, field: string): number => {
  const n = value ?? 0;
  if (!Number.isSafeInteger(n) || n < 0 || n > 2_147_483_647) throw new RangeError(`${field} must be a non-negative 32-bit integer, got ${n}`);
  return n;
};

export async function insertUsageRecord(tx: EntityManager, ids: IdGenerator, hold: ClosedHold, costMicro: bigint, meta: UsageMeta, now: Date): Promise<void> {
  const u = meta.usage ?? {};
  await tx.execute(
    `insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens, output_tokens,
       reasoning_tokens, images, video_seconds, cost_micro, status, latency_ms, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      ids.next('use'), hold.accountId, hold.keyId, hold.id, meta.requestId, hold.model,
      count(u.inputTokens, 'inputTokens'), count(u.cachedInputTokens, 'cachedInputTokens'), count(u.outputTokens, 'outputTokens'),
      count(u.reasoningTokens, 'reasoningTokens'), count(u.images, 'images'), count(u.videoSeconds, 'videoSeconds'),
      micro(costMicro), meta.status, count(Math.round(meta.latencyMs), 'latencyMs'), now.toISOString(),
    ],
    'run',
  );
}

/** Pushes an active hold's expiry out (long video jobs, long streams); false when it is no longer active. */
export async function extendHoldExpiry(tx: EntityManager, holdId: string, expiresAt: Date): Promise<boolean> {
  const rows = await sqlRows(tx, `update holds set expires_at = greatest(expires_at, ?) where id = ? and status = 'active' returning id`, [expiresAt.toISOString(), holdId]);
  return rows.length === 1;
}
