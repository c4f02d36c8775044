import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Pool, poolRequest } from './undici-pool';
import type { Cancellation } from '../domain/generation/cancellation';
import { ProviderError } from '../domain/generation/errors';
import type { CanonicalEvent } from '../domain/generation/canonical';
import type { VendorErrorKind } from '../domain/shared/telemetry';
import { parseSseBatches, type SseEvent } from '../protocols/sse-parse';
import type { StreamDecoder } from '../protocols/streams';

/**
 * Outbound HTTP shared by the vendor adapters: one keep-alive undici `Pool` per origin (not
 * global fetch: pooled sockets, per-request timeouts and a Node stream body we can destroy),
 * SSE decoding, and the one place where transport failures and vendor error answers become
 * ProviderError (with the vendor's own message, never the API key).
 */

export interface HttpTimeouts {
  /** TCP + TLS connect. */
  connectMs: number;
  /** From sending the request to the response headers (time to first byte). */
  headersMs: number;
  /** Longest silence between two body chunks of a (streamed) answer. */
  bodyIdleMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { connectMs: 10_000, headersMs: 120_000, bodyIdleMs: 120_000 };

export interface VendorHttpOptions {
  timeouts?: Partial<HttpTimeouts>;
  /** Sockets per origin (default 128). */
  connectionsPerOrigin?: number;
  /** How long an idle keep-alive socket is kept (default 30 s). */
  keepAliveMs?: number;
}

export interface VendorCall {
  /** Vendor name for error messages (`openai`, `deepseek`…). */
  vendor: string;
  /** Base URL as configured (`OPENAI_BASE_URL`, may carry a path prefix such as `/v1`). */
  baseUrl: string;
  /** Path (and query) appended to the base URL's path. */
  path: string;
  headers: Record<string, string>;
  /** Sent as JSON, unless `encodedBody` is given. */
  body: unknown;
  /** A body already encoded (a multipart upload): its content type and bytes, sent as they are. */
  encodedBody?: EncodedBody;
  signal: Cancellation;
  /** Strings never to be echoed in an error message (the API key). */
  secrets: readonly (string | null)[];
}

export interface EncodedBody {
  contentType: string;
  /** Chunks sent in order without being joined (large uploads are not copied again). */
  chunks: readonly Buffer[];
}

/** Longest vendor error body read for its message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class VendorHttpClient {
  private readonly pools = new Map<string, Pool>();
  /** Each configured base URL parsed once: its pool and path prefix (a URL per request costs more than the rest of target()). */
  private readonly targets = new Map<string, { pool: Pool; prefix: string }>();
  private readonly timeouts: HttpTimeouts;
  private closed = false;

