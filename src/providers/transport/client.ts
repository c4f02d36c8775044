import { PassThrough, Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { parseRawHeaders, Pool, poolRequest, RequestAbortedError } from './undici-pool';
import type { Cancellation } from '../../domain/generation/cancellation';
import type { FormPart } from '../../protocols/form-parts';
import { SseDecoder, type SseEvent } from '../../protocols/sse-parse';
import {
  invalidAnswerError,
  redact,
  transportError,
  unusableTargetError,
  vendorErrorMessage,
  vendorStatusError,
  type TransportTimeouts,
  type VendorParty,
} from './errors';
import type { ProviderError } from '../../domain/generation/errors';
import { multipartBody } from './multipart';

/**
 * The one outbound HTTP transport of every vendor adapter (text, images, videos): one
 * keep-alive undici `Pool` per origin (not global fetch: pooled sockets, per-request timeouts
 * and a Node stream body we can destroy), JSON POSTs (or multipart forms), GETs, SSE streams
 * and streamed downloads. Every failure becomes a ProviderError through one factory
 * (errors.ts). Each modality has its own instance, with the timeouts its calls need.
 * A failure before the vendor's first byte (no connection, a timeout to the headers, an error
 * status) rejects the call itself, or the first `next()` of a stream; one after it comes from
 * the stream: only the first kind can go to another deployment of the model.
 */

const DEFAULT_TIMEOUTS: TransportTimeouts = { connectMs: 10_000, headersMs: 120_000, bodyIdleMs: 120_000 };

export interface VendorHttpOptions {
  /** connect: TCP + TLS; headers: from sending to the response headers; bodyIdle: longest silence between two body chunks. */
  timeouts?: Partial<TransportTimeouts>;
  /** Sockets per origin (default 128). */
  connectionsPerOrigin?: number;
  /** How long an idle keep-alive socket is kept (default 30 s). */
  keepAliveMs?: number;
}

/** Where a call goes and how it authenticates. */
export interface VendorTarget extends VendorParty {
  /** Base URL as configured (`OPENAI_BASE_URL`, may carry a path prefix such as `/v1`). */
  baseUrl: string;
  /** Path (and query) appended to the base URL's path. */
  path: string;
  headers: Record<string, string>;
  /** Set when the client went away; absent for background work (video steps) that no client cancels. */
  signal?: Cancellation;
}

export interface VendorCall extends VendorTarget {
  /** Sent as JSON, unless `form` or `bodyText` is given. */
  body: unknown;
  /** The JSON body already serialized (a signed request must send exactly the bytes it signed). */
  bodyText?: string;
  /** Sent as multipart/form-data instead of `body`. */
  form?: readonly FormPart[];
}

/** A file to download from an absolute URL (a vendor may name one on another host, and redirect). */
export interface VendorDownload extends VendorParty {
  url: string;
  /** Sent to the URL's own origin only: a redirect elsewhere goes without them (they carry the key). */
  headers: Record<string, string>;
}

/** Longest vendor error body read for its message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const MAX_REDIRECTS = 5;

interface Target {
  pool: Pool;
  /** The base URL's path without its trailing slashes. */
  basePath: string;
}

export class VendorTransport {
  private readonly pools = new Map<string, Pool>();
  /** Parsed base URLs, so a call costs a map lookup rather than a URL parse. */
  private readonly targets = new Map<string, Target>();
  private readonly timeouts: TransportTimeouts;
  private closed = false;

