import { formatResetDuration } from './durations';

/**
 * Rolling windows (docs/limits.md): an entry recorded at `t` counts while
 * `now - t < window`, i.e. it leaves the window at exactly `t + window`. Nothing is
 * aligned to clock seconds or minutes.
 */
export const SECOND_WINDOW_MS = 1_000;
export const MINUTE_WINDOW_MS = 60_000;

/** The limits that apply to one admission subject (a prepaid account, or a plan user). */
export interface AppliedLimits {
  /** `prepaid`: an account's tier limits; `plan`: the per-user request window of a plan. */
  readonly kind: 'prepaid' | 'plan';
  /** The tier number for prepaid accounts; null for plan users. */
  readonly tier: number | null;
  readonly requestsPerSecond: number | null;
  readonly requestsPerMinute: number;
  readonly tokensPerMinute: number | null;
  readonly concurrentRequests: number | null;
}

/** What a store knows about one subject at one instant (`at`, epoch ms). */
export interface WindowSnapshot {
  at: number;
  /** Requests recorded in the last 60 s (including the one just admitted, if any). */
  requestsInMinute: number;
  /** When the oldest request still in the minute window was recorded; null when empty. */
  oldestRequestAt: number | null;
  /** Settled token usage recorded in the last 60 s. */
  settledTokens: number;
  /** When the oldest settled usage still in the window was recorded; null when none. */
  oldestSettledAt: number | null;
  /** Tokens reserved by requests in flight (not yet settled). */
  inFlightTokens: number;
  /** Concurrency slots held right now. */
  slotsInUse: number;
}

/** The `x-ratelimit-*` headers every answer to an API key carries (docs/limits.md); token headers only for prepaid accounts. */
export interface RateLimitHeaders {
  'x-ratelimit-limit-requests': string;
  'x-ratelimit-remaining-requests': string;
  'x-ratelimit-reset-requests': string;
  'x-ratelimit-limit-tokens'?: string;
  'x-ratelimit-remaining-tokens'?: string;
  'x-ratelimit-reset-tokens'?: string;
}

/** Requests left in the rolling minute; never negative (a lowered tier can leave it over). */
export const remainingRequests = (limits: AppliedLimits, s: WindowSnapshot): number =>
  Math.max(0, limits.requestsPerMinute - s.requestsInMinute);

/** Tokens left: limit − (settled in the last 60 s + in flight); never negative. */
export const remainingTokens = (tokensPerMinute: number, s: WindowSnapshot): number =>
  Math.max(0, tokensPerMinute - s.settledTokens - s.inFlightTokens);

/**
 * Reset of the request window: time until the OLDEST request in it leaves, i.e. the next
 * moment `remaining` grows (and, when remaining is 0, when a request is admitted again).
 * The alternative reading, "until every request has left", would always read ~60 s on a
 * successful answer, because the answer's own request was just recorded. Empty window: 0.
 */
export const requestsResetMs = (s: WindowSnapshot): number =>
  s.oldestRequestAt === null ? 0 : Math.max(0, s.oldestRequestAt + MINUTE_WINDOW_MS - s.at);

/**
 * Reset of the token window: time until the oldest settled usage leaves it. In-flight
 * reservations leave no earlier than 60 s after they settle, so with only reservations
 * in the window the reset is a full minute; with nothing at all it is 0.
 */
export function tokensResetMs(s: WindowSnapshot): number {
  if (s.oldestSettledAt !== null) return Math.max(0, s.oldestSettledAt + MINUTE_WINDOW_MS - s.at);
  return s.inFlightTokens > 0 ? MINUTE_WINDOW_MS : 0;
}

/** The header values for a subject's limits and window state. */
export function rateLimitHeaders(limits: AppliedLimits, s: WindowSnapshot): RateLimitHeaders {
  const headers: RateLimitHeaders = {
    'x-ratelimit-limit-requests': String(limits.requestsPerMinute),
    'x-ratelimit-remaining-requests': String(remainingRequests(limits, s)),
    'x-ratelimit-reset-requests': formatResetDuration(requestsResetMs(s)),
  };
  if (limits.tokensPerMinute !== null) {
    headers['x-ratelimit-limit-tokens'] = String(limits.tokensPerMinute);
    headers['x-ratelimit-remaining-tokens'] = String(remainingTokens(limits.tokensPerMinute, s));
    headers['x-ratelimit-reset-tokens'] = formatResetDuration(tokensResetMs(s));
  }
  return headers;
}
