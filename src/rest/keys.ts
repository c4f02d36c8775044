import { Router, type RequestHandler } from 'express';
import type { AuthService } from '../domain/accounts/auth';
import type { KeyService, KeyView } from '../domain/keys/service';
import type { KeyEventView } from '../domain/shared/events';
import { parseKeyKind, parseKeyName, parseSpendLimit } from '../domain/keys/rules';
import { unixSeconds } from '../domain/shared/clock';
import { badRequest, invalidToken } from '../domain/shared/errors';
import { bearerToken, requireSession, sessionPrincipal } from './auth';
import { bodyObject } from './http';
import { pageCursor, pageSize } from '../domain/shared/pages';
import { refuseUnknownFields } from '../protocols/decode-fields';

/** The fields each body accepts (others are refused); the API document is built from these lists. */
export const KEY_CREATE_FIELDS = ['name', 'kind', 'monthly_spend_limit_micro', 'expires_at'] as const;
export const KEY_UPDATE_FIELDS = ['name', 'monthly_spend_limit_micro'] as const;
export const SIGN_IN_FIELDS = ['email', 'password'] as const;

const seconds = (at: Date | null): number | null => (at ? unixSeconds(at) : null);

export function renderKey(key: KeyView): Record<string, unknown> {
  return {
    id: key.id,
    object: 'api_key',
    name: key.name,
    kind: key.kind,
    prefix: key.prefix,
    created_at: unixSeconds(key.createdAt),
    last_used_at: seconds(key.lastUsedAt),
    expires_at: seconds(key.expiresAt),
    revoked_at: seconds(key.revokedAt),
    monthly_spend_limit_micro: key.monthlySpendLimitMicro?.toString() ?? null,
    month_spent_micro: key.monthSpentMicro.toString(),
  };
}

export function renderKeyEvent(event: KeyEventView): Record<string, unknown> {
  return {
    id: event.id,
    object: 'key_event',
    key_id: event.keyId,
    kind: event.kind,
    created_at: unixSeconds(event.createdAt),
    actor_user_id: event.actorUserId,
    data: event.data,
  };
}

/** `expires_at` as Unix seconds (REST timestamps are Unix seconds), or null. */
function parseExpiresAt(value: unknown): Date | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > 253402300799) {
    throw badRequest('expires_at must be a Unix timestamp in seconds (integer) or null', { field: 'expires_at' });
  }
  return new Date(value * 1000);
}

/** Key management for signed-in sessions (docs/api.md, Sessions and key management). */
export function keysRouter(auth: AuthService, keys: KeyService, jsonBody: RequestHandler): Router {
  const router = Router();
  router.use('/keys', requireSession(auth), jsonBody);

  router.post('/keys', async (req, res) => {
    const body = bodyObject(req.body);
    refuseUnknownFields(Object.keys(body), KEY_CREATE_FIELDS);
    const created = await keys.createKey(sessionPrincipal(res), {
      name: parseKeyName(body.name),
      kind: body.kind === undefined ? 'prepaid' : parseKeyKind(body.kind),
      monthlySpendLimitMicro: body.monthly_spend_limit_micro === undefined ? null : parseSpendLimit(body.monthly_spend_limit_micro),
      expiresAt: parseExpiresAt(body.expires_at),
    });
    res.status(201).json({ ...renderKey(created.key), secret: created.secret });
  });

  router.get('/keys', async (_req, res) => {
    const list = await keys.listKeys(sessionPrincipal(res).accountId);
    res.json({ object: 'list', data: list.map(renderKey) });
  });

  router.get('/keys/:id', async (req, res) => {
    res.json(renderKey(await keys.getKey(sessionPrincipal(res).accountId, req.params.id)));
  });

  router.patch('/keys/:id', async (req, res) => {
    const body = bodyObject(req.body);
    refuseUnknownFields(Object.keys(body), KEY_UPDATE_FIELDS);
    const updated = await keys.updateKey(sessionPrincipal(res), req.params.id, {
      name: body.name === undefined ? undefined : parseKeyName(body.name),
      monthlySpendLimitMicro: body.monthly_spend_limit_micro === undefined ? undefined : parseSpendLimit(body.monthly_spend_limit_micro),
    });
    res.json(renderKey(updated));
  });

  router.delete('/keys/:id', async (req, res) => {
    res.json(renderKey(await keys.revokeKey(sessionPrincipal(res), req.params.id)));
  });

  router.get('/keys/:id/events', async (req, res) => {
    const page = await keys.listEvents(sessionPrincipal(res).accountId, req.params.id, {
      limit: pageSize(req.query.limit),
      after: pageCursor(req.query.after),
    });
    res.json({ object: 'list', data: page.data.map(renderKeyEvent), first_id: page.firstId, last_id: page.lastId, has_more: page.hasMore });
  });

  return router;
}

/** Sign-in and sign-out (docs/api.md, Sessions and key management). */
export function sessionsRouter(auth: AuthService, jsonBody: RequestHandler): Router {
  const router = Router();
  router.use('/auth/sessions', jsonBody);

  router.post('/auth/sessions', async (req, res) => {
    const body = bodyObject(req.body);
    refuseUnknownFields(Object.keys(body), SIGN_IN_FIELDS);
    if (typeof body.email !== 'string' || body.email.length === 0) throw badRequest('email must be a non-empty string', { field: 'email' });
    if (typeof body.password !== 'string' || body.password.length === 0)
      throw badRequest('password must be a non-empty string', { field: 'password' });
    const session = await auth.signIn(body.email, body.password, req.socket.remoteAddress);
    res.status(201).json({
      object: 'session',
      token: session.token,
      expires_at: unixSeconds(session.expiresAt),
      user_id: session.session.userId,
      account_id: session.session.accountId,
    });
  });

  router.delete('/auth/sessions/current', async (req, res) => {
    const token = bearerToken(req);
    if (!token) throw invalidToken('Send the session token as Authorization: Bearer <token>.');
    const session = await auth.authenticateSession(token);
    await auth.signOut(session.sessionId);
    res.status(204).end();
  });

  return router;
}
