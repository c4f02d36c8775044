import { type IncomingMessage, type ServerResponse, validateHeaderValue } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Duplex, Readable } from 'node:stream';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import {
  ApiError,
  badRequest,
  type ErrorDetails,
  detailsForPlane,
  internalError,
  notFound,
  payloadTooLarge,
  storageErrorAsApiError,
  unsupportedMediaType,
} from '../domain/shared/errors';
import { REST_FIELD_NAMES } from './field-names';
import type { IdGenerator } from '../domain/shared/ids';
import type { Metrics, RequestOutcome, TraceSpan, Tracer } from '../domain/shared/telemetry';

/*
 * The REST plane's HTTP basics as plain node:http functions, so that Express routes and the
 * text endpoints (served on node:http directly, see text-endpoints.ts) share one implementation
 * of request ids, the access log, JSON bodies and the error envelope. The Express middlewares
 * at the end of the file only adapt them.
 */

/**
 * The request's access-log record: what its log line reports (never a secret or a prompt),
 * filled in as the request goes. The same object is what the metrics are told when the
 * request ends (a RequestOutcome), so observing a request allocates nothing more.
 */
export interface AccessLogRecord extends RequestOutcome {
  requestId: string;
  accountId?: string;
  keyId?: string;
  costMicro?: bigint;
  /** The request's trace span (tracing on only). */
  span?: TraceSpan;
  /** The answer's headers until it is sent, when gathered (beginRequest's `gatherHeaders`). */
  headers?: Record<string, string | number>;
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

const RECORD = Symbol('tollgate.accessLogRecord');
type WithRecord = ServerResponse & { [RECORD]?: AccessLogRecord };

/** The access-log record beginRequest attached to the response. */
export const accessLogRecord = (res: ServerResponse): AccessLogRecord => (res as WithRecord)[RECORD]!;

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * `gatherHeaders`: the answer's headers are kept on the record and sent with its status in one
 * writeHead (setHeaders, setAnswerHeader, sendJson, writeHeadWith), instead of res.setHeader's
 * dictionary, which costs each header a lower-cased key, a pair and a validation, and which
 * node walks again to write them (docs/performance.md). Only for handlers that answer through
 * these functions (the text endpoints); a header set with res.setHeader all the same (CORS) is
 * merged by writeHead.
 *
 * `x-request-id` on the answer (the caller's when sane) and, when the response closes, one JSON
 * log line: `info`, or `warn` when the answer is a 5xx or a stream that ended on an error event
 * (a vendor failure, say), with the error's code and message, so an operator sees why. A client
 * that leaves is no failure (its request is cancelled, no error answered): `info`, `aborted`.
 */
export function beginRequest(
  req: IncomingMessage,
  res: ServerResponse,
  observers: RequestObservers,
  path: string,
  endpoint: string | null,
  gatherHeaders = false,
): AccessLogRecord {
  const { log, tracer } = observers;
  const sent = req.headers['x-request-id'];
  const requestId = typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : observers.ids.next('req');
  const method = req.method ?? 'GET';
  // Every field the request may fill in, from the start: one shape for every record, its fields
  // in the object itself (added later, each would move the record to a new shape and the added
  // ones to a property store of their own, grown as they come).
  const record: AccessLogRecord = {
    requestId,
    endpoint: endpoint ?? '',
    method,
    status: 0,
    seconds: 0,
    accountId: undefined,
    keyId: undefined,
    model: undefined,
    vendor: undefined,
    deployment: undefined,
    attempts: undefined,
    vendorSeconds: undefined,
    costMicro: undefined,
    error: undefined,
    span: undefined,
    headers: gatherHeaders ? { 'x-request-id': requestId } : undefined,
  };
  (res as WithRecord)[RECORD] = record;
  if (!gatherHeaders) res.setHeader('x-request-id', requestId);
  if (tracer !== null) record.span = startRequestSpan(tracer, record, path);
  const started = process.hrtime.bigint();
  res.on('close', () => {
    record.status = res.statusCode;
    record.seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (endpoint === null) record.endpoint = observers.endpointOf(method, path);
    observers.metrics.requestFinished(record);
    if (record.span) endRequestSpan(record.span, record);
    const failed = res.statusCode >= 500 || (record.error !== undefined && res.statusCode < 300);
    const level = failed ? 'warn' : 'info';
    if (!log.isLevelEnabled(level)) return;
    log[level]({
      request_id: record.requestId,
      method,
      path,
      status: res.statusCode,
      latency_ms: record.seconds * 1000,
      account_id: record.accountId,
      key_id: record.keyId,
      model: record.model,
      deployment: record.deployment,
      attempts: record.attempts,
      cost_micro: record.costMicro?.toString(),
      aborted: !res.writableFinished || undefined,
      error_code: record.error?.code,
      error: record.error?.message,
    });
  });
  return record;
}

/** The request's server span, named once its route is known (HTTP semantic conventions). */
function startRequestSpan(tracer: Tracer, record: AccessLogRecord, path: string): TraceSpan {
  return tracer.startRequest(record.endpoint ? `${record.method} ${record.endpoint}` : record.method, {
    'http.request.method': record.method,
    'url.path': path,
    'tollgate.request_id': record.requestId,
  });
}

function endRequestSpan(span: TraceSpan, record: AccessLogRecord): void {
  span.setName(`${record.method} ${record.endpoint}`);
  span.setAttributes({
    'http.route': record.endpoint,
    'http.response.status_code': record.status,
    'tollgate.model': record.model,
    'tollgate.account_id': record.accountId,
    'tollgate.cost_micro': record.costMicro?.toString(),
  });
  if (record.error) span.fail(record.error.code, record.error.message);
  span.end();
}

/** Remembers the error answered for the request's log line (when the request has facts). */
export function noteError(res: ServerResponse, error: ApiError): void {
  const record = (res as WithRecord)[RECORD];
  if (record) record.error = { code: error.code, message: error.message };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const gathered = gatheredHeaders(res);
  if (gathered) {
    gathered['content-type'] = 'application/json; charset=utf-8';
    gathered['content-length'] = Buffer.byteLength(text);
    res.writeHead(status, gathered);
  } else {
    res.statusCode = status;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', Buffer.byteLength(text));
  }
  res.end(text);
}

/** The headers still to send, when the request gathers them (beginRequest); null once sent. */
function gatheredHeaders(res: ServerResponse): Record<string, string | number> | null {
  const record = (res as WithRecord)[RECORD];
  return record?.headers !== undefined && !res.headersSent ? record.headers : null;
}

/** Sends the status and every header, `more` added (the event stream's). */
export function writeHeadWith(res: ServerResponse, status: number, more: Readonly<Record<string, string>>): void {
  const gathered = gatheredHeaders(res);
  res.writeHead(status, gathered ? Object.assign(gathered, more) : more);
}

/**
 * Sets a header while it can still be sent. `value` may come from the client (a model id), so
 * it is checked as res.setHeader checks it, here where a refusal is still an ordinary error.
 */
export function setAnswerHeader(res: ServerResponse, name: string, value: string): void {
  if (res.headersSent) return;
  const gathered = gatheredHeaders(res);
  if (!gathered) {
    res.setHeader(name, value);
    return;
  }
  validateHeaderValue(name, value);
  gathered[name.toLowerCase()] = value;
}

/** Sets headers while they can still be sent (an answer under way keeps the ones it has); their values are Tollgate's own. */
export function setHeaders<H extends { readonly [K in keyof H]?: string }>(res: ServerResponse, headers: H): void {
  if (res.headersSent) return;
  const gathered = gatheredHeaders(res);
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    // Lower-cased as res.setHeader keys them, so that `Retry-After` and `retry-after` are one header.
    if (gathered) gathered[name.toLowerCase()] = value;
    else res.setHeader(name, value);
  }
}

/**
 * An endpoint's own error body (the Messages endpoints answer in Anthropic's shape); by default
 * the envelope. `details` is the error's, with `field` named as the REST caller sent it.
 */
export type ErrorBody = (error: ApiError, details: ErrorDetails) => unknown;

const envelope: ErrorBody = (error, details) => ({ error: { code: error.code, message: error.message, details } });

/** The error's details as REST shows them: a domain field key becomes the body field's name. */
const restDetails = (error: ApiError): ErrorDetails => detailsForPlane(error, REST_FIELD_NAMES);

export function sendError(res: ServerResponse, error: ApiError, body: ErrorBody = envelope): void {
  noteError(res, error);
  if (res.headersSent) {
    res.end();
    return;
  }
  setHeaders(res, error.headers);
  sendJson(res, error.status, body(error, restDetails(error)));
}

/** Whether the request declares a multipart/form-data body (read by multipart.ts, not here). */
export function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test(req.headers['content-type'] ?? '');
}

