/**
 * The one error type of Tollgate and its one table of codes. Domain code throws it; each plane
 * maps it to its wire form in one place (REST: the `{error: {code, message, details}}` envelope
 * with the error's own headers; GraphQL: `extensions.code`, in the server's formatError).
 *
 * Every code is made by a named factory below (ProviderError, RateLimitRefusal and
 * TextFieldRefusal are the subclasses that sit beside the failures they describe). `details.field`
 * names the offending field: a domain field key (`FieldKey`) that each plane translates to the
 * name its caller sent, a text field key (generation/field-keys.ts) that the client's text format
 * names, or, from a protocol decoder, the wire name itself.
 */
export type ErrorDetails = Record<string, unknown>;

/** HTTP headers an error's answer carries (a rate-limit refusal's `Retry-After`, say). */
export type ErrorHeaders = Readonly<Record<string, string>>;

/** One row of the error table: its status, when it is answered and what its `details` hold. */
export interface ErrorCodeEntry {
  status: number;
  when: string;
  details: string;
}

/** The error table; docs/api.md repeats it and a test holds the two equal. */
export const ERROR_CODES = {
  bad_request: {
    status: 400,
    when: 'A field is missing, malformed, unknown or out of range; the body is not JSON or not a valid multipart form',
    details: '`field` (null for the body as a whole); some add `model`, `sizes`, `limit`, `limit_value`',
  },
  invalid_token: {
    status: 401,
    when: 'The API key, session token or operator token is missing, wrong, revoked or expired; a sign-in with a wrong email or password',
    details: '—',
  },
  api_insufficient_balance: {
    status: 402,
    when: "The prepaid balance cannot cover the request's hold",
    details: '`required_micro`, `available_micro`',
  },
  api_key_spend_limit_reached: {
    status: 402,
    when: "The key's monthly spend limit cannot cover the request's hold",
    details: '`limit_micro`, `spent_micro`, `resets_at`',
  },
  plan_allowance_exhausted: {
    status: 402,
    when: "The plan's monthly allowance cannot cover the request",
    details: '`allowance_micro`, `used_micro`, `resets_at`',
  },
  session_required: { status: 403, when: 'An API key or the operator token on an operation that needs a signed-in session', details: '—' },
  api_wallet_key_required: { status: 403, when: 'A plan key on an image or video endpoint (they need a prepaid key)', details: '—' },
  not_found: {
    status: 404,
    when: 'No such key, video, account, user or route for this caller',
    details: '`field` when a sent field names it',
  },
  model_not_available: {
    status: 404,
    when: 'The model id does not resolve for this key (unknown, unpriced, vendor not configured, another modality)',
    details: '`field`',
  },
  conflict: { status: 409, when: 'A unique value is already taken (a user email)', details: '`field`' },
  idempotency_conflict: { status: 409, when: 'An `Idempotency-Key` reused with a different request body', details: '`field`' },
  key_revoked: { status: 409, when: 'Renaming or re-limiting a revoked key', details: '`revoked_at`' },
  video_not_ready: { status: 409, when: "A video's content or deletion asked for before the job finished", details: '`status`' },
  video_expired: { status: 410, when: "A video's content after its retention period", details: '`expired_at`' },
  payload_too_large: { status: 413, when: 'A body, upload or part over its configured limit', details: '`limit`, `limit_value`' },
  unsupported_media_type: { status: 415, when: 'A body in a content type or encoding the endpoint does not take', details: '—' },
  range_not_satisfiable: { status: 416, when: 'A `Range` outside the video', details: '`field`, `size`' },
  rate_limited: {
    status: 429,
    when: 'A requests or tokens window is full, or too many failed sign-ins',
    details: '`limit`, `limit_value`, `reset`, `retry_after_seconds`',
  },
  api_concurrency_limit: {
    status: 429,
    when: 'The concurrent-request limit is reached',
    details: '`limit`, `limit_value`, `retry_after_seconds`',
  },
  upstream_rate_limited: {
    status: 429,
    when: "Every deployment of a routed model is rate-limited by its vendor (each attempt answered 429, or each is cooling after one): nothing charged, retry after `Retry-After` (the vendors' soonest)",
    details: '`model`, `retry_after_seconds`',
  },
  internal_error: { status: 500, when: 'A defect: logged, answered without internals', details: '—' },
  provider_error: {
    status: 502,
    when: 'The vendor failed: HTTP error, timeout, broken connection, unreadable answer',
    details: '`vendor`, `vendor_status` when it answered',
  },
  client_cancelled: { status: 502, when: 'The client went away before the vendor answered (recorded, rarely seen)', details: '`vendor`' },
  unavailable: { status: 503, when: 'The database or video storage is away, or charges are behind: nothing charged, retry', details: '—' },
  deployments_unavailable: {
    status: 503,
    when: 'Every deployment of a routed model is cooling down after failures: nothing charged, retry after `Retry-After`',
    details: '`model`, `retry_after_seconds`',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

const NO_HEADERS: ErrorHeaders = Object.freeze({});

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    /** Put on the REST answer when its headers are not yet sent; GraphQL has no use for them. */
    readonly headers: ErrorHeaders = NO_HEADERS,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
  }
}

