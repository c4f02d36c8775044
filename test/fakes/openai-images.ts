import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import busboy from 'busboy';
import sharp from 'sharp';

/**
 * A fake OpenAI Images API over real HTTP: `POST /v1/images/generations` (JSON) and
 * `POST /v1/images/edits` (multipart), one image per call as `{created, data: [{b64_json}],
 * usage}`. The first half is plumbing the Imagen and Gemini image fakes share: bodies kept as
 * raw bytes (uploads are binary), multipart parsed, replies scripted per call.
 */

export interface ImageFakeReply {
  /** Answer this HTTP status with the vendor's error body. */
  status?: number;
  errorMessage?: string;
  /** The error answer's `Retry-After` header (seconds). */
  retryAfter?: string;
  /** Pixel size of the image answered (default: the size asked, or 1024x1024). */
  width?: number;
  height?: number;
  format?: 'png' | 'jpeg' | 'webp';
  /** Wait before answering (ms). */
  delayMs?: number;
  /** Answer bytes that are no image. */
  notAnImage?: boolean;
}

export interface RecordedImageRequest {
  method: string;
  path: string;
  /** The URL's query parameters. */
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, when JSON. */
  json: any;
  /** Multipart text fields and files, when multipart. */
  fields: Record<string, string>;
  files: { field: string; filename: string; mimeType: string; data: Buffer }[];
  bodyBytes: number;
  /** True when the client went away before the answer. */
  aborted: boolean;
  /** When the request arrived and when its answer was complete (ms since the epoch). */
  receivedAt: number;
  answeredAt: number | null;
}

export interface ImageFake {
  /** Base URL by the vendor SDK's convention (OpenAI with `/v1`; Google origin only). */
  url: string;
  apiKey: string;
  requests: RecordedImageRequest[];
  /** Replies for the next calls in order; the last keeps answering. */
  script(...replies: ImageFakeReply[]): void;
  close(): Promise<void>;
}

export interface ImageExchange {
  request: RecordedImageRequest;
  reply: ImageFakeReply;
  json(status: number, body: unknown, headers?: Record<string, string>): void;
}

export async function startImageFake(
  options: { apiKey: string; basePath: string },
  handle: (exchange: ImageExchange) => Promise<void>,
): Promise<ImageFake> {
  const requests: RecordedImageRequest[] = [];
  let queue: ImageFakeReply[] = [{}];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const request = await recordImageRequest(req, res);
      requests.push(request);
      const reply = queue.length > 1 ? queue.shift()! : queue[0]!;
      // The wait ends early when the client leaves (no timer outlives a test).
      if (reply.delayMs) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, reply.delayMs);
          res.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      if (res.destroyed) return;
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      await handle({ request, reply, json });
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake vendor defect: ${String(error)}` } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin + options.basePath,
    apiKey: options.apiKey,
    requests,
    script: (...replies) => void (queue = replies.length > 0 ? replies : [{}]),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function recordImageRequest(req: IncomingMessage, res: ServerResponse): Promise<RecordedImageRequest> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const record: RecordedImageRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    json: undefined,
    fields: {},
    files: [],
    bodyBytes: 0,
    aborted: false,
    receivedAt: Date.now(),
    answeredAt: null,
  };
  res.on('finish', () => (record.answeredAt = Date.now()));
  res.on('close', () => {
    if (!res.writableFinished) record.aborted = true;
  });
  if (/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    await new Promise<void>((resolve, reject) => {
      const parser = busboy({ headers: req.headers, limits: { fileSize: 256 * 1024 * 1024 } });
      parser.on('field', (name, value) => (record.fields[name] = value));
      parser.on('file', (field, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => record.files.push({ field, filename: info.filename, mimeType: info.mimeType, data: Buffer.concat(chunks) }));
      });
      parser.on('close', resolve);
      parser.on('error', reject);
      req.on('data', (chunk: Buffer) => (record.bodyBytes += chunk.length));
      req.pipe(parser);
    });
  } else {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    record.bodyBytes = raw.length;
    try {
      record.json = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      record.json = undefined;
    }
  }
  return record;
}

/** A real image of the reply's size (else `fallback`), in the reply's format (PNG by default), base64. */
export async function fakeImageBase64(reply: ImageFakeReply, fallback: { width: number; height: number }): Promise<string> {
  if (reply.notAnImage) return Buffer.from('this is not an image').toString('base64');
  const width = reply.width ?? fallback.width;
  const height = reply.height ?? fallback.height;
  const image = sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } });
  const format = reply.format ?? 'png';
  return (await (format === 'jpeg' ? image.jpeg() : format === 'webp' ? image.webp() : image.png()).toBuffer()).toString('base64');
}

export const parseSize = (size: unknown): { width: number; height: number } => {
  const match = /^(\d+)x(\d+)$/.exec(typeof size === 'string' ? size : '');
  return match ? { width: Number(match[1]), height: Number(match[2]) } : { width: 1024, height: 1024 };
};

const MIME_OF = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;
export const mimeOf = (reply: ImageFakeReply) => MIME_OF[reply.format ?? 'png'];

/** The fake OpenAI Images API. */
export async function startFakeOpenAIImages(options: { apiKey?: string } = {}): Promise<ImageFake> {
  const apiKey = options.apiKey ?? 'sk-fake-images';
  return startImageFake({ apiKey, basePath: '/v1' }, async ({ request, reply, json }) => {
    const error = (status: number, message: string, type = 'invalid_request_error') =>
      json(status, { error: { message, type, param: null, code: null } });
    if (request.headers.authorization !== `Bearer ${apiKey}`) return error(401, 'Incorrect API key provided.');
    if (reply.status) return error(reply.status, reply.errorMessage ?? 'The fake vendor failed.', 'server_error');
    const isEdit = request.path === '/v1/images/edits';
    if (request.method !== 'POST' || (!isEdit && request.path !== '/v1/images/generations'))
      return error(404, `Unknown path ${request.path}`);
    const body = isEdit ? request.fields : (request.json ?? {});
    if (typeof body.prompt !== 'string' || !body.prompt) return error(400, "Missing required parameter: 'prompt'.");
    if (isEdit && !request.files.some((f) => f.field === 'image' || f.field === 'image[]'))
      return error(400, "Missing required parameter: 'image'.");
    if (Number(body.n ?? 1) !== 1) return error(400, 'The fake makes one image per call.');
    json(200, {
      created: Math.floor(Date.now() / 1000),
      data: [{ b64_json: await fakeImageBase64(reply, parseSize(body.size)) }],
      usage: {
        input_tokens: 50,
        input_tokens_details: { image_tokens: isEdit ? 40 : 0, text_tokens: 10 },
        output_tokens: 272,
        total_tokens: 322,
      },
    });
  });
}
