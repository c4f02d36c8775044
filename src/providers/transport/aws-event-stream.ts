import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';

/**
 * AWS event-stream framing (`application/vnd.amazon.eventstream`: length-prefixed binary
 * messages with typed headers and CRCs), decoded by the AWS SDK's codec: the messages a body's
 * chunks complete, whatever the chunk boundaries.
 */

const toUtf8 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
const fromUtf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');

/** Required by the first Bedrock stream, not at startup (as the signer, sigv4.ts). */
export function newEventStreamCodec(): EventStreamCodec {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { EventStreamCodec: Codec } = require('@smithy/eventstream-codec') as typeof import('@smithy/eventstream-codec');
  return new Codec(toUtf8, fromUtf8);
}

/**
 * The messages of a body, whatever its chunk boundaries: each message starts with its total
 * length (4 bytes, big-endian), so whole messages are cut from the bytes received and the codec
 * checks and decodes each (its CRCs, its typed headers).
 */
export async function* eventStreamMessages(chunks: AsyncIterable<Buffer>): AsyncGenerator<Message, void, undefined> {
  const codec = newEventStreamCodec();
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of chunks) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (pending.length < length) break;
      // A copy of exactly one message: the codec reads its bytes through the underlying buffer.
      yield codec.decode(new Uint8Array(pending.subarray(0, length)));
      pending = pending.subarray(length);
    }
  }
  if (pending.length > 0) throw new Error(`The event stream ended inside a message (${pending.length} bytes left).`);
}

/** A string header's value (`:event-type`, `:message-type`, `:exception-type`). */
export function headerString(message: Message, name: string): string | null {
  const header = message.headers[name];
  return header && header.type === 'string' ? header.value : null;
}
