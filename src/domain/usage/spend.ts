import { badRequest, type FieldKey } from '../shared/errors';

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

/** What the database adds up over a set of daily aggregates; the figures are derived from it. */
export interface SpendSums extends Omit<SpendFigures, 'averageLatencyMs'> {
  /** Summed over the requests (ms). */
  latencyMs: number;
}

/** Which group a row of sums is (the field of the report's grouping is set, the others null). */
export type SpendGroupLabel = Pick<SpendGroup, 'day' | 'model' | 'keyId' | 'keyName'>;

/** The port spend is read through (adapter: src/infra/pg-usage-reads.ts). */
export interface SpendReads {
  /**
   * The account's sums over the query's days (and key, model), in total and per group: by day,
   * every day of the period in order (zeros without usage); by model or key, dearest first.
   */
  spendSums(accountId: string, query: SpendQuery): Promise<{ total: SpendSums; groups: (SpendSums & SpendGroupLabel)[] }>;
}

const toFigures = ({ latencyMs, ...sums }: SpendSums): SpendFigures => ({
  ...sums,
  averageLatencyMs: sums.requests > 0 ? Math.round(latencyMs / sums.requests) : 0,
});

export async function spendReport(reads: SpendReads, accountId: string, query: SpendQuery): Promise<SpendReport> {
  const sums = await reads.spendSums(accountId, query);
  const groups = sums.groups.map(({ day, model, keyId, keyName, ...group }) => ({ ...toFigures(group), day, model, keyId, keyName }));
  return { from: query.from, to: query.to, groupBy: query.groupBy, total: toFigures(sums.total), groups };
}
