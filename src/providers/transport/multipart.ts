import { randomBytes } from 'node:crypto';
import type { FormPart } from '../../protocols/form-parts';

/** A body already encoded: its content type and the chunks sent in order without being joined (large uploads are not copied again). */
export interface EncodedBody {
  contentType: string;
  chunks: readonly Buffer[];
  length: number;
}

/** Names and file names go inside quoted header values: a quote or a line break there would forge a part. */
const quoted = (text: string) => text.replace(/["\r\n]/g, '_');

/** Encodes form parts as multipart/form-data (RFC 7578) under a random boundary. */
export function multipartBody(parts: readonly FormPart[]): EncodedBody {
  const boundary = `tollgate-${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"\r\n\r\n${part.value}\r\n`));
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"; filename="${quoted(part.filename)}"\r\nContent-Type: ${part.contentType}\r\n\r\n`,
        ),
      );
      chunks.push(part.data, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, chunks, length: chunks.reduce((sum, chunk) => sum + chunk.length, 0) };
}
