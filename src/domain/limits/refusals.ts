import { ApiError, type ErrorDetails } from '../shared/errors';
import { formatResetDuration, retryAfterSeconds } from './durations';
import type { StoreOutcome, StoreRefusal } from './store';
import { rateLimitHeaders, type AppliedLimits, type RateLimitHeaders } from './windows';

/** The 429 answers of admission: what they say, which details and which headers they carry. */

/** A refusal: 429 `rate_limited` or `api_concurrency_limit`, with what the REST plane sends as headers. */
export class RateLimitRefusal extends ApiError {
  constructor(
    code: 'rate_limited' | 'api_concurrency_limit',
    message: string,
    details: ErrorDetails,
    /** For `Retry-After`: whole seconds, rounded up, at least 1. */
    readonly retryAfterSeconds: number,
    /** The rate-limit headers at the moment of refusal; null for a long job's slot. */
    readonly rateLimitHeaders: RateLimitHeaders | null,
  ) {
    super(code, message, details, { ...rateLimitHeaders, 'Retry-After': String(retryAfterSeconds) });
    this.name = 'RateLimitRefusal';
  }
}

function limitValue(limits: AppliedLimits, refusal: StoreRefusal): number {
  switch (refusal.limit) {
    case 'requests_per_second':
      return limits.requestsPerSecond ?? 0;
    case 'requests_per_minute':
      return limits.requestsPerMinute;
    case 'tokens_per_minute':
      return limits.tokensPerMinute ?? 0;
    case 'concurrent_requests':
      return limits.concurrentRequests ?? 0;
  }
}

const whose = (limits: AppliedLimits): string => (limits.kind === 'plan' ? "this user's plan" : `this account (tier ${limits.tier})`);

export function concurrencyRefusal(limits: AppliedLimits, headers: RateLimitHeaders | null): RateLimitRefusal {
  const seconds = retryAfterSeconds(1_000);
  return new RateLimitRefusal(
    'api_concurrency_limit',
    `Concurrent-request limit reached: ${limits.concurrentRequests} requests in flight for ${whose(limits)}. Retry after ${seconds} s or when an active request finishes.`,
    { limit: 'concurrent_requests', limit_value: limits.concurrentRequests, retry_after_seconds: seconds },
    seconds,
    headers,
  );
}

export function refusalFor(limits: AppliedLimits, outcome: StoreOutcome, extra: ErrorDetails = {}): RateLimitRefusal {
  const refusal = outcome.refusal as StoreRefusal;
  const headers = rateLimitHeaders(limits, outcome.snapshot);
  if (refusal.limit === 'concurrent_requests') return concurrencyRefusal(limits, headers);
  const value = limitValue(limits, refusal);
  const seconds = retryAfterSeconds(refusal.retryAfterMs);
  const what =
    refusal.limit === 'requests_per_second'
      ? `${value} requests per second`
      : refusal.limit === 'requests_per_minute'
        ? `${value} requests per minute`
        : `${value} tokens per minute`;
  return new RateLimitRefusal(
    'rate_limited',
    `Rate limit reached: ${what} for ${whose(limits)}. Retry after ${seconds} s.`,
    { limit: refusal.limit, limit_value: value, reset: formatResetDuration(refusal.retryAfterMs), retry_after_seconds: seconds, ...extra },
    seconds,
    headers,
  );
}