/** The client went away while its body was being read: nobody is left to answer. */
export class RequestAborted extends Error {}

const tooLarge = (limitBytes: number) =>
  payloadTooLarge(`The request body is larger than the limit of ${limitBytes} bytes.`, 'max_body_bytes', limitBytes);

/** The request's body after Content-Encoding (gzip, deflate and br are accepted, as body-parser did). */
function decodedBody(req: IncomingMessage): Readable {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return req;
  const inflate =
    encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (!inflate) throw unsupportedMediaType('Unsupported request body encoding.');
  // The connection's own failures reach the reader as RequestAborted; any other error of the
  // decompressor is the client's bad body, whatever its code (brotli's are not zlib's Z_*).
  req.on('error', () => inflate.destroy(new RequestAborted()));
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
  // Nearly every client sends the bare type: parameters (a charset) are looked for only when there are some.
  const charset = semicolon === -1 ? undefined : /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw unsupportedMediaType(`Unsupported charset '${charset}': send UTF-8.`);
  if (length !== undefined && req.headers['content-encoding'] === undefined && Number(length) > limitBytes) throw tooLarge(limitBytes);
  const body = decodedBody(req);
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        body.removeAllListeners('data');
        body.pause();
        reject(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    });
    // `on`, not `once`: each settles the promise at most once, and `once` would make and remove a
    // wrapper per listener per request (a second 'error' then also finds a listener).
    body.on('end', resolve);
    // A zlib error is the client's bad body; any other error while reading is the connection
    // failing (reset, aborted): nobody is left to answer, and it is no defect of ours.
    body.on('error', (error: Error) =>
      reject(
        error instanceof RequestAborted || body === req
          ? new RequestAborted()
          : badRequest('The request body could not be decompressed.', { field: null }),
      ),
    );
    req.on('aborted', () => reject(new RequestAborted()));
  });
  const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw badRequest('The request body is not valid JSON.', { field: null });
  }
}