/**
 * The fields the domain refuses by name, as the domain calls them. Messages say what the field
 * is in the user's words ("Monthly limit"); `details.field` carries the key, which the plane
 * answering replaces with its own name (REST: the body field; GraphQL: the input field).
 */
export const FIELD_KEYS = [
  'account.name',
  'account.tier',
  'account.email',
  'account.password',
  'account.plan',
  'key.name',
  'key.kind',
  'key.monthlySpendLimit',
  'key.expiresAt',
  'page.after',
  'page.limit',
  'usage.keyId',
  'usage.month',
  'usage.range',
  'usage.from',
  'usage.to',
  'funds.amount',
  'autoTopUp.threshold',
  'autoTopUp.amount',
  'video.prompt',
  'video.seconds',
  'video.size',
  'video.resolution',
  'video.ratio',
  'video.idempotencyKey',
] as const;
export type FieldKey = (typeof FIELD_KEYS)[number];

/** A plane's names for the domain's field keys; a key it does not list is shown as it is. */
export type FieldNames = Readonly<Partial<Record<FieldKey, string>>>;

/** The error as a plane shows it: `details.field` in the plane's own name. */
export function detailsForPlane(error: ApiError, names: FieldNames): ErrorDetails {
  const field = error.details.field;
  if (typeof field !== 'string') return error.details;
  const named = names[field as FieldKey];
  return named === undefined ? error.details : { ...error.details, field: named };
}

/** `field` is the domain key or the wire name of the offending field; null for the body as a whole. */
export const badRequest = (message: string, details: { field: string | null } & ErrorDetails) =>
  new ApiError('bad_request', message, details);
export const invalidToken = (message = 'The API key is wrong, revoked or expired.') => new ApiError('invalid_token', message);
export const sessionRequired = () => new ApiError('session_required', 'This operation needs a signed-in session, not an API key.');
export const walletKeyRequired = () =>
  new ApiError('api_wallet_key_required', 'Image and video endpoints need a prepaid API key; plan-billed keys cannot use them.');
export const notFound = (message: string, details: { field?: string } = {}) => new ApiError('not_found', message, details);
/** `why`: what keeps a model the catalog knows from this key (an unknown id gets the plain message). */
export const modelNotAvailable = (sentId: string, why?: string) =>
  new ApiError(
    'model_not_available',
    why ? `The model '${sentId}' ${why}` : `The model '${sentId}' does not exist or this key cannot use it.`,
    { field: 'model' },
  );
export const conflict = (message: string, field: FieldKey) => new ApiError('conflict', message, { field });
export const idempotencyConflict = () =>
  new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body.', {
    field: 'video.idempotencyKey',
  });
export const keyRevoked = (keyId: string, revokedAt: Date) =>
  new ApiError('key_revoked', `The key '${keyId}' is revoked: it cannot be renamed or given a new spend limit.`, {
    revoked_at: revokedAt.toISOString(),
  });
export const videoNotReady = (message: string, status: string) => new ApiError('video_not_ready', message, { status });
export const videoExpired = (videoId: string, expiredAt: Date | null) =>
  new ApiError('video_expired', `The content of video '${videoId}' was deleted after its retention period.`, {
    expired_at: expiredAt ? Math.floor(expiredAt.getTime() / 1000) : null,
  });
export const payloadTooLarge = (message: string, limit: string, limitValue: number) =>
  new ApiError('payload_too_large', message, { limit, limit_value: limitValue });