  constructor(private readonly options: VendorHttpOptions = {}) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  }

  /**
   * POSTs a JSON body and opens the event stream of a 2xx answer: its events are read in the
   * batches the body's chunks complete (VendorEventStream). Non-2xx, connection errors, timeouts
   * and a cancelled `signal` throw ProviderError, here or from `next()`. `close()` destroys a
   * response not read to its end, which aborts the upstream request.
   */
  openEventStream(call: VendorCall): Promise<VendorEventStream> {
    return new Promise((resolve, reject) => {
      const { pool, basePath } = this.target(call);
      pool.dispatch(this.postOptions(call, basePath, 'text/event-stream'), new SseAnswer(call, this.timeouts, resolve, reject));
    });
  }

  /**
   * POSTs a JSON body and yields the raw chunks of a 2xx answer (a binary framing such as AWS
   * event streams); failures as streamSse.
   */
  async *streamBytes(call: VendorCall, accept: string): AsyncGenerator<Buffer, void, undefined> {
    const { body } = await this.post(call, accept);
    try {
      try {
        for await (const chunk of body) yield chunk as Buffer;
      } catch (error) {
        throw this.transportError(call, error, 'stream');
      }
    } finally {
      if (!body.destroyed) body.destroy();
    }
  }

  /** POSTs a JSON body (or a form) and answers the parsed JSON of a 2xx answer; failures as streamSse. */
  postJson(call: VendorCall): Promise<unknown> {
    return this.json(call, 'POST');
  }

  /** GETs a JSON document (a job's state); failures as streamSse. */
  getJson(call: VendorTarget): Promise<unknown> {
    return this.json({ ...call, body: null }, 'GET');
  }

  /**
   * Streams a file. Redirects are followed (a vendor's file URL often answers with one to its
   * storage), and the body's read errors (a stall, a broken connection) surface as ProviderError.
   */
  async download(call: VendorDownload): Promise<Readable> {
    // Messages name no URL: a file's URL may be signed.
    let url = this.parseUrl(call, call.url, `${call.vendor} named a file to download that is not at a URL.`);
    let headers = call.headers;
    for (let redirects = 0; ; redirects++) {
      const request = {
        method: 'GET',
        path: url.pathname + url.search,
        headers: { 'user-agent': 'tollgate', ...headers },
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      } as const;
      const response = await this.send(call, this.pool(call, url.origin), request, true);
      if (response.statusCode >= 300 && response.statusCode <= 399) {
        await response.body.dump().catch(() => undefined); // read (small), so the socket is kept
        const location = response.headers.location;
        if (typeof location !== 'string')
          throw invalidAnswerError(call, `${call.vendor} redirected the download without a location.`, response.statusCode);
        if (redirects === MAX_REDIRECTS)
          throw invalidAnswerError(call, `${call.vendor} redirected the download more than ${MAX_REDIRECTS} times.`, response.statusCode);
        const next = this.parseUrl(call, location, `${call.vendor} redirected the download to something that is not a URL.`, url);
        if (next.origin !== url.origin) headers = {};
        url = next;
        continue;
      }
      return this.guardBody(call, response.body);
    }
  }

  /** Closes every pool. Called once at shutdown, after in-flight calls drained. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.targets.clear();
    // Shutdown: a pool that fails to close has nothing left that anyone waits for.
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }

  /** Sends the call; answers a 2xx response, else throws ProviderError (transport failure, or the vendor's error status and message). */
  private post(call: VendorCall, accept: string): Promise<Dispatcher.ResponseData> {
    const { pool, basePath } = this.target(call);
    return this.send(call, pool, { ...this.postOptions(call, basePath, accept), signal: call.signal });
  }

  private postOptions(call: VendorCall, basePath: string, accept: string): Dispatcher.DispatchOptions {
    const form = call.form ? multipartBody(call.form) : null;
    return {
      method: 'POST',
      path: basePath + call.path,
      headers: form
        ? { 'content-type': form.contentType, 'content-length': String(form.length), accept, 'user-agent': 'tollgate', ...call.headers }
        : { 'content-type': 'application/json', accept, 'user-agent': 'tollgate', ...call.headers },
      body: form ? Readable.from(form.chunks, { objectMode: false }) : (call.bodyText ?? JSON.stringify(call.body)),
      headersTimeout: this.timeouts.headersMs,
      bodyTimeout: this.timeouts.bodyIdleMs,
    };
  }

  /** One request on a pool; a non-2xx answer (but a redirect, when asked) throws the vendor's error. */
  private async send(
    party: VendorParty & { signal?: Cancellation },
    pool: Pool,
    request: Dispatcher.RequestOptions,
    redirects = false,
  ): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    try {
      response = await poolRequest(pool, request);
    } catch (error) {
      throw this.transportError(party, error, 'connect');
    }
    const status = response.statusCode;
    if ((status >= 200 && status <= 299) || (redirects && status >= 300 && status <= 399)) return response;
    try {
      const text = await readCapped(response.body, MAX_ERROR_BODY_BYTES).catch(() => '');
      throw vendorStatusError(party, status, text, response.headers);
    } finally {
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  /**
   * One JSON answer, read by undici's handler callbacks (JsonAnswer) rather than request()'s
   * response stream: the same failures, without a stream and its promises per call (the
   * commonest vendor call: every non-streamed text request). `target` may throw before sending,
   * which this turns into a rejection.
   */
  private json(call: VendorCall, method: 'GET' | 'POST'): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const { pool, basePath } = this.target(call);
      const options: Dispatcher.DispatchOptions =
        method === 'POST'
          ? this.postOptions(call, basePath, 'application/json')
          : {
              method: 'GET',
              path: basePath + call.path,
              headers: { accept: 'application/json', 'user-agent': 'tollgate', ...call.headers },
              headersTimeout: this.timeouts.headersMs,
              bodyTimeout: this.timeouts.bodyIdleMs,
            };
      pool.dispatch(options, new JsonAnswer(call, this.timeouts, resolve, reject));
    });
  }

  /** The body, whose read errors become ProviderError; a consumer that stops early aborts the download. */
  private guardBody(call: VendorParty, body: Dispatcher.ResponseData['body']): Readable {
    const out = new PassThrough();
    body.on('error', (error) => out.destroy(this.transportError(call, error, 'stream')));
    out.on('close', () => {
      if (!body.destroyed) body.destroy();
    });
    return body.pipe(out);
  }

  private target(call: VendorTarget): Target {
    let target = this.targets.get(call.baseUrl);
    if (!target) {
      const url = this.parseUrl(call, call.baseUrl, `The base URL configured for ${call.vendor} is not a URL.`);
      target = { pool: this.pool(call, url.origin), basePath: url.pathname.replace(/\/+$/, '') };
      this.targets.set(call.baseUrl, target);
    }
    return target;
  }

  private parseUrl(party: VendorParty, url: string, failure: string, base?: URL): URL {
    try {
      return new URL(url, base);
    } catch {
      throw unusableTargetError(party.vendor, redact(failure, party.secrets));
    }
  }

  private pool(party: VendorParty, origin: string): Pool {
    if (this.closed) throw unusableTargetError(party.vendor, `The connection pool for ${party.vendor} is closed.`);
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.options.connectionsPerOrigin ?? 128,
        keepAliveTimeout: this.options.keepAliveMs ?? 30_000,
        connect: { timeout: this.timeouts.connectMs },
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private transportError(call: VendorParty & { signal?: Cancellation }, error: unknown, phase: 'connect' | 'stream') {
    return transportError(call, error, phase, this.timeouts, call.signal?.aborted === true);
  }
}

