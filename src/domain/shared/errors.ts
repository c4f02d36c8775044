/**
 * The one error type of Tollgate. Domain code throws it; each plane maps it to its wire form
 * (REST: the `{error: {code, message, details}}` envelope; GraphQL: `extensions.code`).
 */
export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
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
export const modelNotAvailable = (sentId: string) =>
  new ApiError(404, 'model_not_available', `The model '${sentId}' does not exist or this key cannot use it.`);
