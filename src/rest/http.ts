import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { Logger } from 'pino';
import { ApiError, badRequest, notFound } from '../domain/shared/errors';
import { RateLimitRefusal } from '../domain/limits/admission';
import { applyRefusalHeaders } from './admission';
import type { IdGenerator } from '../domain/shared/ids';

/** Per-request facts the access log line reports (never a secret or a prompt). */
export interface RequestFacts {
  requestId: string;
  accountId?: string;
  keyId?: string;
  model?: string;
  costMicro?: bigint;
}

export const facts = (res: Response): RequestFacts => res.locals.facts as RequestFacts;

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `x-request-id` on every answer (the caller's when sane) and one JSON log line per request. */
export function requestContext(ids: IdGenerator, log: Logger): RequestHandler {
  return (req, res, next) => {
    const sent = req.header('x-request-id');
    const requestId = sent && SANE_REQUEST_ID.test(sent) ? sent : ids.next('req');
    res.locals.facts = { requestId } satisfies RequestFacts;
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    const path = req.path; // captured here: routers mounted under /v1 see a shorter req.path
    res.on('close', () => {
      const f = facts(res);
      log.info({
        request_id: f.requestId,
        method: req.method,
        path,
        status: res.statusCode,
        latency_ms: Number(process.hrtime.bigint() - started) / 1e6,
        account_id: f.accountId,
        key_id: f.keyId,
        model: f.model,
        cost_micro: f.costMicro?.toString(),
        aborted: !res.writableFinished || undefined,
      });
    });
    next();
  };
}

export function sendError(res: Response, error: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(error.status).json({ error: { code: error.code, message: error.message, details: error.details } });
}

/** JSON bodies only, within the size limit; malformed JSON is 400, not 500. */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true });
  const requireJson: RequestHandler = (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD') return next();
    const length = req.header('content-length');
    if (!req.is('application/json') && !(length === '0' || (length === undefined && !req.header('transfer-encoding')))) {
      return next(new ApiError(415, 'unsupported_media_type', 'The request body must be JSON (Content-Type: application/json).'));
    }
    next();
  };
  return [requireJson, parse];
}

/** The request body as an object, or 400 naming what was sent instead. */
export function bodyObject(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

/** Refuses fields the endpoint does not know, naming them. */
export function rejectUnknownFields(body: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw badRequest(`Unsupported field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, { fields: unknown });
}

export const unknownPath: RequestHandler = (req, _res, next) => next(notFound(`No such endpoint: ${req.method} ${req.path}`));

interface BodyParserError {
  type?: string;
  status?: number;
}

/** The one place REST errors become the envelope. Defects are logged and answered 500 without internals. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof RateLimitRefusal) applyRefusalHeaders(res, error);
    if (error instanceof ApiError) return sendError(res, error);
    const parserError = error as BodyParserError;
    if (parserError?.type === 'entity.parse.failed') return sendError(res, badRequest('The request body is not valid JSON.'));
    if (parserError?.type === 'entity.too.large') return sendError(res, new ApiError(413, 'payload_too_large', 'The request body is larger than the configured limit.'));
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
      return sendError(res, new ApiError(415, 'unsupported_media_type', 'Unsupported request body encoding.'));
    }
    if (parserError?.type === 'request.aborted') return;
    if (isDatabaseUnavailable(error)) {
      return sendError(res, new ApiError(503, 'unavailable', 'The database is unavailable; nothing was charged. Retry shortly.'));
    }
    log.error({ err: error, request_id: facts(res)?.requestId }, 'unhandled error');
    sendError(res, new ApiError(500, 'internal_error', 'Internal error.'));
  };
}

function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === 'ECONNREFUSED' || code === '57P01' || code === '57P03' || code === 'ETIMEDOUT' || /connection terminated|timeout exceeded when trying to connect/i.test(String((error as Error)?.message));
}
