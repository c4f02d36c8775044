import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { AuthService } from '../domain/accounts/auth';
import { bearerCredential, requirePrepaidKey, type KeyPrincipal, type SessionPrincipal } from '../domain/shared/principal';
import { invalidToken } from '../domain/shared/errors';
import { accessLogRecord } from './http';

export const bearerToken = (req: IncomingMessage): string | null => bearerCredential(req.headers.authorization);

/** The request's API key principal (`Authorization: Bearer`, or `x-api-key` where the Anthropic SDK sends it); 401 without a valid key. */
export async function authenticateApiKey(
  auth: AuthService,
  req: IncomingMessage,
  res: ServerResponse,
  options: { allowXApiKey: boolean },
): Promise<KeyPrincipal> {
  const xApiKey = req.headers['x-api-key'];
  const token = bearerToken(req) ?? (options.allowXApiKey && typeof xApiKey === 'string' ? xApiKey : null);
  if (!token) throw invalidToken('Send the API key as Authorization: Bearer <key>.');
  const principal = await auth.authenticateApiKey(token);
  const record = accessLogRecord(res);
  record.accountId = principal.accountId;
  record.keyId = principal.keyId;
  return principal;
}

/** Express: requires an API key (see authenticateApiKey). */
export function requireApiKey(auth: AuthService, options: { allowXApiKey: boolean }): RequestHandler {
  return async (req, res, next) => {
    res.locals.principal = await authenticateApiKey(auth, req, res, options);
    next();
  };
}

/** Requires a signed-in session; an API key gets 403 `session_required`. */
export function requireSession(auth: AuthService): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (!token) throw invalidToken('Send the session token as Authorization: Bearer <token>.');
    const principal = await auth.authenticateSession(token);
    res.locals.principal = principal;
    accessLogRecord(res).accountId = principal.accountId;
    next();
  };
}

export const keyPrincipal = (res: Response): KeyPrincipal => res.locals.principal as KeyPrincipal;

/** Express, after requireApiKey: the media endpoints' prepaid-only rule, before any body is read. */
export const prepaidKeyOnly: RequestHandler = (_req, res, next) => {
  requirePrepaidKey(keyPrincipal(res));
  next();
};
export const sessionPrincipal = (res: Response): SessionPrincipal => res.locals.principal as SessionPrincipal;
