import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import sharp from 'sharp';
import { answerError, sendJson } from '../../src/rest/http';
import { discardRemainingBody, fieldValues, readMultipart, type MultipartLimits } from '../../src/rest/multipart';
import { sniffImageFormat } from '../../src/domain/shared/image-bytes';

/** A real HTTP server whose one route reads a multipart body and echoes what it got. */
const LIMITS: MultipartLimits = { maxFileBytes: 64 * 1024, maxFiles: 3, maxFields: 4, maxFieldBytes: 1024, maxTotalBytes: 160 * 1024 };
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    readMultipart(req, LIMITS).then(
      (form) =>
        sendJson(res, 200, {
          fields: form.fields,
          prompt: fieldValues(form, 'prompt'),
          files: form.files.map((f) => ({
            field: f.field,
            filename: f.filename,
            mimeType: f.mimeType,
            size: f.data.length,
            format: sniffImageFormat(f.data),
            first: f.data[0],
          })),
        }),
      (error) => void discardRemainingBody(req, LIMITS.maxTotalBytes).then(() => answerError(res, error, pino({ level: 'silent' }))),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const post = async (body: FormData | string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { method: 'POST', body, headers });
  return { status: response.status, body: (await response.json()) as any };
};

const bytes = (size: number, fill = 7) => new Blob([new Uint8Array(size).fill(fill)]);

describe('readMultipart', () => {
  it('collects text fields (repeated ones in order) and each file part into one buffer', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('prompt', 'a red square');
    form.append('n', '2');
    form.append('image[]', new Blob([png], { type: 'image/png' }), 'a.png');
    form.append('image[]', bytes(50_000), 'b.bin');
    const { status, body } = await post(form);
    expect(status).toBe(200);
    expect(body.fields).toEqual([
      { name: 'prompt', value: 'a red square' },
      { name: 'n', value: '2' },
    ]);
    expect(body.prompt).toEqual(['a red square']);
    expect(body.files).toEqual([
      { field: 'image[]', filename: 'a.png', mimeType: 'image/png', size: png.length, format: 'png', first: 0x89 },
      { field: 'image[]', filename: 'b.bin', mimeType: 'application/octet-stream', size: 50_000, format: null, first: 7 },
    ]);
  });

  it('refuses a file over the per-file limit with 413 naming it', async () => {
    const form = new FormData();
    form.append('image', bytes(64 * 1024 + 1), 'big.png');
    const { status, body } = await post(form);
    expect(status).toBe(413);
    expect(body.error.code).toBe('payload_too_large');
    expect(body.error.message).toContain("'image'");
    expect(body.error.details).toEqual({ limit: 'max_file_bytes', limit_value: 64 * 1024 });
  });

  it('refuses too many files, too many fields and a too long field with 413 naming the limit', async () => {
    const files = new FormData();
    for (let i = 0; i < 4; i++) files.append('image', bytes(10), `${i}.png`);
    expect((await post(files)).body.error.details.limit).toBe('max_files');

    const fields = new FormData();
    for (let i = 0; i < 5; i++) fields.append(`f${i}`, 'x');
    expect((await post(fields)).body.error.details.limit).toBe('max_fields');

    const long = new FormData();
    long.append('prompt', 'x'.repeat(1025));
    const answer = await post(long);
    expect(answer.status).toBe(413);
    expect(answer.body.error.message).toContain("'prompt'");
    expect(answer.body.error.details.limit).toBe('max_field_bytes');
  });

  it('refuses a body over the total limit, declared or streamed', async () => {
    const form = new FormData();
    for (let i = 0; i < 3; i++) form.append('image', bytes(60 * 1024), `${i}.png`);
    const declared = await post(form);
    expect(declared.status).toBe(413);
    expect(declared.body.error.details.limit).toBe('max_total_bytes');

    // Chunked (no Content-Length): the limit is counted while streaming.
    const boundary = 'XBOUNDARYX';
    const part = (i: number) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${i}.png"\r\nContent-Type: image/png\r\n\r\n${'a'.repeat(60 * 1024)}\r\n`;
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new TextEncoder().encode(part(i)));
        controller.enqueue(new TextEncoder().encode(`--${boundary}--\r\n`));
        controller.close();
      },
    });
    const response = await fetch(url, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error.details.limit).toBe('max_total_bytes');
  });

  it('answers 400 for a malformed body and 415 for a body that is not multipart', async () => {
    const truncated = await post('--B\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhello', {
      'content-type': 'multipart/form-data; boundary=B',
    });
    expect(truncated.status).toBe(400);
    expect(truncated.body.error.code).toBe('bad_request');

    // Cut inside a file part: busboy errors the part's own stream (which once ended the process).
    const cutInFile = await post(
      '--B\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG',
      { 'content-type': 'multipart/form-data; boundary=B' },
    );
    expect(cutInFile.status).toBe(400);
    expect(cutInFile.body.error.message).toMatch(/malformed/);

    const noBoundary = await post('x', { 'content-type': 'multipart/form-data' });
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.body.error.message).toMatch(/boundary/);

    const json = await post('{}', { 'content-type': 'application/json' });
    expect(json.status).toBe(415);
    expect(json.body.error.code).toBe('unsupported_media_type');
  });
});

describe('sniffImageFormat', () => {
  it('knows PNG, JPEG and WebP by their bytes and nothing else', async () => {
    const source = sharp({ create: { width: 4, height: 4, channels: 3, background: '#00ff00' } });
    expect(sniffImageFormat(await source.clone().png().toBuffer())).toBe('png');
    expect(sniffImageFormat(await source.clone().jpeg().toBuffer())).toBe('jpeg');
    expect(sniffImageFormat(await source.clone().webp().toBuffer())).toBe('webp');
    expect(sniffImageFormat(await source.clone().gif().toBuffer())).toBeNull();
    expect(sniffImageFormat(Buffer.from('RIFF\0\0\0\0WAVE'))).toBeNull();
    expect(sniffImageFormat(Buffer.alloc(0))).toBeNull();
  });
});
