import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { KeyPrincipal } from '../domain/accounts/auth';
import { RateLimitRefusal, type AdmissionService, type AdmissionTicket } from '../domain/limits/admission';
import type { RateLimitHeaders } from '../domain/limits/windows';
import { keyPrincipal } from './auth';

/**
 * Admission for an API-key request, right after authentication: admits it (429 when over a
 * limit), puts the rate-limit headers on the answer before any body (successes, errors and
 * streams alike), and frees the concurrency slot when the response closes: finished, failed
 * or abandoned by the client. Null when the client left while it was being admitted.
 */
export async function admitRequest(admission: AdmissionService, principal: KeyPrincipal, res: ServerResponse): Promise<AdmissionTicket | null> {
  let closed = false;
  let ticket: AdmissionTicket | undefined;
  // Listen before admitting: a client that leaves while we wait for the store must still free its slot.
  res.once('close', () => {
    closed = true;
    // A slot that cannot be freed (store down) expires by its TTL; never an unhandled rejection.
    ticket?.release().catch(() => undefined);
  });
  try {
    ticket = await admission.admit(principal);
  } catch (error) {
    if (error instanceof RateLimitRefusal) applyRefusalHeaders(res, error);
    throw error;
  }
  // `closed` misses a client that left before we listened (during authentication).
  if (closed || res.destroyed) {
    await ticket.release();
    return null;
  }
  setRateLimitHeaders(res, ticket.headers());
  return ticket;
}

/** Express: admitRequest for API-key routes (mount after requireApiKey); the ticket goes to `res.locals.admission`. */
export function admitApiKeyRequests(admission: AdmissionService): RequestHandler {
  return async (_req, res, next) => {
    const ticket = await admitRequest(admission, keyPrincipal(res), res);
    if (!ticket) return;
    res.locals.admission = ticket;
    next();
  };
}

export function setRateLimitHeaders(res: ServerResponse, headers: RateLimitHeaders): void {
  if (res.headersSent) return;
  for (const name in headers) {
    const value = headers[name as keyof RateLimitHeaders];
    if (value !== undefined) res.setHeader(name, value);
  }
}

/** The headers of a 429: the rate-limit state at refusal and `Retry-After` in seconds. */
export function applyRefusalHeaders(res: ServerResponse, refusal: RateLimitRefusal): void {
  if (res.headersSent) return;
  if (refusal.rateLimitHeaders) setRateLimitHeaders(res, refusal.rateLimitHeaders);
  res.setHeader('Retry-After', String(refusal.retryAfterSeconds));
}