export const unsupportedMediaType = (message: string) => new ApiError('unsupported_media_type', message);
export const rangeNotSatisfiable = (header: string, size: number) =>
  new ApiError('range_not_satisfiable', `Range: no part of '${header}' lies within the ${size} bytes of the video.`, {
    field: 'Range',
    size,
  });
export const internalError = () => new ApiError('internal_error', 'Internal error.');
/** A passing outage: nothing was charged, the caller retries (`headers`: a `retry-after`, say). */
export const unavailable = (message: string, headers?: ErrorHeaders) => new ApiError('unavailable', message, {}, headers);

export const insufficientBalance = (requiredMicro: bigint, availableMicro: string) =>
  new ApiError('api_insufficient_balance', 'The prepaid balance is too low for this request: add funds or enable automatic top-up.', {
    required_micro: requiredMicro.toString(),
    available_micro: availableMicro,
  });
export const keySpendLimitReached = (limitMicro: bigint | null, spentMicro: bigint, resetsAt: number) =>
  new ApiError(
    'api_key_spend_limit_reached',
    "This key's monthly spend limit cannot cover the request (settled charges and requests in flight count); it resets at the start of the next UTC month or when the limit is raised.",
    { limit_micro: limitMicro?.toString() ?? null, spent_micro: spentMicro.toString(), resets_at: resetsAt },
  );
export const planAllowanceExhausted = (
  allowanceMicro: bigint,
  usedMicro: bigint,
  resetsAt: number,
  message = "The plan's monthly allowance cannot cover this request; it resets at the start of the next UTC month.",
) =>
  new ApiError('plan_allowance_exhausted', message, {
    allowance_micro: allowanceMicro.toString(),
    used_micro: usedMicro.toString(),
    resets_at: resetsAt,
  });
export function tooManySignIns(waitMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(
    'rate_limited',
    `Too many failed sign-ins: retry in ${seconds} s.`,
    { limit: 'sign_in_failures', retry_after_seconds: seconds },
    { 'Retry-After': String(seconds) },
  );
}

/** A store other than the database (the video storage) cannot be reached or refuses us: a passing outage to retry, nothing charged. */
export const storageUnavailable = (what: string, reason: string) =>
  unavailable(`The ${what} is unavailable (${reason}); nothing was charged. Retry shortly.`);

/**
 * A storage failure that is the caller's input or a passing outage, not a defect: text the
 * database cannot store (NUL, invalid UTF-8) is a 400; a database that is down or restarting is a
 * 503 with nothing charged. Null for anything else. Both planes answer through this.
 */
export function storageErrorAsApiError(error: unknown): ApiError | null {
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as Error | null)?.message);
  // 08P01 "invalid message format" is what a NUL inside a bound parameter gets from the server.
  if (
    code === '22021' ||
    code === '22P05' ||
    (code === '08P01' && /invalid message format/.test(message)) ||
    /invalid byte sequence for encoding|unsupported Unicode escape sequence/.test(message)
  ) {
    return badRequest('A text value contains a character that cannot be stored (such as NUL).', { field: null });
  }
  if (
    code === 'ECONNREFUSED' ||
    code === '57P01' ||
    code === '57P03' ||
    code === 'ETIMEDOUT' ||
    /connection terminated|timeout exceeded when trying to connect/i.test(message)
  ) {
    return unavailable('The database is unavailable; nothing was charged. Retry shortly.');
  }
  return null;
}

/** Every deployment of a routed model is cooled; `seconds` until the soonest comes back (also its Retry-After). */
export const deploymentsUnavailable = (modelId: string, seconds: number) =>
  new ApiError(
    'deployments_unavailable',
    `Every deployment of the model '${modelId}' is cooling down after failures; nothing was charged. Retry in ${seconds} s.`,
    { model: modelId, retry_after_seconds: seconds },
    { 'retry-after': String(seconds) },
  );

/**
 * Every deployment of a routed model is rate-limited by its vendor: 429, so clients back off
 * (the official SDKs wait for Retry-After), with `seconds` the soonest vendor Retry-After.
 */
export const upstreamRateLimited = (modelId: string, seconds: number) =>
  new ApiError(
    'upstream_rate_limited',
    `Every deployment of the model '${modelId}' is rate-limited by its vendor; nothing was charged. Retry in ${seconds} s.`,
    { model: modelId, retry_after_seconds: seconds },
    { 'retry-after': String(seconds) },
  );
