import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../domain/shared/errors';
import { isMultipart, RequestAborted } from './http';

/*
 * A generic multipart/form-data reader for upload endpoints (image edits, video references).
 * The body is streamed through busboy: each file part is gathered once into its own Buffer,
 * text fields into strings, and the read stops at the first limit crossed with a 413
 * `payload_too_large` naming that limit. Call it after authentication, so that an unknown
 * key never makes the server read a large body.
 */

export interface MultipartLimits {
  /** Largest single file part, in bytes. */
  maxFileBytes: number;
  /** Most file parts in one request. */
  maxFiles: number;
  /** Most text fields in one request. */
  maxFields: number;
  /** Largest text field value, in bytes. */
  maxFieldBytes: number;
  /** Largest whole body (all parts, boundaries included), in bytes. */
  maxTotalBytes: number;
}

/** Defaults for an upload endpoint; the server passes its configured values. */
export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = {
  maxFileBytes: 25 * 1024 * 1024,
  maxFiles: 16,
  maxFields: 32,
  maxFieldBytes: 64 * 1024,
  maxTotalBytes: 100 * 1024 * 1024,
};

export interface MultipartFile {
  /** The part's field name as sent (`image`, `image[]`, `reference`...). */
  field: string;
  filename: string;
  /** The declared content type (the client's word only: check the bytes, see image-bytes.ts). */
  mimeType: string;
  data: Buffer;
}

export interface MultipartForm {
  /** Text fields in order of arrival; a repeated name keeps every value. */
  fields: { name: string; value: string }[];
  files: MultipartFile[];
}

/** The values sent for a text field, in order (an empty array when absent). */
export const fieldValues = (form: MultipartForm, name: string): string[] =>
  form.fields.filter((field) => field.name === name).map((field) => field.value);

const tooLarge = (message: string, limit: string, limitValue: number) => payloadTooLarge(message, limit, limitValue);

/**
 * Reads a multipart/form-data body. 415 when the body is not multipart, 413 naming the limit
 * crossed, 400 when it is malformed (bad boundary, truncated, a part without a name).
 */
export interface MultipartOptions {
  /**
   * When more file parts came than `maxFiles` (the first ones kept, the rest counted): the
   * error that tells the truth for this endpoint (a model's own, lower limit), or null for the
   * 413 naming `max_files`.
   */
  explainTooManyFiles?: (form: MultipartForm, fileParts: number) => Error | null;
}

export function readMultipart(
  req: IncomingMessage,
  limits: MultipartLimits = DEFAULT_MULTIPART_LIMITS,
  options: MultipartOptions = {},
): Promise<MultipartForm> {
  if (!isMultipart(req)) {
    return Promise.reject(unsupportedMediaType('The request body must be multipart/form-data.'));
  }
  if (req.headers['content-encoding'] && req.headers['content-encoding'].toLowerCase() !== 'identity') {
    return Promise.reject(unsupportedMediaType('Multipart bodies cannot be content-encoded.'));
  }
  const totalTooLarge = () =>
    tooLarge(`The request body is larger than the limit of ${limits.maxTotalBytes} bytes.`, 'max_total_bytes', limits.maxTotalBytes);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxTotalBytes) {
    req.resume(); // discard it, so that the client reads our answer
    return Promise.reject(totalTooLarge());
  }

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      limits: {
        fileSize: limits.maxFileBytes,
        // File parts past maxFiles are counted (their bytes skipped) up to the parts limit, so
        // the answer can say how many came; maxFiles itself is checked at the end.
        files: limits.maxFiles + limits.maxFields,
        fields: limits.maxFields,
        fieldSize: limits.maxFieldBytes,
        parts: limits.maxFiles + limits.maxFields,
      },
    });
  } catch {
    return Promise.reject(badRequest('The multipart body has no valid boundary in its Content-Type.', { field: null }));
  }

  return new Promise<MultipartForm>((resolve, reject) => {
    const form: MultipartForm = { fields: [], files: [] };
    let settled = false;
    let received = 0;
    let fileParts = 0;

    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.off('data', countBytes);
      req.resume(); // drain the rest unread, so that the answer reaches the client
      reject(error);
    };
    const countBytes = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxTotalBytes) fail(totalTooLarge());
    };

    parser.on('file', (name, stream, info) => {
      if (!name) {
        stream.resume();
        return fail(badRequest('A multipart file part has no field name.', { field: null }));
      }
      // A body cut inside a file part errors the part's stream: unheard, that error would end the process.
      stream.on('error', (error: Error) => fail(badRequest(`The multipart body is malformed: ${error.message}.`, { field: null })));
      if (++fileParts > limits.maxFiles) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () =>
        fail(
          tooLarge(
            `The file part '${name}' is larger than the limit of ${limits.maxFileBytes} bytes per file.`,
            'max_file_bytes',
            limits.maxFileBytes,
          ),
        ),
      );
      stream.on('end', () => {
        if (settled) return;
        form.files.push({
          field: name,
          filename: info.filename ?? '',
          mimeType: info.mimeType,
          data: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        });
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) {
        return fail(
          tooLarge(
            `The field '${name}' is longer than the limit of ${limits.maxFieldBytes} bytes per field.`,
            'max_field_bytes',
            limits.maxFieldBytes,
          ),
        );
      }
      if (!name) return fail(badRequest('A multipart field has no name.', { field: null }));
      form.fields.push({ name, value });
    });
    parser.on('filesLimit', () => fail(tooLarge(`The request has more than ${limits.maxFiles} file parts.`, 'max_files', limits.maxFiles)));
    parser.on('fieldsLimit', () =>
      fail(tooLarge(`The request has more than ${limits.maxFields} text fields.`, 'max_fields', limits.maxFields)),
    );
    parser.on('partsLimit', () =>
      fail(
        tooLarge(`The request has more than ${limits.maxFiles + limits.maxFields} parts.`, 'max_parts', limits.maxFiles + limits.maxFields),
      ),
    );
    parser.on('error', (error: Error) => fail(badRequest(`The multipart body is malformed: ${error.message}.`, { field: null })));
    parser.on('close', () => {
      if (settled) return;
      if (fileParts > limits.maxFiles) {
        return fail(
          options.explainTooManyFiles?.(form, fileParts) ??
            tooLarge(`The request has ${fileParts} file parts, more than the limit of ${limits.maxFiles}.`, 'max_files', limits.maxFiles),
        );
      }
      settled = true;
      resolve(form);
    });
    req.on('data', countBytes);
    req.once('aborted', () => fail(new RequestAborted()));
    req.once('error', () => fail(new RequestAborted()));
    req.pipe(parser);
  });
}

/**
 * Reads and throws away what is left of a request body, so that an early answer (401, 413,
 * 400) reaches a client that is still uploading: Node closes a connection whose request was
 * not read to its end, and the client then sees a reset instead of the answer. Nothing is
 * kept. Gives up (resolves) past `limitBytes`, or at once when the declared length is over
 * it: then the connection is closed, which is the only answer to such an upload.
 */
export function discardRemainingBody(req: IncomingMessage, limitBytes: number): Promise<void> {
  if (req.complete || req.readableEnded || req.destroyed) return Promise.resolve();
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let seen = 0;
    const done = () => {
      req.off('data', count);
      resolve();
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limitBytes) done();
    };
    req.on('data', count);
    req.once('end', done);
    req.once('close', done);
    req.resume();
  });
}
