import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest, notFound } from '../shared/errors';
import type { HoldPurpose, HoldStatus } from './entities';
import type { UsageCounts } from './usage-counts';
import { sqlRows } from '../shared/sql';
import { isWellFormedId } from '../shared/ids';

/** Read side of billing: holds in flight, key month spend, usage records, the money audit. */
export interface HoldView {
  id: string;
  accountId: string;
  keyId: string | null;
  /** Set for plan-billed holds. */
  planUserId: string | null;
  month: string;
  purpose: HoldPurpose;
  model: string;
  amountMicro: bigint;
  status: HoldStatus;
  chargedMicro: bigint | null;
  expiresAt: Date;
  createdAt: Date;
  closedAt: Date | null;
}

export interface KeyMonthSpendView {
  keyId: string;
  month: string;
  limitMicro: bigint | null;
  settledMicro: bigint;
  reservedMicro: bigint;
  /** settled + in flight: what the limit is checked against. */
  spentMicro: bigint;
  /** limit − spent (never negative); null without a limit. */
  remainingMicro: bigint | null;
  limitReachedAt: Date | null;
  resetsAt: Date;
}

export interface UsageRecordView extends Required<UsageCounts> {
  id: string;
  keyId: string | null;
  /** The key's current name (null without a key). */
  keyName: string | null;
  holdId: string;
  requestId: string | null;
  model: string;
  /** Charged: the usage's cost, at most the request's hold. */
  costMicro: bigint;
  /** What the usage cost beyond the hold: charged to no one (docs/billing.md, Overage). */
  overageMicro: bigint;
  status: string;
  latencyMs: number;
  createdAt: Date;
}