/** The request body as an object, or 400 naming what was sent instead. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.', { field: null });
  return body as Record<string, unknown>;
}

/** The one place REST errors become the envelope (or an endpoint's own `body`). Defects are logged and answered 500 without internals. */
export function answerError(res: ServerResponse, error: unknown, log: Logger, body?: ErrorBody): void {
  // The client left (Express's sendFile says so with ECONNABORTED): nobody to answer, no defect.
  if (error instanceof RequestAborted || (error as { code?: unknown } | null)?.code === 'ECONNABORTED') return;
  if (error instanceof ApiError) return sendError(res, error, body);
  const storageError = storageErrorAsApiError(error);
  if (storageError) return sendError(res, storageError, body);
  log.error({ err: error, request_id: accessLogRecord(res)?.requestId }, 'unhandled error');
  sendError(res, internalError(), body);
}

/**
 * What node's HTTP parser refuses before any handler runs (a malformed request line or header,
 * a body that overruns its Content-Length into a broken next request, headers too large, a
 * request too slow) is answered in the envelope too, then the connection is closed: its byte
 * stream can no longer be trusted.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Broken bytes after a complete request whose answer is under way: that answer still leaves
  // whole (end() flushes it), then the connection closes; the bytes were no request to answer.
  const answering = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (answering) {
    if (answering.writableFinished) socket.end();
    else answering.once('close', () => socket.end());
    return;
  }
  const [status, reason, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'bad_request', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'bad_request', 'The request was not received in time.']
        : [400, 'Bad Request', 'bad_request', 'The request is not valid HTTP.'];
  const body = JSON.stringify({ error: { code, message, details: {} } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

// ---- Express adapters -------------------------------------------------------------------

export function requestContext(observers: RequestObservers): RequestHandler {
  return (req, res, next) => {
    beginRequest(req, res, observers, req.path, null); // captured here: routers mounted under /v1 see a shorter req.path
    next();
  };
}

/**
 * Parses JSON bodies (readJsonBody) into `req.body` for the Express routes; a request without a
 * body gets `{}` (as body-parser gave: Apollo answers 500 to a request whose body is unset).
 */
export function jsonBody(limitBytes: number): RequestHandler {
  return async (req, _res, next) => {
    const bodiless = req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD';
    req.body = (bodiless ? undefined : await readJsonBody(req, limitBytes)) ?? {};
    next();
  };
}

export const unknownPath: RequestHandler = (req, _res, next) => next(notFound(`No such endpoint: ${req.method} ${req.path}`));

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction) => answerError(res, error, log);
}