  constructor(private readonly options: VendorHttpOptions = {}) {
    this.timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.timeouts };
  }

  /**
   * POSTs a JSON body and yields the SSE events of a 2xx answer, in the batches the body's
   * chunks completed. Non-2xx, connection errors, timeouts and a cancelled `signal` throw
   * ProviderError. Ending the iteration early (the consumer's `return()`) destroys the
   * response, which aborts the upstream request.
   */
  async *streamSse(call: VendorCall): AsyncGenerator<SseEvent[], void, undefined> {
    const { statusCode, headers, body } = await this.post(call, 'text/event-stream');
    try {
      const contentType = String(headers['content-type'] ?? '');
      if (contentType.includes('application/json')) {
        // Some gateways answer 200 with a JSON error instead of a stream.
        const detail = vendorErrorMessage(await readCapped(body, MAX_ERROR_BODY_BYTES).catch(() => ''));
        throw new ProviderError(redact(`${call.vendor} answered JSON instead of an event stream${detail ? `: ${detail}` : '.'}`, call.secrets), call.vendor, statusCode);
      }
      try {
        for await (const events of parseSseBatches(body)) yield events;
      } catch (error) {
        throw this.transportError(call, error, 'stream');
      }
    } finally {
      // No-op after a complete read; otherwise aborts the request (early return or error).
      if (!body.destroyed) body.destroy();
    }
  }

  /** POSTs a JSON body and answers the parsed JSON of a 2xx answer; failures as streamSse. */
  async postJson(call: VendorCall): Promise<unknown> {
    const { statusCode, body } = await this.post(call, 'application/json');
    try {
      let text: string;
      try {
        text = await body.text();
      } catch (error) {
        throw this.transportError(call, error, 'stream');
      }
      try {
        return JSON.parse(text);
      } catch {
        throw new ProviderError(`${call.vendor} answered with a body that is not JSON.`, call.vendor, statusCode);
      }
    } finally {
      if (!body.destroyed) body.destroy();
    }
  }

  /** Sends the call; answers a 2xx response, else throws ProviderError (transport failure, or the vendor's error status and message). */
  private async post(call: VendorCall, accept: string): Promise<Dispatcher.ResponseData> {
    const { pool, path } = this.target(call);
    let response: Dispatcher.ResponseData;
    try {
      const encoded = call.encodedBody;
      response = await poolRequest(pool, {
        method: 'POST',
        path,
        headers: encoded
          ? { 'content-type': encoded.contentType, 'content-length': String(encoded.chunks.reduce((sum, chunk) => sum + chunk.length, 0)), accept, 'user-agent': 'tollgate', ...call.headers }
          : { 'content-type': 'application/json', accept, 'user-agent': 'tollgate', ...call.headers },
        body: encoded ? Readable.from(encoded.chunks, { objectMode: false }) : JSON.stringify(call.body),
        signal: call.signal,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      });
    } catch (error) {
      throw this.transportError(call, error, 'connect');
    }
    if (response.statusCode >= 200 && response.statusCode <= 299) return response;
    try {
      const text = await readCapped(response.body, MAX_ERROR_BODY_BYTES).catch(() => '');
      throw vendorStatusError(call, response.statusCode, text);
    } finally {
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  /** Closes every pool. Called once at shutdown, after in-flight generations drained. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.targets.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }

  private target(call: VendorCall): { pool: Pool; path: string } {
    if (this.closed) throw new ProviderError(`The connection pool for ${call.vendor} is closed.`, call.vendor, null, undefined, 'connect');
    let target = this.targets.get(call.baseUrl);
    if (!target) {
      target = this.parseTarget(call);
      this.targets.set(call.baseUrl, target);
    }
    return { pool: target.pool, path: target.prefix + call.path };
  }

  private parseTarget(call: VendorCall): { pool: Pool; prefix: string } {
    let url: URL;
    try {
      url = new URL(call.baseUrl);
    } catch {
      throw new ProviderError(`The base URL configured for ${call.vendor} is not a URL.`, call.vendor, null, undefined, 'connect');
    }
    let pool = this.pools.get(url.origin);
    if (!pool) {
      pool = new Pool(url.origin, {
        connections: this.options.connectionsPerOrigin ?? 128,
        keepAliveTimeout: this.options.keepAliveMs ?? 30_000,
        connect: { timeout: this.timeouts.connectMs },
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      });
      this.pools.set(url.origin, pool);
    }
    return { pool, prefix: url.pathname.replace(/\/+$/, '') };
  }

  private transportError(call: VendorCall, error: unknown, phase: 'connect' | 'stream'): ProviderError {
    if (error instanceof ProviderError) return error;
    if (call.signal.aborted) return new ProviderError(`The request to ${call.vendor} was cancelled by the client.`, call.vendor, null, 'client_cancelled');
    const code = errorCode(error);
    const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
    let message: string;
    let kind: VendorErrorKind = 'timeout';
    switch (code) {
      case 'UND_ERR_CONNECT_TIMEOUT':
        message = `Could not connect to ${call.vendor} within ${seconds(this.timeouts.connectMs)}.`;
        break;
      case 'UND_ERR_HEADERS_TIMEOUT':
        message = `${call.vendor} did not answer within ${seconds(this.timeouts.headersMs)}.`;
        break;
      case 'UND_ERR_BODY_TIMEOUT':
        message = `${call.vendor} sent nothing for ${seconds(this.timeouts.bodyIdleMs)} in the middle of its answer.`;
        break;
      case 'ECONNREFUSED':
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        message = `Could not connect to ${call.vendor} (${code}).`;
        kind = 'connect';
        break;
      default:
        kind = phase === 'connect' ? 'connect' : 'broken_stream';
        message =
          phase === 'connect'
            ? `The request to ${call.vendor} failed (${code ?? 'network error'}).`
            : `The connection to ${call.vendor} broke in the middle of its answer (${code ?? 'network error'}).`;
    }
    return new ProviderError(redact(message, call.secrets), call.vendor, null, undefined, kind);
  }
}

function errorCode(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return null;
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

/** A non-2xx answer: 502 carrying the vendor's status and message (OpenAI, Anthropic and Gemini all put it at `error.message`). */
export function vendorStatusError(call: Pick<VendorCall, 'vendor' | 'secrets'>, status: number, bodyText: string): ProviderError {
  const detail = vendorErrorMessage(bodyText);
  const message = `${call.vendor} answered HTTP ${status}${detail ? `: ${detail}` : '.'}`;
  return new ProviderError(redact(message, call.secrets), call.vendor, status);
}

/** The human message inside a vendor error body, if it has one. */
export function vendorErrorMessage(bodyText: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    const text = bodyText.trim();
    return text ? truncate(text, 300) : null;
  }
  // Gemini sometimes wraps the error object in an array.
  const root = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!isRecord(root)) return null;
  const error = root.error;
  if (isRecord(error) && typeof error.message === 'string') return truncate(error.message, 1000);
  if (typeof error === 'string') return truncate(error, 1000);
  if (typeof root.message === 'string') return truncate(root.message, 1000);
  return null;
}

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

