import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Hold } from '../domain/billing/entities';
import {
  toUsageView,
  type AccountAudit,
  type BillingReads,
  type UsageFilter,
  type UsageRecordFields,
  type UsageRecordView,
} from '../domain/billing/queries';
import { isWellFormedId } from '../domain/shared/ids';
import { sqlRows } from './sql';

const bigOrNull = (value: string | null): bigint | null => (value === null ? null : BigInt(value));

/** The read side of billing on PostgreSQL; rows come back as the entities (MikroORM maps the columns). */
export class PgBillingReads implements BillingReads {
  constructor(private readonly orm: MikroORM) {}

  async findHold(holdId: string): Promise<Hold | null> {
    return (await this.entities(Hold, 'select * from holds where id = ?', [holdId]))[0] ?? null;
  }

  listActiveHolds(accountId: string, limit: number): Promise<Hold[]> {
    return this.entities(Hold, `select * from holds where account_id = ? and status = 'active' order by created_at desc, id desc limit ?`, [
      accountId,
      limit,
    ]);
  }

  async keyMonthSpend(accountId: string, keyId: string, month: string) {
    const [row] = await sqlRows<{
      limit_micro: string | null;
      settled_micro: string | null;
      reserved_micro: string | null;
      limit_reached_at: Date | null;
    }>(
      this.em(),
      `select k.monthly_spend_limit_micro as limit_micro, s.settled_micro, s.reserved_micro, s.limit_reached_at
         from api_keys k left join key_month_spend s on s.key_id = k.id and s.month = ?
        where k.id = ? and k.account_id = ?`,
      [month, keyId, accountId],
    );
    if (!row) return null;
    return {
      limitMicro: bigOrNull(row.limit_micro),
      settledMicro: BigInt(row.settled_micro ?? '0'),
      reservedMicro: BigInt(row.reserved_micro ?? '0'),
      limitReachedAt: row.limit_reached_at === null ? null : new Date(row.limit_reached_at),
    };
  }

  async keyBelongsTo(accountId: string, keyId: string): Promise<boolean> {
    return (await sqlRows(this.em(), 'select id from api_keys where id = ? and account_id = ?', [keyId, accountId])).length > 0;
  }

  async usageRecordCreatedAt(accountId: string, recordId: string): Promise<Date | null> {
    const [row] = await sqlRows<{ created_at: Date }>(this.em(), 'select created_at from usage_records where id = ? and account_id = ?', [
      recordId,
      accountId,
    ]);
    return row ? new Date(row.created_at) : null;
  }

  usageRecords(accountId: string, filter: UsageFilter, after: { id: string; createdAt: Date } | null): Promise<UsageRecordView[]> {
    const where = ['u.account_id = ?'];
    const params: (string | number)[] = [accountId];
    const match = (clause: string, value: string | null) => {
      if (value === null) return;
      where.push(clause);
      params.push(value);
    };
    match('u.key_id = ?', filter.keyId);
    match('u.model = ?', filter.model ?? null);
    match('u.status = ?', filter.status ?? null);
    match('u.created_at >= ?', filter.from?.toISOString() ?? null);
    match('u.created_at < ?', filter.to?.toISOString() ?? null);
    if (after !== null) {
      where.push('(u.created_at, u.id) < (?::timestamptz, ?)');
      params.push(after.createdAt.toISOString(), after.id);
    }
    return this.usageViews(`where ${where.join(' and ')} order by u.created_at desc, u.id desc limit ?`, [...params, filter.limit + 1]);
  }

  async findUsageRecord(accountId: string, by: { id: string } | { requestId: string }): Promise<UsageRecordView | null> {
    if ('id' in by && !isWellFormedId(by.id, 'use')) return null;
    const where = 'id' in by ? 'u.id = ?' : 'u.request_id = ?';
    const [view] = await this.usageViews(`where u.account_id = ? and ${where} order by u.created_at desc limit 1`, [
      accountId,
      'id' in by ? by.id : by.requestId,
    ]);
    return view ?? null;
  }

  async accountSums(accountId: string): Promise<Omit<AccountAudit, 'consistent'> | null> {
    const [row] = await sqlRows<{ balance_micro: string; reserved_micro: string; ledger_sum: string; active_holds: string }>(
      this.em(),
      `select a.balance_micro, a.reserved_micro,
              (select coalesce(sum(amount_micro), 0) from ledger_entries l where l.account_id = a.id) as ledger_sum,
              (select coalesce(sum(amount_micro), 0) from holds h where h.account_id = a.id and h.status = 'active' and h.plan_user_id is null) as active_holds
         from accounts a where a.id = ?`,
      [accountId],
    );
    if (!row) return null;
    return {
      balanceMicro: BigInt(row.balance_micro),
      ledgerSumMicro: BigInt(row.ledger_sum),
      reservedMicro: BigInt(row.reserved_micro),
      activeHoldsMicro: BigInt(row.active_holds),
    };
  }

  /** Usage records with their key's current name, as the request log shows them. */
  private async usageViews(tail: string, params: (string | number)[]): Promise<UsageRecordView[]> {
    const rows = await sqlRows<UsageRow>(
      this.em(),
      `select u.*, k.name as key_name from usage_records u left join api_keys k on k.id = u.key_id ${tail}`,
      params,
    );
    // Mapped here rather than by em.map: a request-log page (an export reads a thousand at a time)
    // need not become managed entities, each with a reference to its account, in an identity map.
    return rows.map((row) => toUsageView(usageFields(row), row.key_name));
  }

  async availableMicro(accountId: string): Promise<bigint | null> {
    const [row] = await sqlRows<{ available: string }>(
      this.em(),
      'select balance_micro - reserved_micro as available from accounts where id = ?',
      [accountId],
    );
    return row ? BigInt(row.available) : null;
  }

  async planAllowanceUse(userId: string, month: string): Promise<{ allowanceMicro: bigint; usedMicro: bigint }> {
    const [row] = await sqlRows<{ allowance: string | null; used: string }>(
      this.em(),
      `select p.monthly_allowance_micro as allowance, coalesce(u.used_micro + u.reserved_micro, 0) as used
         from users us left join plans p on p.id = us.plan_id left join plan_month_usage u on u.user_id = us.id and u.month = ?
        where us.id = ?`,
      [month, userId],
    );
    return { allowanceMicro: BigInt(row?.allowance ?? '0'), usedMicro: BigInt(row?.used ?? '0') };
  }

  async autoTopUp(accountId: string): Promise<{ thresholdMicro: bigint | null; amountMicro: bigint | null } | null> {
    const [row] = await sqlRows<{ threshold: string | null; amount: string | null }>(
      this.em(),
      'select auto_top_up_threshold_micro as threshold, auto_top_up_amount_micro as amount from accounts where id = ?',
      [accountId],
    );
    return row ? { thresholdMicro: bigOrNull(row.threshold), amountMicro: bigOrNull(row.amount) } : null;
  }

  /** A fork per call: reads only, nothing kept between calls. */
  private em(): EntityManager {
    return this.orm.em.fork();
  }

  private async entities<T extends object>(entity: new () => T, sql: string, params: (string | number)[]): Promise<T[]> {
    const em = this.em();
    const rows = await sqlRows<Record<string, unknown>>(em, sql, params);
    return rows.map((row) => em.map(entity, row));
  }
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
  deployment: string | null;
}

const usageFields = (row: UsageRow): UsageRecordFields => ({
  id: row.id,
  keyId: row.key_id,
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
  deployment: row.deployment,
});
