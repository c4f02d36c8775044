import type { Cancellation } from '../domain/generation/cancellation';
import type { ProviderEvent, WholeAnswer } from '../domain/generation/canonical';
import type { StreamDecoder } from '../protocols/streams';
import { callVendor, WholeVendorAnswer } from './text-call';
import type { VendorCall, VendorTransport } from './transport/client';
import { cancelledError } from './transport/errors';

/** A vendor call that needs one async step before it can be sent: an OAuth token (Vertex AI), a SigV4 signature (Bedrock). */
export interface PreparedCall {
  vendor: string;
  signal: Cancellation;
  prepare(): Promise<VendorCall>;
  decoder: StreamDecoder;
  streamed: boolean;
  /** Sees a failure of the prepared call before it is thrown (Vertex drops a token its vendor refused). */
  failed?(error: unknown, call: VendorCall): void;
}

/**
 * Runs a prepared call through callVendor: a non-streamed one is a WholeAnswer (one promise for
 * the preparation, the call and its decoded events), so it takes the pipeline's whole-answer
 * path as a direct vendor call does (docs/performance.md, "Fast paths"); a streamed one a stream.
 * Nothing starts before the first read.
 */
export function callPrepared(http: VendorTransport, prepared: PreparedCall): AsyncIterable<ProviderEvent> {
  return prepared.streamed ? preparedStream(http, prepared) : new PreparedWholeAnswer(http, prepared);
}

class PreparedWholeAnswer implements WholeAnswer {
  constructor(
    private readonly http: VendorTransport,
    private readonly prepared: PreparedCall,
  ) {}

  async whole(): Promise<ProviderEvent[]> {
    const { prepared } = this;
    if (prepared.signal.aborted) throw cancelledError(prepared.vendor);
    const call = await prepared.prepare();
    try {
      return await new WholeVendorAnswer(this.http, call, prepared.decoder).whole();
    } catch (error) {
      prepared.failed?.(error, call);
      throw error;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ProviderEvent, void, undefined> {
    yield* await this.whole();
  }
}

async function* preparedStream(http: VendorTransport, prepared: PreparedCall): AsyncGenerator<ProviderEvent, void, undefined> {
  if (prepared.signal.aborted) throw cancelledError(prepared.vendor);
  const call = await prepared.prepare();
  try {
    yield* callVendor(http, call, prepared.decoder, true);
  } catch (error) {
    prepared.failed?.(error, call);
    throw error;
  }
}
