import type { BatchedAnswer, ProviderEvent, WholeAnswer } from '../domain/generation/canonical';
import type { StreamDecoder } from '../protocols/streams';
import type { VendorCall, VendorEventStream, VendorTransport } from './transport/client';
import { cancelledError } from './transport/errors';

/**
 * Runs one vendor call through its codec's decoder: streamed, or (the client reads the answer
 * whole, and the request body says so) one JSON answer, which costs the gateway less CPU than
 * decoding an event per few characters (docs/text.md).
 */
export function callVendor(
  http: VendorTransport,
  call: VendorCall,
  decoder: StreamDecoder,
  streamed: boolean,
): AsyncIterable<ProviderEvent> {
  return streamed ? new StreamedVendorAnswer(http, call, decoder) : new WholeVendorAnswer(http, call, decoder);
}

/**
 * One JSON answer through its decoder: read whole by the pipeline (one promise for the call and
 * its events), or iterated like a stream by a wrapper (routing). The call starts on the first read.
 */
export class WholeVendorAnswer implements WholeAnswer {
  constructor(
    private readonly http: VendorTransport,
    private readonly call: VendorCall,
    private readonly decoder: StreamDecoder,
  ) {}

  whole(): Promise<ProviderEvent[]> {
    const { call, decoder } = this;
    if (call.signal?.aborted) return Promise.reject(cancelledError(call.vendor));
    return this.http.postJson(call).then((answer) => decoder.pushWhole(answer));
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ProviderEvent, void, undefined> {
    yield* await this.whole();
  }
}

/**
 * One streamed vendor call through its decoder, batch by batch (BatchedAnswer): each read gives
 * the events of every chunk that arrived since the last. After `finish` the rest of the body is
 * still read (so the keep-alive socket is reused) but ignored, and a transport error past that
 * point no longer matters: the answer is complete. The call starts on the first read.
 */
export class StreamedVendorAnswer implements BatchedAnswer {
  private stream: VendorEventStream | null = null;
  private ended = false;
  /** A failure that came after events of the same batch: thrown on the next read, once those are delivered. */
  private failure: unknown = null;

  constructor(
    private readonly http: VendorTransport,
    private readonly call: VendorCall,
    private readonly decoder: StreamDecoder,
  ) {}

  async nextBatch(): Promise<ProviderEvent[] | null> {
    if (this.failure !== null) {
      const failure = this.failure;
      this.failure = null;
      throw failure;
    }
    if (this.ended) return null;
    const { decoder } = this;
    if (this.stream === null) {
      if (this.call.signal?.aborted) throw cancelledError(this.call.vendor);
      this.stream = await this.http.openEventStream(this.call);
    }
    const stream = this.stream;
    const batch: ProviderEvent[] = [];
    try {
      while (batch.length === 0) {
        const events = await stream.next();
        if (events === null) {
          this.ended = true;
          stream.close();
          for (const canonical of decoder.end()) batch.push(canonical);
          return batch.length > 0 ? batch : null;
        }
        for (const event of events) {
          if (decoder.done) break;
          for (const canonical of decoder.push(event.data)) batch.push(canonical);
        }
      }
      return batch;
    } catch (error) {
      this.ended = true;
      stream.close();
      if (decoder.done) return batch.length > 0 ? batch : null;
      if (batch.length === 0) throw error;
      this.failure = error;
      return batch;
    }
  }

  close(): void {
    this.ended = true;
    this.stream?.close();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ProviderEvent, void, undefined> {
    try {
      for (let batch = await this.nextBatch(); batch !== null; batch = await this.nextBatch()) yield* batch;
    } finally {
      this.close();
    }
  }
}
