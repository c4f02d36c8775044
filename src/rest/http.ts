import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, badRequest, notFound } from '../domain/shared/errors';
import { RateLimitRefusal } from '../domain/limits/admission';
import { applyRefusalHeaders } from './admission';
import type { IdGenerator } from '../domain/shared/ids';
import type { Metrics, RequestOutcome, TraceSpan, Tracer } from '../domain/shared/telemetry';

/*
 * The REST plane's HTTP basics as plain node:http functions, so that Express routes and the
 * text endpoints (served on node:http directly, see text-endpoints.ts) share one implementation
 * of request ids, the access log, JSON bodies and the error envelope. The Express middlewares
 * at the end of the file only adapt them.
 */

/**
 * Per-request facts the access log line reports (never a secret or a prompt). The same object
 * is what the metrics are told when the request ends (a RequestOutcome), so observing a
 * request allocates nothing more.
 */
export interface RequestFacts extends RequestOutcome {
  requestId: string;
  accountId?: string;
  keyId?: string;
  costMicro?: bigint;
  /** The request's trace span (tracing on only). */
  span?: TraceSpan;
}

/** What every request is observed with: ids, the access log, metrics and (when on) traces. */
export interface RequestObservers {
  ids: IdGenerator;
  log: Logger;
  metrics: Metrics;
  /** Null when tracing is off: then no tracer call is made at all. */
  tracer: Tracer | null;
  /** The route pattern of a request whose route is only known once it is answered (Express). */
  endpointOf(method: string, path: string): string;
}

const FACTS = Symbol('tollgate.requestFacts');
type WithFacts = ServerResponse & { [FACTS]?: RequestFacts };

export const facts = (res: ServerResponse): RequestFacts => (res as WithFacts)[FACTS]!;

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * `x-request-id` on the answer (the caller's when sane) and, when the response closes, one JSON
 * log line: `info`, or `warn` when the answer is a 5xx or a stream that ended on an error event
 * (a vendor failure, say), with the error's code and message, so an operator sees why. A client
 * that leaves is no failure (its request is cancelled, no error answered): `info`, `aborted`.
 */
export function beginRequest(req: IncomingMessage, res: ServerResponse, observers: RequestObservers, path: string, endpoint: string | null): RequestFacts {
  const { log, tracer } = observers;
  const sent = req.headers['x-request-id'];
  const requestId = typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : observers.ids.next('req');
  const method = req.method ?? 'GET';
  const requestFacts: RequestFacts = { requestId, endpoint: endpoint ?? '', method, status: 0, seconds: 0 };
  (res as WithFacts)[FACTS] = requestFacts;
  res.setHeader('x-request-id', requestId);
  if (tracer !== null) requestFacts.span = startRequestSpan(tracer, requestFacts, path);
  const started = process.hrtime.bigint();
  res.on('close', () => {
    requestFacts.status = res.statusCode;
    requestFacts.seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (endpoint === null) requestFacts.endpoint = observers.endpointOf(method, path);
    observers.metrics.requestFinished(requestFacts);
    if (requestFacts.span) endRequestSpan(requestFacts.span, requestFacts);
    const failed = res.statusCode >= 500 || (requestFacts.error !== undefined && res.statusCode < 300);
    const level = failed ? 'warn' : 'info';
    if (!log.isLevelEnabled(level)) return;
    log[level]({
      request_id: requestFacts.requestId,
      method,
      path,
      status: res.statusCode,
      latency_ms: requestFacts.seconds * 1000,
      account_id: requestFacts.accountId,
      key_id: requestFacts.keyId,
      model: requestFacts.model,
      cost_micro: requestFacts.costMicro?.toString(),
      aborted: !res.writableFinished || undefined,
      error_code: requestFacts.error?.code,
      error: requestFacts.error?.message,
    });
  });
  return requestFacts;
}

/** The request's server span, named once its route is known (HTTP semantic conventions). */
function startRequestSpan(tracer: Tracer, requestFacts: RequestFacts, path: string): TraceSpan {
  return tracer.startRequest(requestFacts.endpoint ? `${requestFacts.method} ${requestFacts.endpoint}` : requestFacts.method, {
    'http.request.method': requestFacts.method,
    'url.path': path,
    'tollgate.request_id': requestFacts.requestId,
  });
}

function endRequestSpan(span: TraceSpan, requestFacts: RequestFacts): void {
  span.setName(`${requestFacts.method} ${requestFacts.endpoint}`);
  span.setAttributes({
    'http.route': requestFacts.endpoint,
    'http.response.status_code': requestFacts.status,
    'tollgate.model': requestFacts.model,
    'tollgate.account_id': requestFacts.accountId,
    'tollgate.cost_micro': requestFacts.costMicro?.toString(),
  });
  if (requestFacts.error) span.fail(requestFacts.error.code, requestFacts.error.message);
  span.end();
}

/** Remembers the error answered for the request's log line (when the request has facts). */
export function noteError(res: ServerResponse, error: ApiError): void {
  const requestFacts = (res as WithFacts)[FACTS];
  if (requestFacts) requestFacts.error = { code: error.code, message: error.message };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  noteError(res, error);
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.status, { error: { code: error.code, message: error.message, details: error.details } });
}

