/**
 * The one error type of Tollgate. Domain code throws it; each plane maps it to its wire form
 * in one place (REST: the `{error: {code, message, details}}` envelope with the error's own
 * headers; GraphQL: `extensions.code`, in the server's formatError).
 */
export type ErrorDetails = Record<string, unknown>;

/** HTTP headers an error's answer carries (a rate-limit refusal's `Retry-After`, say). */
export type ErrorHeaders = Readonly<Record<string, string>>;

const NO_HEADERS: ErrorHeaders = Object.freeze({});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
    /** Put on the REST answer when its headers are not yet sent; GraphQL has no use for them. */
    readonly headers: ErrorHeaders = NO_HEADERS,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, details?: ErrorDetails) =>
  new ApiError(400, 'bad_request', message, details);
export const invalidToken = (message = 'The API key is wrong, revoked or expired.') =>
  new ApiError(401, 'invalid_token', message);
export const sessionRequired = () =>
  new ApiError(403, 'session_required', 'This operation needs a signed-in session, not an API key.');
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
/** `why`: what keeps a model the catalog knows from this key (an unknown id gets the plain message). */
export const modelNotAvailable = (sentId: string, why?: string) =>
  new ApiError(404, 'model_not_available', why ? `The model '${sentId}' ${why}` : `The model '${sentId}' does not exist or this key cannot use it.`);

/** A store other than the database (the video storage) cannot be reached or refuses us: a passing outage to retry, nothing charged. */
export const storageUnavailable = (what: string, reason: string) =>
  new ApiError(503, 'unavailable', `The ${what} is unavailable (${reason}); nothing was charged. Retry shortly.`);

/**
 * A storage failure that is the caller's input or a passing outage, not a defect: text the
 * database cannot store (NUL, invalid UTF-8) is a 400; a database that is down or restarting is a
 * 503 with nothing charged. Null for anything else. Both planes answer through this.
 */
export function storageErrorAsApiError(error: unknown): ApiError | null {
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as Error | null)?.message);
  // 08P01 "invalid message format" is what a NUL inside a bound parameter gets from the server.
  if (code === '22021' || code === '22P05' || (code === '08P01' && /invalid message format/.test(message)) || /invalid byte sequence for encoding|unsupported Unicode escape sequence/.test(message)) {
    return badRequest('A text value contains a character that cannot be stored (such as NUL).');
  }
  if (code === 'ECONNREFUSED' || code === '57P01' || code === '57P03' || code === 'ETIMEDOUT' || /connection terminated|timeout exceeded when trying to connect/i.test(message)) {
    return new ApiError(503, 'unavailable', 'The database is unavailable; nothing was charged. Retry shortly.');
  }
  return null;
}
