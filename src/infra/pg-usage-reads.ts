import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { LedgerKind } from '../domain/billing/entities';
import type { LedgerEntryView, LedgerReads } from '../domain/billing/ledger';
import type { SpendGroupLabel, SpendQuery, SpendReads, SpendSums } from '../domain/usage/spend';
import { sqlRows, type SqlParam } from './sql';

const SUMS = `coalesce(sum(d.cost_micro), 0)::text as cost, coalesce(sum(d.overage_micro), 0)::text as overage,
  coalesce(sum(d.requests), 0)::float8 as requests, coalesce(sum(d.failed_requests), 0)::float8 as failed,
  coalesce(sum(d.input_tokens), 0)::float8 as input, coalesce(sum(d.cached_input_tokens), 0)::float8 as cached,
  coalesce(sum(d.cache_write_5m_input_tokens + d.cache_write_1h_input_tokens), 0)::float8 as cache_write,
  coalesce(sum(d.output_tokens), 0)::float8 as output, coalesce(sum(d.reasoning_tokens), 0)::float8 as reasoning,
  coalesce(sum(d.images), 0)::float8 as images, coalesce(sum(d.video_seconds), 0)::float8 as video_seconds,
  coalesce(sum(d.latency_ms), 0)::float8 as latency`;

interface SumsRow {
  cost: string;
  overage: string;
  requests: number;
  failed: number;
  input: number;
  cached: number;
  cache_write: number;
  output: number;
  reasoning: number;
  images: number;
  video_seconds: number;
  latency: number;
}

const toSums = (r: SumsRow): SpendSums => ({
  costMicro: BigInt(r.cost),
  overageMicro: BigInt(r.overage),
  requests: r.requests,
  failedRequests: r.failed,
  inputTokens: r.input,
  cachedInputTokens: r.cached,
  cacheWriteInputTokens: r.cache_write,
  outputTokens: r.output,
  reasoningTokens: r.reasoning,
  images: r.images,
  videoSeconds: r.video_seconds,
  latencyMs: r.latency,
});

const NO_LABEL: SpendGroupLabel = { day: null, model: null, keyId: null, keyName: null };

/** What an account used and paid, read on PostgreSQL: the ledger, and spend from the daily aggregates (usage_daily). */
export class PgUsageReads implements LedgerReads, SpendReads {
  constructor(private readonly orm: MikroORM) {}

  async ledgerEntries(
    accountId: string,
    query: { kind: LedgerKind | null; before: string | null; limit: number },
  ): Promise<LedgerEntryView[]> {
    const where = ['account_id = ?'];
    const params: SqlParam[] = [accountId];
    if (query.kind !== null) {
      where.push('kind = ?');
      params.push(query.kind);
    }
    if (query.before !== null) {
      where.push('id < ?');
      params.push(query.before);
    }
    const rows = await sqlRows<{
      id: string;
      kind: LedgerKind;
      amount_micro: string;
      key_id: string | null;
      note: string | null;
      created_at: Date;
    }>(
      this.em(),
      `select id, kind, amount_micro::text as amount_micro, key_id, note, created_at from ledger_entries where ${where.join(' and ')} order by id desc limit ?`,
      [...params, query.limit],
    );
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      amountMicro: BigInt(r.amount_micro),
      keyId: r.key_id,
      note: r.note,
      createdAt: new Date(r.created_at),
    }));
  }

  async spendSums(accountId: string, query: SpendQuery): Promise<{ total: SpendSums; groups: (SpendSums & SpendGroupLabel)[] }> {
    const em = this.em();
    const where = ['d.account_id = ?', 'd.day >= ?::date', 'd.day <= ?::date'];
    const params: SqlParam[] = [accountId, query.from, query.to];
    if (query.keyId !== null) {
      where.push('d.key_id = ?');
      params.push(query.keyId);
    }
    if (query.model !== null) {
      where.push('d.model = ?');
      params.push(query.model);
    }
    const filter = where.join(' and ');
    const [total] = await sqlRows<SumsRow>(em, `select ${SUMS} from usage_daily d where ${filter}`, params);
    let groups: (SpendSums & SpendGroupLabel)[];
    if (query.groupBy === 'day') {
      // Every day of the period, those without usage as zeros.
      const rows = await sqlRows<SumsRow & { day: string }>(
        em,
        `select g.day::date::text as day, ${SUMS}
           from generate_series(?::date, ?::date, interval '1 day') g(day)
           left join usage_daily d on d.day = g.day::date and ${filter}
          group by g.day order by g.day`,
        [query.from, query.to, ...params],
      );
      groups = rows.map((r) => ({ ...toSums(r), ...NO_LABEL, day: r.day }));
    } else if (query.groupBy === 'model') {
      const rows = await sqlRows<SumsRow & { model: string }>(
        em,
        `select d.model, ${SUMS} from usage_daily d where ${filter} group by d.model order by sum(d.cost_micro) desc, d.model`,
        params,
      );
      groups = rows.map((r) => ({ ...toSums(r), ...NO_LABEL, model: r.model }));
    } else {
      const rows = await sqlRows<SumsRow & { key_id: string; key_name: string | null }>(
        em,
        `select d.key_id, k.name as key_name, ${SUMS} from usage_daily d left join api_keys k on k.id = d.key_id
          where ${filter} group by d.key_id, k.name order by sum(d.cost_micro) desc, d.key_id`,
        params,
      );
      // Requests made without a key are aggregated under the key id '' (usage_daily's key is part of its primary key).
      groups = rows.map((r) => ({ ...toSums(r), ...NO_LABEL, keyId: r.key_id === '' ? null : r.key_id, keyName: r.key_name }));
    }
    return { total: toSums(total!), groups };
  }

  /** A fork per call: reads only, nothing kept between calls. */
  private em(): EntityManager {
    return this.orm.em.fork();
  }
}
