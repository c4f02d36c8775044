import { PassThrough, Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Pool, poolRequest } from './undici-pool';
import type { Cancellation } from '../../domain/generation/cancellation';
import type { FormPart } from '../../protocols/form-parts';
import {
  invalidAnswerError,
  redact,
  transportError,
  unusableTargetError,
  vendorStatusError,
  type TransportTimeouts,
  type VendorParty,
} from './errors';
import { JsonAnswer, MAX_ERROR_BODY_BYTES, SseAnswer, type VendorEventStream } from './dispatched';
import { multipartBody } from './multipart';

export type { VendorEventStream } from './dispatched';

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
