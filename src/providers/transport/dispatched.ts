import type { Cancellation } from '../../domain/generation/cancellation';
import type { ProviderError } from '../../domain/generation/errors';
import { SseDecoder, type SseEvent } from '../../protocols/sse-parse';
import {
  invalidAnswerError,
  transportError,
  vendorErrorMessage,
  vendorStatusError,
  type TransportTimeouts,
  type VendorParty,
} from './errors';
import { parseRawHeaders, RequestAbortedError } from './undici-pool';

/*
 * The vendor calls of the text path (a JSON answer, an event stream), read by undici's dispatch
 * handler callbacks rather than through request()'s response stream: no Readable, no consume
 * machinery and no promise per body or per chunk (docs/performance.md). The failures are the
 * transport's (errors.ts) and keep their phase: 'connect' before the answer's headers, 'stream'
 * after them; only the first may go to another deployment.
 */

/** Longest vendor error body read for its message. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Body chunks an event stream holds unread before it stops reading the socket (backpressure). */
const SSE_UNREAD_CHUNKS = 16;

/** What a dispatched call needs of the call: who answers (for its errors) and the client's cancellation. */
type Party = VendorParty & { signal?: Cancellation };

/** What both calls share: the status and headers of the answer, and the call's signal, which aborts the request. */
abstract class DispatchedCall {
  protected status = 0;
  protected rawHeaders: Buffer[] = [];
  private abort: ((error?: Error) => void) | null = null;
  private readonly onCancel = () => this.stopRequest();

  constructor(
    protected readonly call: Party,
    private readonly timeouts: TransportTimeouts,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort;
    const signal = this.call.signal;
    if (signal === undefined) return;
    if (signal.aborted) abort(new RequestAbortedError());
    else signal.on('abort', this.onCancel);
  }

  /** Takes the final answer's status and headers; 1xx (informational) answers precede it. False for a 1xx. */
  protected answered(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return false;
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    return true;
  }

  protected ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  /** The request is over (completed or failed): the signal no longer concerns it. */
  protected settled(): void {
    this.call.signal?.off('abort', this.onCancel);
  }

  protected stopRequest(): void {
    this.abort?.(new RequestAbortedError());
  }

  /** An error status, with the start of its body for the message and its headers for Retry-After. */
  protected statusError(bodyText: string): ProviderError {
    return vendorStatusError(this.call, this.status, bodyText, parseRawHeaders(this.rawHeaders));
  }

  protected transportFailure(error: unknown, phase: 'connect' | 'stream'): ProviderError {
    return transportError(this.call, error, phase, this.timeouts, this.call.signal?.aborted === true);
  }
}

/**
 * One JSON call: collects the body and settles once. A 2xx answer resolves with its parsed JSON
 * (invalidAnswerError if it is not JSON); any other status rejects with the vendor's error (its
 * body read to the end, so the socket is kept, but only its start held); a failure rejects with
 * the transport error of its phase.
 */
export class JsonAnswer extends DispatchedCall {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    call: Party,
    timeouts: TransportTimeouts,
    private readonly resolve: (answer: unknown) => void,
    private readonly reject: (error: ProviderError) => void,
  ) {
    super(call, timeouts);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.answered(statusCode, rawHeaders);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.ok() || this.size < MAX_ERROR_BODY_BYTES) this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  onComplete(): void {
    this.settled();
    const text = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8');
    if (!this.ok()) return this.reject(this.statusError(text.slice(0, MAX_ERROR_BODY_BYTES)));
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      return this.reject(invalidAnswerError(this.call, `${this.call.vendor} answered with a body that is not JSON.`, this.status));
    }
    this.resolve(answer);
  }

  onError(error: Error): void {
    this.settled();
    // An error answer whose body broke off is still that error (as its message, nothing).
    if (this.status !== 0 && !this.ok()) return this.reject(this.statusError(''));
    this.reject(this.transportFailure(error, this.status === 0 ? 'connect' : 'stream'));
  }
}

/**
 * The answer's content type, found in undici's raw header list (name, value, name, value…)
 * without parsing the whole list into an object as parseRawHeaders does: an event stream is
 * opened on every streamed call, and that is the one header it needs.
 */
function contentTypeOf(rawHeaders: Buffer[]): string {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') return rawHeaders[i + 1]!.toString('latin1');
  }
  return '';
}

/** A vendor's event stream, read a chunk at a time (VendorTransport.openEventStream). */
export interface VendorEventStream {
  /** The events the next chunk of the body completed (possibly none), or null once the body has ended. Read failures are ProviderError. */
  next(): Promise<SseEvent[] | null>;
  /** Stops reading; destroys the response unless it was read to its end (that aborts the upstream request). */
  close(): void;
}

/**
 * A streamed call, handed to its consumer as a VendorEventStream: opened (the promise resolves) by
 * a 2xx answer's headers; rejected as JsonAnswer rejects, or with invalidAnswerError when a 2xx
 * answer is JSON (some gateways answer an error that way). Chunks are decoded by one SSE decoder
 * when the consumer asks (next() gives the events of every chunk that arrived since, possibly
 * none); while SSE_UNREAD_CHUNKS wait unread the socket is paused. A failure after opening comes
 * from next(), in the 'stream' phase.
 */
export class SseAnswer extends DispatchedCall implements VendorEventStream {
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

  constructor(
    call: Party,
    timeouts: TransportTimeouts,
    private readonly open: (stream: VendorEventStream) => void,
    private readonly refuse: (error: ProviderError) => void,
  ) {
    super(call, timeouts);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (!this.answered(statusCode, rawHeaders) || !this.ok()) return true;
    this.resume = resume;
    this.errorJson = contentTypeOf(rawHeaders).includes('application/json');
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
    this.settled();
    this.ended = true;
    if (this.opened) return this.wake();
    const text = Buffer.concat(this.unread).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
    if (!this.errorJson) return this.refuse(this.statusError(text));
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
    this.settled();
    if (this.opened) {
      this.failure = this.transportFailure(error, 'stream');
      return this.wake();
    }
    if (this.status !== 0 && !this.ok()) return this.refuse(this.statusError(''));
    if (this.errorJson)
      return this.refuse(invalidAnswerError(this.call, `${this.call.vendor} answered JSON instead of an event stream.`, this.status));
    this.refuse(this.transportFailure(error, 'connect'));
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
    if (!this.ended && this.failure === null) this.stopRequest();
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
    const events: SseEvent[] = [];
    for (const chunk of this.unread) this.decoder.push(chunk, events);
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
