import type { ProviderEvent, WholeAnswer } from '../domain/generation/canonical';
import type { StreamDecoder } from '../protocols/streams';
import type { VendorCall, VendorTransport } from './transport/client';
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
  return streamed ? streamCanonical(http, call, decoder) : new WholeVendorAnswer(http, call, decoder);
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
 * Runs one streamed vendor call through a decoder. After `finish` the rest of the body is
 * still read (so the keep-alive socket is reused) but ignored, and a transport error past
 * that point no longer matters: the answer is complete.
 */
async function* streamCanonical(
  http: VendorTransport,
  call: VendorCall,
  decoder: StreamDecoder,
): AsyncGenerator<ProviderEvent, void, undefined> {
  if (call.signal?.aborted) throw cancelledError(call.vendor);
  const stream = await http.openEventStream(call);
  try {
    for (let events = await stream.next(); events !== null; events = await stream.next()) {
      for (const event of events) {
        if (decoder.done) break;
        for (const canonical of decoder.push(event.data)) yield canonical;
      }
    }
  } catch (error) {
    if (decoder.done) return;
    throw error;
  } finally {
    stream.close();
  }
  yield* decoder.end();
}
