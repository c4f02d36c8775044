/** A request's usage as the vendor reported it, and how its answer ended: what a settlement records. */
export type UsageStatus = 'ok' | 'partial' | 'failed';

/** Counts as the vendor reported them; all optional, default 0. */
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

/** A count as the usage_records column takes it (a 32-bit integer), or a RangeError naming the field. */
export const usageCount = (value: number | undefined, field: string): number => {
  const n = value ?? 0;
  if (!Number.isSafeInteger(n) || n < 0 || n > 2_147_483_647) throw new RangeError(`${field} must be a non-negative 32-bit integer, got ${n}`);
  return n;
};
