import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { KeyPrincipal } from '../domain/shared/principal';
import type { AdmissionService } from '../domain/limits/admission';
import type { AdmissionTicket } from '../domain/limits/ticket';
import { keyPrincipal } from './auth';
import { setHeaders } from './http';

/**
 * Admission for an API-key request, right after authentication: admits it (429 when over a
 * limit: the refusal carries its own headers, which the error envelope applies), puts the
 * rate-limit headers on the answer before any body (successes and streams alike), and frees the concurrency slot when the response closes: finished, failed
 * or abandoned by the client. Null when the client left while it was being admitted.
 */
export async function admitRequest(
  admission: AdmissionService,
  principal: KeyPrincipal,
  res: ServerResponse,
): Promise<AdmissionTicket | null> {
  let closed = false;
  let ticket: AdmissionTicket | undefined;
  // Listen before admitting: a client that leaves while we wait for the store must still free its slot.
  res.once('close', () => {
    closed = true;
    // A slot that cannot be freed (store down) expires by its TTL; never an unhandled rejection.
    ticket?.release().catch(() => undefined);
  });
  ticket = await admission.admit(principal);
  // `closed` misses a client that left before we listened (during authentication).
  if (closed || res.destroyed) {
    await ticket.release();
    return null;
  }
  setHeaders(res, ticket.headers());
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
