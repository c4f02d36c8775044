import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest, type FieldKey } from '../shared/errors';
import { sqlRows, type SqlParam } from '../shared/sql';

/**
 * Spend over a period, added up by the database from the daily aggregates (usage_daily): a few
 * rows per day whatever the number of requests, so it is exact at any volume. Days are UTC.
 */
export type SpendGrouping = 'day' | 'model' | 'key';

export interface SpendQuery {
  /** First UTC day, YYYY-MM-DD, inclusive. */
  from: string;
  /** Last UTC day, YYYY-MM-DD, inclusive. */
  to: string;
  groupBy: SpendGrouping;
  keyId: string | null;
  model: string | null;
}

export interface SpendFigures {
  costMicro: bigint;
  overageMicro: bigint;
  requests: number;
  failedRequests: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  images: number;
  videoSeconds: number;
  /** Mean latency of the group's requests (ms); 0 without requests. */
  averageLatencyMs: number;
}

export interface SpendGroup extends SpendFigures {
  /** Set when grouped by day (every day of the period, zero-filled). */
  day: string | null;
  /** Set when grouped by model. */
  model: string | null;
  /** Set when grouped by key; null with keyName null for requests made without a key. */
  keyId: string | null;
  keyName: string | null;
}

export interface SpendReport {
  from: string;
  to: string;
  groupBy: SpendGrouping;
  total: SpendFigures;
  groups: SpendGroup[];
}

/** The longest period one report covers (days). */
export const MAX_SPEND_DAYS = 400;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A UTC calendar day `YYYY-MM-DD`, or 400 naming the field. */
export function parseDay(value: string, field: FieldKey, what: string): string {
  const at = new Date(`${value}T00:00:00Z`);
  if (!DAY.test(value) || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== value)
    throw badRequest(`${what} must be a UTC day written as YYYY-MM-DD`, { field });
  return value;
}

export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

/** The period checked: from ≤ to, at most MAX_SPEND_DAYS days. Defaults: the 30 days ending today. */
export function spendPeriod(from: string | null, to: string | null, today: Date): { from: string; to: string } {
  const last = to === null ? dayOf(today) : parseDay(to, 'usage.to', 'The last day');
  const first =
    from === null ? dayOf(new Date(Date.parse(`${last}T00:00:00Z`) - 29 * 86_400_000)) : parseDay(from, 'usage.from', 'The first day');
  const days = (Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / 86_400_000 + 1;
  if (days < 1) throw badRequest('The first day must not be after the last day', { field: 'usage.from' });
  if (days > MAX_SPEND_DAYS) throw badRequest(`The period spans ${days} days; at most ${MAX_SPEND_DAYS}`, { field: 'usage.from' });
  return { from: first, to: last };
}

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

const toFigures = (r: SumsRow): SpendFigures => ({
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
  averageLatencyMs: r.requests > 0 ? Math.round(r.latency / r.requests) : 0,
});

export async function spendReport(em: EntityManager, accountId: string, query: SpendQuery): Promise<SpendReport> {
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
  let groups: SpendGroup[];
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
    groups = rows.map((r) => ({ ...toFigures(r), day: r.day, model: null, keyId: null, keyName: null }));
  } else if (query.groupBy === 'model') {
    const rows = await sqlRows<SumsRow & { model: string }>(
      em,
      `select d.model, ${SUMS} from usage_daily d where ${filter} group by d.model order by sum(d.cost_micro) desc, d.model`,
      params,
    );
    groups = rows.map((r) => ({ ...toFigures(r), day: null, model: r.model, keyId: null, keyName: null }));
  } else {
    const rows = await sqlRows<SumsRow & { key_id: string; key_name: string | null }>(
      em,
      `select d.key_id, k.name as key_name, ${SUMS} from usage_daily d left join api_keys k on k.id = d.key_id
        where ${filter} group by d.key_id, k.name order by sum(d.cost_micro) desc, d.key_id`,
      params,
    );
    groups = rows.map((r) => ({ ...toFigures(r), day: null, model: null, keyId: r.key_id === '' ? null : r.key_id, keyName: r.key_name }));
  }
  return { from: query.from, to: query.to, groupBy: query.groupBy, total: toFigures(total!), groups };
}