/** The client went away while its body was being read: nobody is left to answer. */
class RequestAborted extends Error {}

const unsupportedMediaType = (message: string) => new ApiError(415, 'unsupported_media_type', message);
const tooLarge = () => new ApiError(413, 'payload_too_large', 'The request body is larger than the configured limit.');

/** The request's body after Content-Encoding (gzip, deflate and br are accepted, as body-parser did). */
function decodedBody(req: IncomingMessage): Readable {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return req;
  const inflate = encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (!inflate) throw unsupportedMediaType('Unsupported request body encoding.');
  req.on('error', (error) => inflate.destroy(error));
  return req.pipe(inflate);
}

/**
 * The JSON body of a request (any JSON value), or `undefined` when it has none. 415 when it is
 * not declared as JSON (or not UTF-8), 413 beyond `limitBytes` (decoded), 400 when malformed.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const length = req.headers['content-length'];
  if (length === undefined ? req.headers['transfer-encoding'] === undefined : length === '0') return undefined;
  const type = req.headers['content-type'] ?? '';
  const semicolon = type.indexOf(';');
  if ((semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase() !== 'application/json') {
    throw unsupportedMediaType('The request body must be JSON (Content-Type: application/json).');
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw unsupportedMediaType(`Unsupported charset '${charset}': send UTF-8.`);
  if (length !== undefined && req.headers['content-encoding'] === undefined && Number(length) > limitBytes) throw tooLarge();
  const body = decodedBody(req);
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        body.removeAllListeners('data');
        body.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    body.once('end', resolve);
    // A zlib error is the client's bad body; any other error while reading is the connection
    // failing (reset, aborted): nobody is left to answer, and it is no defect of ours.
    body.once('error', (error: Error & { code?: string }) => reject(error.code?.startsWith('Z_') ? badRequest('The request body could not be decompressed.') : new RequestAborted()));
    req.once('aborted', () => reject(new RequestAborted()));
  });
  const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
}

/** The request body as an object, or 400 naming what was sent instead. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

/** Refuses fields the endpoint does not know, naming them. */
export function rejectUnknownFields(body: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw badRequest(`Unsupported field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, { fields: unknown });
}

/** The one place REST errors become the envelope. Defects are logged and answered 500 without internals. */
export function answerError(res: ServerResponse, error: unknown, log: Logger): void {
  if (error instanceof RequestAborted) return;
  if (error instanceof RateLimitRefusal) applyRefusalHeaders(res, error);
  if (error instanceof ApiError) return sendError(res, error);
  if (isDatabaseUnavailable(error)) {
    return sendError(res, new ApiError(503, 'unavailable', 'The database is unavailable; nothing was charged. Retry shortly.'));
  }
  log.error({ err: error, request_id: facts(res)?.requestId }, 'unhandled error');
  sendError(res, new ApiError(500, 'internal_error', 'Internal error.'));
}

function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === 'ECONNREFUSED' || code === '57P01' || code === '57P03' || code === 'ETIMEDOUT' || /connection terminated|timeout exceeded when trying to connect/i.test(String((error as Error)?.message));
}

// ---- Express adapters -------------------------------------------------------------------

export function requestContext(observers: RequestObservers): RequestHandler {
  return (req, res, next) => {
    beginRequest(req, res, observers, req.path, null); // captured here: routers mounted under /v1 see a shorter req.path
    next();
  };
}

/** Parses JSON bodies (readJsonBody) into `req.body` for the Express routes. */
export function jsonBody(limitBytes: number): RequestHandler {
  return async (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD') return next();
    req.body = await readJsonBody(req, limitBytes);
    next();
  };
}

export const unknownPath: RequestHandler = (req, _res, next) => next(notFound(`No such endpoint: ${req.method} ${req.path}`));

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction) => answerError(res, error, log);
}
