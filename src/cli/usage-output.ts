import type { UsageRecordView } from '../domain/billing/queries';
import type { KeyView } from '../domain/keys/service';
import type { SpendFigures, SpendReport } from '../domain/usage/spend';
import { usd, type JsonRecord, type Printable } from './output';

/** What the key and usage commands print: JSON like the REST plane (micro-dollar strings), tables in dollars. */
const keyStatus = (k: KeyView, now: Date): string => (k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= now ? 'expired' : 'active');

export function keyRecord(k: KeyView, now: Date): JsonRecord {
  return {
    id: k.id,
    name: k.name,
    kind: k.kind,
    prefix: k.prefix,
    status: keyStatus(k, now),
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    monthly_spend_limit_micro: k.monthlySpendLimitMicro?.toString() ?? null,
    month_spent_micro: k.monthSpentMicro.toString(),
  };
}

const KEY_COLUMNS = ['id', 'name', 'kind', 'prefix', 'status', 'month spent', 'monthly limit', 'last used'];
const keyRow = (k: KeyView, now: Date): string[] => [
  k.id,
  k.name,
  k.kind,
  k.prefix,
  keyStatus(k, now),
  usd(k.monthSpentMicro),
  k.monthlySpendLimitMicro === null ? '-' : usd(k.monthlySpendLimitMicro),
  k.lastUsedAt?.toISOString() ?? '-',
];

export const keysOutput = (keys: KeyView[], now: Date, footer?: string[]): Printable => ({
  json: keys.map((k) => keyRecord(k, now)),
  columns: KEY_COLUMNS,
  rows: keys.map((k) => keyRow(k, now)),
  footer,
});
export const keyOutput = (k: KeyView, now: Date): Printable => ({ json: keyRecord(k, now), columns: KEY_COLUMNS, rows: [keyRow(k, now)] });

const figuresRecord = (f: SpendFigures): JsonRecord => ({
  cost_micro: f.costMicro.toString(),
  requests: f.requests,
  failed_requests: f.failedRequests,
  input_tokens: f.inputTokens,
  cached_input_tokens: f.cachedInputTokens,
  cache_write_input_tokens: f.cacheWriteInputTokens,
  output_tokens: f.outputTokens,
  images: f.images,
  video_seconds: f.videoSeconds,
  average_latency_ms: f.averageLatencyMs,
});

const figuresRow = (f: SpendFigures): string[] => [
  usd(f.costMicro),
  String(f.requests),
  String(f.failedRequests),
  String(f.inputTokens),
  String(f.outputTokens),
];

/** JSON: the report whole; table: one row per group and a total line. */
export function spendOutput(report: SpendReport): Printable {
  const label = (g: SpendReport['groups'][number]): string =>
    g.day ?? g.model ?? (g.keyId === null ? '(no key)' : `${g.keyName ?? ''} ${g.keyId}`.trim());
  return {
    json: {
      from: report.from,
      to: report.to,
      time_zone: 'UTC',
      group_by: report.groupBy,
      total: figuresRecord(report.total),
      groups: report.groups.map((g) => ({
        ...(g.day ? { day: g.day } : {}),
        ...(g.model ? { model: g.model } : {}),
        ...(report.groupBy === 'key' ? { key_id: g.keyId, key_name: g.keyName } : {}),
        ...figuresRecord(g),
      })),
    },
    columns: [report.groupBy, 'cost', 'requests', 'failed', 'input tokens', 'output tokens'],
    rows: [...report.groups.map((g) => [label(g), ...figuresRow(g)]), ['TOTAL', ...figuresRow(report.total)]],
    footer: [`${report.from} to ${report.to} (UTC days, inclusive)`],
  };
}

export function requestRecord(u: UsageRecordView): JsonRecord {
  return {
    id: u.id,
    created_at: u.createdAt.toISOString(),
    request_id: u.requestId,
    key_id: u.keyId,
    key_name: u.keyName,
    model: u.model,
    status: u.status,
    input_tokens: u.inputTokens,
    cached_input_tokens: u.cachedInputTokens,
    output_tokens: u.outputTokens,
    reasoning_tokens: u.reasoningTokens,
    images: u.images,
    video_seconds: u.videoSeconds,
    cost_micro: u.costMicro.toString(),
    latency_ms: u.latencyMs,
  };
}

export const requestsOutput = (rows: UsageRecordView[], next: string | null): Printable => ({
  json: rows.map(requestRecord),
  columns: ['time', 'key', 'model', 'status', 'in', 'out', 'cost', 'ms', 'request id'],
  rows: rows.map((u) => [
    u.createdAt.toISOString(),
    u.keyName ?? u.keyId ?? '-',
    u.model,
    u.status,
    String(u.inputTokens),
    String(u.outputTokens),
    usd(u.costMicro),
    String(u.latencyMs),
    u.requestId ?? '-',
  ]),
  footer: next ? [`More: add --after ${next}`] : undefined,
});
