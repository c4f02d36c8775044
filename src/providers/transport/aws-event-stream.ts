import { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';

/**
 * AWS event-stream framing (`application/vnd.amazon.eventstream`: length-prefixed binary
 * messages with typed headers and CRCs), decoded by the AWS SDK's codec: the messages a body's
 * chunks complete, whatever the chunk boundaries.
 */

const toUtf8 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
const fromUtf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');

export const newEventStreamCodec = (): EventStreamCodec => new EventStreamCodec(toUtf8, fromUtf8);

export async function* eventStreamMessages(chunks: AsyncIterable<Buffer>): AsyncGenerator<Message, void, undefined> {
  const codec = newEventStreamCodec();
  for await (const chunk of chunks) {
    codec.feed(chunk);
    for (const message of codec.getAvailableMessages().getMessages()) yield message;
  }
  codec.endOfStream();
  for (const message of codec.getAvailableMessages().getMessages()) yield message;
}

/** A string header's value (`:event-type`, `:message-type`, `:exception-type`). */
export function headerString(message: Message, name: string): string | null {
  const header = message.headers[name];
  return header && header.type === 'string' ? header.value : null;
}
