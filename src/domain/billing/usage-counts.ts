/** A request's usage as the vendor reported it, and how its answer ended: what a settlement records. */
export type UsageStatus = 'ok' | 'partial' | 'failed';

/** Counts as the vendor reported them; all optional, default 0. */
export interface UsageCounts {
  /** The whole prompt: its parts below included. */
  inputTokens?: number;
  /** Read from the vendor's prompt cache. */
  cachedInputTokens?: number;
  /** Written to the vendor's prompt cache, entries that live 5 minutes and 1 hour. */
  cacheWrite5mInputTokens?: number;
  cacheWrite1hInputTokens?: number;
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
  /** The deployment that served a routed model (docs/routing.md); null otherwise. */
  deployment?: string | null;
}

/** The token counts a usage record stores, each checked as its column takes it (usageCount). */
export function recordedTokenCounts(u: UsageCounts) {
  return {
    inputTokens: usageCount(u.inputTokens, 'inputTokens'),
    cachedInputTokens: usageCount(u.cachedInputTokens, 'cachedInputTokens'),
    cacheWrite5mInputTokens: usageCount(u.cacheWrite5mInputTokens, 'cacheWrite5mInputTokens'),
    cacheWrite1hInputTokens: usageCount(u.cacheWrite1hInputTokens, 'cacheWrite1hInputTokens'),
    outputTokens: usageCount(u.outputTokens, 'outputTokens'),
    reasoningTokens: usageCount(u.reasoningTokens, 'reasoningTokens'),
  };
}

/** A count as the usage_records column takes it (a 32-bit integer), or a RangeError naming the field. */
export const usageCount = (value: number | undefined, field: string): number => {
  const n = value ?? 0;
  if (!Number.isSafeInteger(n) || n < 0 || n > 2_147_483_647)
    throw new RangeError(`${field} must be a non-negative 32-bit integer, got ${n}`);
  return n;
};