function redact(message: string, secrets: readonly (string | null)[]): string {
  let out = message;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Runs one vendor call through its codec's decoder: streamed, or (the client reads the answer
 * whole, and the request body says so) one JSON answer, which costs the gateway less CPU than
 * decoding an event per few characters (docs/text.md).
 */
export function callVendor(http: VendorHttpClient, call: VendorCall, decoder: StreamDecoder, streamed: boolean): AsyncIterable<CanonicalEvent> {
  return streamed ? streamCanonical(http, call, decoder) : wholeAnswerCanonical(http, call, decoder);
}

async function* wholeAnswerCanonical(http: VendorHttpClient, call: VendorCall, decoder: StreamDecoder): AsyncGenerator<CanonicalEvent, void, undefined> {
  if (call.signal.aborted) throw new ProviderError(`The request to ${call.vendor} was cancelled by the client.`, call.vendor, null, 'client_cancelled');
  yield* decoder.pushWhole(await http.postJson(call));
}

/**
 * Runs one streamed vendor call through a decoder. After `finish` the rest of the body is
 * still read (so the keep-alive socket is reused) but ignored, and a transport error past
 * that point no longer matters: the answer is complete.
 */
async function* streamCanonical(http: VendorHttpClient, call: VendorCall, decoder: StreamDecoder): AsyncGenerator<CanonicalEvent, void, undefined> {
  if (call.signal.aborted) throw new ProviderError(`The request to ${call.vendor} was cancelled by the client.`, call.vendor, null, 'client_cancelled');
  try {
    for await (const events of http.streamSse(call)) {
      for (const event of events) {
        if (decoder.done) break;
        for (const canonical of decoder.push(event.data)) yield canonical;
      }
    }
  } catch (error) {
    if (decoder.done) return;
    throw error;
  }
  yield* decoder.end();
}
