import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { CanonicalRequest } from '../../src/domain/generation/canonical';
import { Cancellation } from '../../src/domain/generation/cancellation';
import { ProviderError } from '../../src/domain/generation/errors';
import { createProviderRegistry } from '../../src/providers/registry';
import { VendorTransport } from '../../src/providers/transport/client';
import { createVideoProviderRegistry } from '../../src/providers/videos/registry';
import { startFakeAnthropic } from '../fakes/anthropic';
import { startFakeOpenAI } from '../fakes/openai';
import { startFakeOpenAIVideos } from '../fakes/openai-videos';
import { runProvider } from '../support/provider-events';

/**
 * The one vendor transport (src/providers/transport) over real HTTP: the failures every
 * modality shares (vendor status and message, Retry-After kept for a failover, secrets never
 * echoed), JSON GETs, multipart forms and streamed downloads (redirects, stalls).
 */

const TIMEOUTS = { connectMs: 1000, headersMs: 1000, bodyIdleMs: 300 };
const SECRET = 'sk-transport-secret-0123';

/** A local server whose handler is set per test. */
async function startServer(): Promise<{
  url: string;
  origin: string;
  handle(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  /** Requests received. */
  requests(): number;
  close(): Promise<void>;
}> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  let received = 0;
  const server: Server = createServer((req, res) => {
    received++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    origin,
    handle: (next) => (handler = next),
    requests: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const failure = async (promise: Promise<unknown>): Promise<ProviderError> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
};

const waitFor = async (condition: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
};

const readAll = async (stream: AsyncIterable<Buffer>): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
};

describe('Retry-After on vendor failures (what a failover will honour)', () => {
  const catalog = builtinCatalog();
  const gpt = findModel(catalog, 'openai/gpt-4o-mini', 'text')!;
  const claude = findModel(catalog, 'anthropic/claude-sonnet-4-5', 'text')!;
  const request = (model: typeof gpt): CanonicalRequest => ({
    model,
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    maxOutputTokens: 100,
    reasoning: { mode: 'default' },
  });

  test("OpenAI's 429 and Anthropic's 529 keep the vendor's wait; a 400 has none; statuses and messages are the vendor's", async () => {
    const openai = await startFakeOpenAI();
    const anthropic = await startFakeAnthropic();
    const registry = createProviderRegistry(
      new Map([
        ['openai', { vendor: 'openai', protocol: 'openai', apiKey: 'sk-fake-openai', baseUrl: openai.url }],
        ['anthropic', { vendor: 'anthropic', protocol: 'anthropic', apiKey: 'sk-ant-fake', baseUrl: anthropic.url }],
      ] as const),
      { http: { timeouts: TIMEOUTS } },
    );
    try {
      openai.script({ status: 429, errorMessage: 'Rate limit reached for gpt-4o-mini.', retryAfter: '7' });
      const limited = (await runProvider(registry.forModel(gpt), request(gpt))).error as ProviderError;
      expect(limited).toBeInstanceOf(ProviderError);
      expect(limited).toMatchObject({ status: 502, code: 'provider_error', vendorStatus: 429, kind: 'http_429', retryAfterMs: 7000 });
      expect(limited.message).toBe('openai answered HTTP 429: Rate limit reached for gpt-4o-mini.');

      anthropic.script({ status: 529, errorMessage: 'Overloaded', retryAfter: '2' });
      const overloaded = (await runProvider(registry.forModel(claude), request(claude))).error as ProviderError;
      expect(overloaded).toMatchObject({ vendorStatus: 529, kind: 'http_5xx', retryAfterMs: 2000 });

      openai.script({ status: 400, errorMessage: 'Invalid value for temperature.', retryAfter: '7' });
      const refused = (await runProvider(registry.forModel(gpt), request(gpt))).error as ProviderError;
      expect(refused).toMatchObject({ vendorStatus: 400, kind: 'http_4xx', retryAfterMs: null });
    } finally {
      await registry.close();
      await openai.close();
      await anthropic.close();
    }
  });
});

describe('VendorTransport', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let storage: Awaited<ReturnType<typeof startServer>>;
  let http: VendorTransport;
  const party = { vendor: 'acme', secrets: [SECRET] };

  beforeAll(async () => {
    server = await startServer();
    storage = await startServer();
    http = new VendorTransport({ timeouts: TIMEOUTS });
  });
  afterAll(async () => {
    await http.close();
    await server.close();
    await storage.close();
  });

  test('getJson: the parsed answer; a vendor error keeps its status and message with the key redacted; a body that is not JSON is an invalid answer', async () => {
    server.handle((req, res) => {
      if (req.url === '/v1/jobs/1')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"1","status":"queued"}');
      if (req.url === '/v1/jobs/2')
        return void res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after-ms': '1500' })
          .end(JSON.stringify({ error: { message: `Busy; your key ${SECRET} is fine` } }));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    });
    const target = (path: string) => ({ ...party, baseUrl: `${server.url}/v1`, path, headers: { authorization: `Bearer ${SECRET}` } });
    expect(await http.getJson(target('/jobs/1'))).toEqual({ id: '1', status: 'queued' });
    const busy = await failure(http.getJson(target('/jobs/2')));
    expect(busy).toMatchObject({
      vendorStatus: 503,
      kind: 'http_5xx',
      retryAfterMs: 1500,
      details: { vendor: 'acme', vendor_status: 503 },
    });
    expect(busy.message).toBe('acme answered HTTP 503: Busy; your key [redacted] is fine');
    expect(await failure(http.getJson(target('/jobs/3')))).toMatchObject({
      kind: 'invalid_answer',
      message: 'acme answered with a body that is not JSON.',
    });
  });

  test('postJson: a failure before the answer may go elsewhere, one after its first byte may not; a cancelled call ends the request', async () => {
    const arrived: string[] = [];
    const dropped: string[] = [];
    server.handle((req, res) => {
      arrived.push(req.url!);
      req.socket.once('close', () => dropped.push(req.url!));
      req.resume();
      if (req.url === '/v1/refused') return void req.socket.destroy();
      if (req.url === '/v1/cut')
        return void res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
          .write('{"id":', () => req.socket.destroy());
      if (req.url === '/v1/early-hint') {
        res.writeEarlyHints({ link: '</a>; rel=preload' });
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"hinted"}');
      }
      if (req.url === '/v1/long-error')
        return void res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'x'.repeat(200_000) } }));
      // '/v1/slow': answers nothing until the client goes
    });
    const call = (path: string, signal?: Cancellation) => ({
      ...party,
      baseUrl: `${server.url}/v1`,
      path,
      headers: { authorization: `Bearer ${SECRET}` },
      body: { hello: 'world' },
      signal,
    });
    expect(await failure(http.postJson(call('/refused')))).toMatchObject({ kind: 'connect', vendorStatus: null });
    expect(await failure(http.postJson(call('/cut')))).toMatchObject({ kind: 'broken_stream', vendorStatus: null });
    expect(await http.postJson(call('/early-hint'))).toEqual({ id: 'hinted' });
    // An error body longer than what is read for its message: the status and a message, no hang.
    expect(await failure(http.postJson(call('/long-error')))).toMatchObject({ vendorStatus: 500, kind: 'http_5xx' });

    // A transport that would wait a minute for the answer: only the cancellation ends the call.
    const patient = new VendorTransport({ timeouts: { ...TIMEOUTS, headersMs: 60_000 } });
    const cancellation = new Cancellation();
    const slow = failure(patient.postJson(call('/slow', cancellation)));
    await waitFor(() => arrived.includes('/v1/slow'));
    cancellation.cancel();
    expect(await slow).toMatchObject({ kind: 'cancelled' });
    // The vendor sees its connection close (its work stops), not a minute later.
    await waitFor(() => dropped.includes('/v1/slow'));
    // Already cancelled: nothing is sent.
    const before = server.requests();
    expect(await failure(patient.postJson(call('/slow', cancellation)))).toMatchObject({ kind: 'cancelled' });
    expect(server.requests()).toBe(before);
    await patient.close();
  });

  test('openEventStream: every event in order past a slow reader; JSON instead of a stream, an error status, a break, an early close and a cancellation', async () => {
    const dropped: string[] = [];
    const EVENTS = 300;
    server.handle((req, res) => {
      req.socket.once('close', () => dropped.push(req.url!));
      req.resume();
      const sse = () => res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/v1/many') {
        sse();
        // One write per event, each in its own turn: many small chunks, faster than the reader.
        let i = 0;
        const next = () =>
          i < EVENTS ? void res.write(`data: {"n":${i++}}\n\n`, () => setImmediate(next)) : void res.end('data: [DONE]\n\n');
        return next();
      }
      if (req.url === '/v1/json')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'quota gone' } }));
      if (req.url === '/v1/busy')
        return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' }).end('{"error":{"message":"slow down"}}');
      if (req.url === '/v1/break') {
        sse();
        return void res.write('data: {"n":0}\n\n', () => setTimeout(() => req.socket.destroy(), 20));
      }
      // '/v1/endless': one event, then nothing until the client goes
      sse();
      res.write('data: {"n":0}\n\n');
    });
    const call = (path: string, signal?: Cancellation) => ({
      ...party,
      baseUrl: `${server.url}/v1`,
      path,
      headers: { authorization: `Bearer ${SECRET}` },
      body: { stream: true },
      signal,
    });
    const many = await http.openEventStream(call('/many'));
    const data: string[] = [];
    for (let events = await many.next(); events !== null; events = await many.next()) {
      data.push(...events.map((e) => e.data));
      if (data.length < 20) await new Promise((resolve) => setTimeout(resolve, 5)); // a slow start: the vendor runs ahead
    }
    many.close();
    expect(data).toEqual([...Array.from({ length: EVENTS }, (_, n) => `{"n":${n}}`), '[DONE]']);

    expect(await failure(http.openEventStream(call('/json')))).toMatchObject({
      kind: 'invalid_answer',
      message: 'acme answered JSON instead of an event stream: quota gone',
    });
    expect(await failure(http.openEventStream(call('/busy')))).toMatchObject({ vendorStatus: 429, retryAfterMs: 2000 });

    const broken = await http.openEventStream(call('/break'));
    expect((await broken.next())!.map((e) => e.data)).toEqual(['{"n":0}']);
    expect(await failure(broken.next())).toMatchObject({ kind: 'broken_stream' });
    broken.close();

    // A transport that would wait a minute for the next chunk: only the close or the cancellation ends the call.
    const patient = new VendorTransport({ timeouts: { ...TIMEOUTS, bodyIdleMs: 60_000 } });
    // The consumer stops early: the vendor's request is ended.
    const early = await patient.openEventStream(call('/endless'));
    expect((await early.next())!.map((e) => e.data)).toEqual(['{"n":0}']);
    early.close();
    await waitFor(() => dropped.filter((url) => url === '/v1/endless').length === 1);

    // The client goes: the waiting read fails as cancelled, and the vendor's request is ended.
    const cancellation = new Cancellation();
    const cancelled = await patient.openEventStream(call('/endless', cancellation));
    expect((await cancelled.next())!.map((e) => e.data)).toEqual(['{"n":0}']);
    const waiting = failure(cancelled.next());
    cancellation.cancel();
    expect(await waiting).toMatchObject({ kind: 'cancelled' });
    cancelled.close();
    await waitFor(() => dropped.filter((url) => url === '/v1/endless').length === 2);
    await patient.close();
  });

  test('a form goes as multipart/form-data that a standard parser reads back: fields, file bytes, names', async () => {
    const file = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
    let received: { fields: Record<string, string>; files: { name: string; filename: string; mimeType: string; bytes: Buffer }[] } | null =
      null;
    server.handle((req, res) => {
      const fields: Record<string, string> = {};
      const files: { name: string; filename: string; mimeType: string; bytes: Buffer }[] = [];
      const parser = busboy({ headers: req.headers });
      parser.on('field', (name, value) => (fields[name] = value));
      parser.on('file', (name, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => files.push({ name, filename: info.filename, mimeType: info.mimeType, bytes: Buffer.concat(chunks) }));
      });
      parser.on('close', () => {
        received = { fields, files };
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
      req.pipe(parser);
    });
    const form = [
      { name: 'prompt', value: 'a "quoted"\r\nprompt' },
      { name: 'image[]', filename: 'a.png', contentType: 'image/png', data: file },
      { name: 'image[]', filename: 'b"\r\n.png', contentType: 'image/png', data: file.subarray(0, 4) },
    ];
    expect(await http.postJson({ ...party, baseUrl: server.url, path: '/edits', headers: {}, body: null, form })).toEqual({ ok: true });
    expect(received!.fields).toEqual({ prompt: 'a "quoted"\r\nprompt' });
    expect(received!.files.map((f) => [f.name, f.filename, f.mimeType, f.bytes.toString('hex')])).toEqual([
      ['image[]', 'a.png', 'image/png', file.toString('hex')],
      ['image[]', 'b___.png', 'image/png', file.subarray(0, 4).toString('hex')],
    ]);
  });

  test('download: follows redirects, keeps the headers on their origin only, and streams the file', async () => {
    const file = Buffer.alloc(256 * 1024, 7);
    const seen: { path: string; key: string | undefined }[] = [];
    storage.handle((req, res) => {
      seen.push({ path: req.url!, key: req.headers['x-api-key'] as string | undefined });
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': file.length }).end(file);
    });
    server.handle((req, res) => {
      seen.push({ path: req.url!, key: req.headers['x-api-key'] as string | undefined });
      if (req.url === '/files/1:download?alt=media') return void res.writeHead(302, { location: '/files/1/signed' }).end();
      res.writeHead(307, { location: `${storage.origin}/bucket/1?sig=x` }).end();
    });
    const body = await readAll(
      await http.download({ ...party, url: `${server.url}/files/1:download?alt=media`, headers: { 'x-api-key': SECRET } }),
    );
    expect(body.equals(file)).toBe(true);
    expect(seen).toEqual([
      { path: '/files/1:download?alt=media', key: SECRET },
      { path: '/files/1/signed', key: SECRET },
      { path: '/bucket/1?sig=x', key: undefined },
    ]);
  });

  test('download: a vendor error, endless redirects and a file that stalls mid-way are ProviderErrors', async () => {
    server.handle((req, res) => {
      if (req.url === '/missing')
        return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"No such file."}}');
      if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/nowhere') return void res.writeHead(303).end('see elsewhere');
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 1000 });
      res.write(Buffer.alloc(500));
    });
    const download = (path: string) => http.download({ ...party, url: server.url + path, headers: {} });
    expect(await failure(download('/missing'))).toMatchObject({ vendorStatus: 404, message: 'acme answered HTTP 404: No such file.' });
    expect(await failure(download('/loop'))).toMatchObject({
      kind: 'invalid_answer',
      message: 'acme redirected the download more than 5 times.',
    });
    expect(await failure(download('/nowhere'))).toMatchObject({
      kind: 'invalid_answer',
      message: 'acme redirected the download without a location.',
    });
    const stalled = await failure(readAll(await download('/stall')));
    expect(stalled).toMatchObject({ kind: 'timeout', message: 'acme sent nothing for 0.3 s in the middle of its answer.' });
  });
});

describe('video vendor errors through the transport', () => {
  test("a vendor's refusal keeps its status and message; the key it echoes is redacted", async () => {
    const fake = await startFakeOpenAIVideos({ apiKey: 'sk-right-key', content: Buffer.alloc(8) });
    const sora = findModel(builtinCatalog(), 'openai/sora-2', 'video')!;
    const registry = createVideoProviderRegistry(
      new Map([['openai', { vendor: 'openai', protocol: 'openai', apiKey: SECRET, baseUrl: fake.url }]]),
      { sandbox: { renderMs: 0, slowMs: 0 }, http: { timeouts: TIMEOUTS } },
    );
    try {
      const provider = registry.forModel(sora);
      const refused = await failure(
        provider.start({ model: sora, prompt: 'p', seconds: 4, resolution: '720p', ratio: '16:9', inputs: [] }),
      );
      expect(refused).toMatchObject({ status: 502, vendorStatus: 401, kind: 'http_4xx' });
      expect(refused.message).toBe(`openai answered HTTP 401: Incorrect API key provided: [redacted].`);
      expect(await failure(provider.poll({ id: 'video_missing' }))).toMatchObject({ vendorStatus: 401 });
    } finally {
      await registry.close();
      await fake.close();
    }
  });
});