export interface UsageRecordPage {
  data: UsageRecordView[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

export interface UsageFilter {
  limit: number;
  /** A usage record id of this account; the page starts after it (newest first). */
  after: string | null;
  keyId: string | null;
  /** A service model id. */
  model?: string | null;
  /** ok, partial or failed. */
  status?: string | null;
  /** Inclusive. */
  from: Date | null;
  /** Exclusive. */
  to: Date | null;
}

/** Both sums must hold at rest: balance = Σ ledger, reserved = Σ active holds (prepaid). */
export interface AccountAudit {
  balanceMicro: bigint;
  ledgerSumMicro: bigint;
  reservedMicro: bigint;
  activeHoldsMicro: bigint;
  consistent: boolean;
}

const MONTH_KEY = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** First instant of the UTC month after the month key `2026-11` (2026-12-01T00:00:00Z). */
export function monthResetsAt(month: string): Date {
  const match = MONTH_KEY.exec(month);
  if (!match) throw new RangeError(`not a month key: ${month}`);
  return new Date(Date.UTC(Number(match[1]), Number(match[2]), 1));
}

export function parseMonthKey(value: string): string {
  if (!MONTH_KEY.test(value)) throw badRequest('Month must be a UTC month written YYYY-MM', { field: 'usage.month' });
  return value;
}

interface HoldRow {
  id: string;
  account_id: string;
  key_id: string | null;
  plan_user_id: string | null;
  month: string;
  purpose: HoldPurpose;
  model: string;
  amount_micro: string;
  status: HoldStatus;
  charged_micro: string | null;
  expires_at: Date;
  created_at: Date;
  closed_at: Date | null;
}

const HOLD_COLUMNS = 'id, account_id, key_id, plan_user_id, month, purpose, model, amount_micro, status, charged_micro, expires_at, created_at, closed_at';

const toHoldView = (row: HoldRow): HoldView => ({
  id: row.id,
  accountId: row.account_id,
  keyId: row.key_id,
  planUserId: row.plan_user_id,
  month: row.month,
  purpose: row.purpose,
  model: row.model,
  amountMicro: BigInt(row.amount_micro),
  status: row.status,
  chargedMicro: row.charged_micro === null ? null : BigInt(row.charged_micro),
  expiresAt: new Date(row.expires_at),
  createdAt: new Date(row.created_at),
  closedAt: row.closed_at === null ? null : new Date(row.closed_at),
});

export async function findHold(em: EntityManager, holdId: string): Promise<HoldView | null> {
  const [row] = await sqlRows<HoldRow>(em, `select ${HOLD_COLUMNS} from holds where id = ?`, [holdId]);
  return row ? toHoldView(row) : null;
}

/** Newest first, at most `limit`. */
export async function listActiveHolds(em: EntityManager, accountId: string, limit = 200): Promise<HoldView[]> {
  const rows = await sqlRows<HoldRow>(em, `select ${HOLD_COLUMNS} from holds where account_id = ? and status = 'active' order by created_at desc, id desc limit ?`, [accountId, limit]);
  return rows.map(toHoldView);
}

/** 404 `not_found` when the key is not the account's. */
export async function getKeyMonthSpend(em: EntityManager, accountId: string, keyId: string, month: string): Promise<KeyMonthSpendView> {
  const [row] = await sqlRows<{ limit_micro: string | null; settled_micro: string | null; reserved_micro: string | null; limit_reached_at: Date | null }>(
    em,
    `select k.monthly_spend_limit_micro as limit_micro, s.settled_micro, s.reserved_micro, s.limit_reached_at
       from api_keys k left join key_month_spend s on s.key_id = k.id and s.month = ?
      where k.id = ? and k.account_id = ?`,
    [month, keyId, accountId],
  );
  if (!row) throw notFound(`No key '${keyId}' in this account.`);
  const settledMicro = BigInt(row.settled_micro ?? '0');
  const reservedMicro = BigInt(row.reserved_micro ?? '0');
  const spentMicro = settledMicro + reservedMicro;
  const limitMicro = row.limit_micro === null ? null : BigInt(row.limit_micro);
  return {
    keyId,
    month,
    limitMicro,
    settledMicro,
    reservedMicro,
    spentMicro,
    remainingMicro: limitMicro === null ? null : limitMicro > spentMicro ? limitMicro - spentMicro : 0n,
    limitReachedAt: row.limit_reached_at === null ? null : new Date(row.limit_reached_at),
    resetsAt: monthResetsAt(month),
  };
}

interface UsageRow {
  id: string;
  key_id: string | null;
  key_name: string | null;
  hold_id: string;
  request_id: string | null;
  model: string;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_5m_input_tokens: number;
  cache_write_1h_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  images: number;
  video_seconds: number;
  cost_micro: string;
  overage_micro: string;
  status: string;
  latency_ms: number;
  created_at: Date;
}

const toUsageView = (row: UsageRow): UsageRecordView => ({
  id: row.id,
  keyId: row.key_id,
  keyName: row.key_name,
  holdId: row.hold_id,
  requestId: row.request_id,
  model: row.model,
  inputTokens: row.input_tokens,
  cachedInputTokens: row.cached_input_tokens,
  cacheWrite5mInputTokens: row.cache_write_5m_input_tokens,
  cacheWrite1hInputTokens: row.cache_write_1h_input_tokens,
  outputTokens: row.output_tokens,
  reasoningTokens: row.reasoning_tokens,
  images: row.images,
  videoSeconds: row.video_seconds,
  costMicro: BigInt(row.cost_micro),
  overageMicro: BigInt(row.overage_micro),
  status: row.status,
  latencyMs: row.latency_ms,
  createdAt: new Date(row.created_at),
});

const USAGE_COLUMNS = `u.id, u.key_id, k.name as key_name, u.hold_id, u.request_id, u.model, u.input_tokens, u.cached_input_tokens,
  u.cache_write_5m_input_tokens, u.cache_write_1h_input_tokens, u.output_tokens, u.reasoning_tokens, u.images, u.video_seconds,
  u.cost_micro, u.overage_micro, u.status, u.latency_ms, u.created_at`;

export const USAGE_STATUSES = ['ok', 'partial', 'failed'] as const;

/**
 * Usage records (the request log) of an account, newest first (created_at, then id), filtered
 * by key, model, status and time range. The cursor is a record id; its (created_at, id) position
 * is looked up, so pages stay stable while new records arrive, and each page is one index range
 * read (keyset), however deep.
 */
export async function listUsageRecords(em: EntityManager, accountId: string, filter: UsageFilter): Promise<UsageRecordPage> {
  const where = ['u.account_id = ?'];
  const params: (string | number)[] = [accountId];
  if (filter.keyId !== null) {
    const [key] = await sqlRows(em, 'select id from api_keys where id = ? and account_id = ?', [filter.keyId, accountId]);
    if (!key) throw notFound(`No key '${filter.keyId}' in this account.`, { field: 'usage.keyId' });
    where.push('u.key_id = ?');
    params.push(filter.keyId);
  }
  if (filter.model != null) {
    where.push('u.model = ?');
    params.push(filter.model);
  }
  if (filter.status != null) {
    where.push('u.status = ?');
    params.push(filter.status);
  }
  if (filter.from !== null) {
    where.push('u.created_at >= ?');
    params.push(filter.from.toISOString());
  }
  if (filter.to !== null) {
    where.push('u.created_at < ?');
    params.push(filter.to.toISOString());
  }
  if (filter.after !== null) {
    const anchor = isWellFormedId(filter.after, 'use')
      ? (await sqlRows<{ created_at: Date }>(em, 'select created_at from usage_records where id = ? and account_id = ?', [filter.after, accountId]))[0]
      : undefined;
    if (!anchor) throw badRequest('The page cursor must be the id of a usage record of this account', { field: 'page.after' });
    where.push('(u.created_at, u.id) < (?::timestamptz, ?)');
    params.push(new Date(anchor.created_at).toISOString(), filter.after);
  }
  const rows = await sqlRows<UsageRow>(
    em,
    `select ${USAGE_COLUMNS} from usage_records u left join api_keys k on k.id = u.key_id
      where ${where.join(' and ')} order by u.created_at desc, u.id desc limit ?`,
    [...params, filter.limit + 1],
  );
  const data = rows.slice(0, filter.limit).map(toUsageView);
  return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: rows.length > filter.limit };
}

/** One usage record of the account, by its id or its request id; null when there is none. */
export async function findUsageRecord(em: EntityManager, accountId: string, by: { id: string } | { requestId: string }): Promise<UsageRecordView | null> {
  if ('id' in by && !isWellFormedId(by.id, 'use')) return null;
  const [row] = await sqlRows<UsageRow>(
    em,
    `select ${USAGE_COLUMNS} from usage_records u left join api_keys k on k.id = u.key_id
      where u.account_id = ? and ${'id' in by ? 'u.id = ?' : 'u.request_id = ?'} order by u.created_at desc limit 1`,
    [accountId, 'id' in by ? by.id : by.requestId],
  );
  return row ? toUsageView(row) : null;
}

export async function auditAccount(em: EntityManager, accountId: string): Promise<AccountAudit> {
  const [row] = await sqlRows<{ balance_micro: string; reserved_micro: string; ledger_sum: string; active_holds: string }>(
    em,
    `select a.balance_micro, a.reserved_micro,
            (select coalesce(sum(amount_micro), 0) from ledger_entries l where l.account_id = a.id) as ledger_sum,
            (select coalesce(sum(amount_micro), 0) from holds h where h.account_id = a.id and h.status = 'active' and h.plan_user_id is null) as active_holds
       from accounts a where a.id = ?`,
    [accountId],
  );
  if (!row) throw notFound(`No account '${accountId}'.`);
  const audit = {
    balanceMicro: BigInt(row.balance_micro),
    ledgerSumMicro: BigInt(row.ledger_sum),
    reservedMicro: BigInt(row.reserved_micro),
    activeHoldsMicro: BigInt(row.active_holds),
  };
  return { ...audit, consistent: audit.balanceMicro === audit.ledgerSumMicro && audit.reservedMicro === audit.activeHoldsMicro };
}