/**
 * The handler of one JSON call (undici's dispatch handler callbacks): collects the body and
 * settles once. A 2xx answer resolves with its parsed JSON (invalidAnswerError if it is not
 * JSON); any other status rejects with the vendor's error (the first MAX_ERROR_BODY_BYTES of
 * its body for the message, its headers for Retry-After); a failure rejects with the transport
 * error of its phase: 'connect' before the answer's headers, 'stream' after them (only the
 * first may go to another deployment). The call's signal aborts the request.
 */
class JsonAnswer {
  private status = 0;
  private rawHeaders: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private abort: ((error?: Error) => void) | null = null;
  private readonly onCancel = () => this.abort?.(new RequestAbortedError());

  constructor(
    private readonly call: VendorCall,
    private readonly timeouts: TransportTimeouts,
    private readonly resolve: (answer: unknown) => void,
    private readonly reject: (error: ProviderError) => void,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort;
    const signal = this.call.signal;
    if (signal === undefined) return;
    if (signal.aborted) abort(new RequestAbortedError());
    else signal.on('abort', this.onCancel);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx (informational) answers precede the real one.
    if (statusCode >= 200) {
      this.status = statusCode;
      this.rawHeaders = rawHeaders;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    // An error answer is read to its end (so the socket is kept) but only its start is held.
    if (this.ok() || this.size < MAX_ERROR_BODY_BYTES) this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  onComplete(): void {
    this.call.signal?.off('abort', this.onCancel);
    const text = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8');
    if (!this.ok()) {
      this.reject(vendorStatusError(this.call, this.status, text.slice(0, MAX_ERROR_BODY_BYTES), parseRawHeaders(this.rawHeaders)));
      return;
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      this.reject(invalidAnswerError(this.call, `${this.call.vendor} answered with a body that is not JSON.`, this.status));
      return;
    }
    this.resolve(answer);
  }

  onError(error: Error): void {
    this.call.signal?.off('abort', this.onCancel);
    // An error answer whose body broke off is still that error (as its message, nothing).
    if (this.status !== 0 && !this.ok()) {
      this.reject(vendorStatusError(this.call, this.status, '', parseRawHeaders(this.rawHeaders)));
      return;
    }
    this.reject(
      transportError(this.call, error, this.status === 0 ? 'connect' : 'stream', this.timeouts, this.call.signal?.aborted === true),
    );
  }

  private ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }
}

/** A vendor's event stream, read a chunk at a time (VendorTransport.openEventStream). */
export interface VendorEventStream {
  /** The events the next chunk of the body completed (possibly none), or null once the body has ended. Read failures are ProviderError. */
  next(): Promise<SseEvent[] | null>;
  /** Stops reading; destroys the response unless it was read to its end (that aborts the upstream request). */
  close(): void;
}

/** Body chunks an event stream holds unread before it stops reading the socket (backpressure). */
const SSE_UNREAD_CHUNKS = 16;

/**
 * A streamed call, read by undici's dispatch callbacks (as JsonAnswer) and handed to its consumer
 * as a VendorEventStream: opened (the promise resolves) by a 2xx answer's headers; rejected as
 * JsonAnswer rejects, or with invalidAnswerError when a 2xx answer is JSON (some gateways answer an
 * error that way). Chunks are decoded by one SSE decoder when the consumer asks (next() gives the
 * events of every chunk that arrived since, possibly none); while SSE_UNREAD_CHUNKS wait unread
 * the socket is paused. A failure after opening comes from next() as the 'stream' phase.
 */
class SseAnswer implements VendorEventStream {
  private status = 0;
  private rawHeaders: Buffer[] = [];
  /** Opened: the answer is an event stream (else its body is an error to read and reject with). */
  private opened = false;
  private errorJson = false;
  private readonly unread: Buffer[] = [];
  private unreadBytes = 0;
  private ended = false;
  private drained = false;
  private failure: Error | null = null;
  private readonly decoder = new SseDecoder();
  private waiter: { resolve(events: SseEvent[] | null): void; reject(error: unknown): void } | null = null;
  private resume: (() => void) | null = null;
  private abort: ((error?: Error) => void) | null = null;
  private readonly onCancel = () => this.abort?.(new RequestAbortedError());

