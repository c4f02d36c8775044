import type { RequestHandler, Response } from 'express';
import { RateLimitRefusal, type AdmissionService, type AdmissionTicket } from '../domain/limits/admission';
import type { RateLimitHeaders } from '../domain/limits/windows';
import { keyPrincipal } from './auth';

/**
 * Admission for API-key routes; mount right after requireApiKey. Admits the request (429
 * when over a limit), puts the rate-limit headers on the answer before any body (successes,
 * errors and streams alike), leaves the ticket in `res.locals.admission` for the pipeline
 * (token reservation and settlement), and frees the concurrency slot when the response
 * closes: finished, failed or abandoned by the client.
 */
export function admitApiKeyRequests(admission: AdmissionService): RequestHandler {
  return async (_req, res, next) => {
    let closed = false;
    let ticket: AdmissionTicket | undefined;
    // Listen before admitting: a client that leaves while we wait for the store must still free its slot.
    res.once('close', () => {
      closed = true;
      // A slot that cannot be freed (store down) expires by its TTL; never an unhandled rejection.
      ticket?.release().catch(() => undefined);
    });
    try {
      ticket = await admission.admit(keyPrincipal(res));
    } catch (error) {
      if (error instanceof RateLimitRefusal) applyRefusalHeaders(res, error);
      throw error;
    }
    // `closed` misses a client that left before this middleware listened (during authentication).
    if (closed || res.destroyed) {
      await ticket.release();
      return;
    }
    res.locals.admission = ticket;
    setRateLimitHeaders(res, ticket.headers());
    next();
  };
}

/** The request's admission ticket (set by admitApiKeyRequests). */
export function admissionTicket(res: Response): AdmissionTicket {
  const ticket = res.locals.admission as AdmissionTicket | undefined;
  if (!ticket) throw new Error('admitApiKeyRequests is not mounted on this route');
  return ticket;
}

export function setRateLimitHeaders(res: Response, headers: RateLimitHeaders): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
}

/** The headers of a 429: the rate-limit state at refusal and `Retry-After` in seconds. */
export function applyRefusalHeaders(res: Response, refusal: RateLimitRefusal): void {
  if (res.headersSent) return;
  if (refusal.rateLimitHeaders) setRateLimitHeaders(res, refusal.rateLimitHeaders);
  res.setHeader('Retry-After', String(refusal.retryAfterSeconds));
}

