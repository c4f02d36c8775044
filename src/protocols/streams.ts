import type { CanonicalEvent, ProviderEvent } from '../domain/generation/canonical';
import { ProviderError } from '../domain/generation/errors';
import type { ApiError } from '../domain/shared/errors';

/**
 * The two stream codecs every wire format may have: a vendor's answer decoded into canonical
 * events (the vendor side), and canonical events encoded into a client's stream (the client
 * side). Providers and the REST plane depend on these, not on a format's classes.
 */

/**
 * A vendor's answer → canonical events: SSE `data` payloads in, canonical events out.
 *
 * Unlike the media answers (zod schemas in each protocol's vendor-types.ts), text answers are
 * cast, not validated by a schema: a stream brings an event every few characters, and a schema
 * pass over each would cost more CPU than the rest of the gateway's work on it. A payload must
 * be a JSON object (parseSsePayload); decoders check the values where a wrong one would matter
 * (usage counts, the finish), and an answer that ends without what they need is a ProviderError.
 */
export interface StreamDecoder {
  /** True once the `finish` event was produced. */
  readonly done: boolean;
  push(data: string): ProviderEvent[];
  /** End of stream; throws ProviderError when the answer was cut before its finish. */
  end(): ProviderEvent[];
  /** A whole (non-streamed) answer: the same mapping as its stream, in one go. */
  pushWhole(answer: unknown): ProviderEvent[];
}

/** Canonical events → a client's SSE text; both return '' once the stream has ended. */
export interface StreamEncoder {
  encode(event: CanonicalEvent): string;
  /** The format's stream failure, after which nothing more is written. */
  encodeError(error: ApiError): string;
}

/**
 * One SSE payload a vendor sent, parsed as a JSON object. Anything else is the vendor's fault
 * (a ProviderError), named as the format calls its frames (`chunk` or `event`).
 */
export function parseSsePayload<T extends object>(vendor: string, data: string, frame: 'chunk' | 'event'): T {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProviderError(`${vendor} sent a stream ${frame} that is not JSON.`, vendor);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProviderError(`${vendor} sent a stream ${frame} that is not a JSON object.`, vendor);
  return value as T;
}