  constructor(
    private readonly call: VendorCall,
    private readonly timeouts: TransportTimeouts,
    private readonly open: (stream: VendorEventStream) => void,
    private readonly refuse: (error: ProviderError) => void,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort;
    const signal = this.call.signal;
    if (signal === undefined) return;
    if (signal.aborted) abort(new RequestAbortedError());
    else signal.on('abort', this.onCancel);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    this.resume = resume;
    if (statusCode > 299) return true;
    this.errorJson = String(parseRawHeaders(rawHeaders)['content-type'] ?? '').includes('application/json');
    if (!this.errorJson) {
      this.opened = true;
      this.open(this);
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (!this.opened) {
      if (this.unreadBytes < MAX_ERROR_BODY_BYTES) this.unread.push(chunk);
      this.unreadBytes += chunk.length;
      return true;
    }
    if (this.drained) return true; // closed by its consumer: read on (the socket is kept), ignore
    this.unread.push(chunk);
    this.wake();
    return this.unread.length < SSE_UNREAD_CHUNKS;
  }

  onComplete(): void {
    this.call.signal?.off('abort', this.onCancel);
    this.ended = true;
    if (this.opened) return this.wake();
    const text = Buffer.concat(this.unread).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
    if (!this.errorJson) return this.refuse(vendorStatusError(this.call, this.status, text, parseRawHeaders(this.rawHeaders)));
    const detail = vendorErrorMessage(text);
    this.refuse(
      invalidAnswerError(
        this.call,
        `${this.call.vendor} answered JSON instead of an event stream${detail ? `: ${detail}` : '.'}`,
        this.status,
      ),
    );
  }

  onError(error: Error): void {
    this.call.signal?.off('abort', this.onCancel);
    const cancelled = this.call.signal?.aborted === true;
    if (this.opened) {
      this.failure = transportError(this.call, error, 'stream', this.timeouts, cancelled);
      return this.wake();
    }
    if (this.status > 299) return this.refuse(vendorStatusError(this.call, this.status, '', parseRawHeaders(this.rawHeaders)));
    if (this.errorJson)
      return this.refuse(invalidAnswerError(this.call, `${this.call.vendor} answered JSON instead of an event stream.`, this.status));
    this.refuse(transportError(this.call, error, 'connect', this.timeouts, cancelled));
  }

  next(): Promise<SseEvent[] | null> {
    if (this.unread.length > 0) return Promise.resolve(this.take());
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(this.finish());
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  close(): void {
    this.drained = true;
    this.unread.length = 0;
    // No-op after a complete read; otherwise aborts the request (early return or error).
    if (!this.ended && this.failure === null) this.abort?.(new RequestAbortedError());
  }

  /** Hands what arrived to a consumer waiting in next(). */
  private wake(): void {
    const waiter = this.waiter;
    if (waiter === null) return;
    this.waiter = null;
    if (this.unread.length > 0) waiter.resolve(this.take());
    else if (this.failure) waiter.reject(this.failure);
    else if (this.ended) waiter.resolve(this.finish());
  }

  /** The events of every unread chunk; resumes a paused socket. */
  private take(): SseEvent[] {
    const paused = this.unread.length >= SSE_UNREAD_CHUNKS;
    let events = this.decoder.push(this.unread[0]!);
    for (let i = 1; i < this.unread.length; i++) events = events.concat(this.decoder.push(this.unread[i]!));
    this.unread.length = 0;
    if (paused) this.resume?.();
    return events;
  }

  /** After the last chunk: what the decoder still holds, once; then null. */
  private finish(): SseEvent[] | null {
    if (this.drained) return null;
    this.drained = true;
    return this.decoder.end();
  }
}

async function readCapped(body: AsyncIterable<Buffer | string>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(buffer);
    size += buffer.length;
    if (size >= maxBytes) break;
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}
