import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake Gemini API for Veo over real HTTP: `POST /v1beta/models/{model}:predictLongRunning`
 * → `{name: "models/{model}/operations/{id}"}`; `GET /v1beta/{name}` → not done for
 * `pollsToFinish` polls, then `done` with `response.generateVideoResponse.generatedSamples[0]
 * .video.uri` (a file on this server), or `error` when the prompt contains "please fail";
 * `GET /v1beta/files/{id}:download?alt=media` → only with the API key, a redirect to the file
 * on another origin (its storage: Google's examples download with `curl -L`), which serves the
 * MP4 by its signed URL and refuses a request that carries the API key (a key must not leak there).
 */

export interface FakeVeoOperation {
  name: string;
  model: string;
  request: any;
  polls: number;
}

export interface FakeVeo {
  /** As GEMINI_BASE_URL takes it: no version. */
  url: string;
  operations: Map<string, FakeVeoOperation>;
  downloads: number;
  /** Requests the storage origin refused because they carried the API key. */
  leakedKeys: number;
  close(): Promise<void>;
}

export async function startFakeVeo(options: { apiKey?: string; content: Buffer; pollsToFinish?: number }): Promise<FakeVeo> {
  const apiKey = options.apiKey ?? 'gemini-fake-key';
  const pollsToFinish = options.pollsToFinish ?? 2;
  const operations = new Map<string, FakeVeoOperation>();
  let sequence = 0;
  const state = { downloads: 0, leakedKeys: 0 };
  let base = '';
  const storage = createServer((req, res) => {
    if (req.headers['x-goog-api-key'] !== undefined) {
      state.leakedKeys++;
      res.writeHead(400, { 'content-type': 'application/xml' });
      return res.end('<Error><Code>InvalidArgument</Code><Message>Unexpected credentials.</Message></Error>');
    }
    if (!/^\/files\/[^/?]+\?signature=\w+$/.test(req.url ?? '')) {
      res.writeHead(403, { 'content-type': 'application/xml' });
      return res.end('<Error><Code>AccessDenied</Code></Error>');
    }
    state.downloads++;
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': options.content.length });
    res.end(options.content);
  });
  await new Promise<void>((resolve) => storage.listen(0, '127.0.0.1', resolve));
  const storageOrigin = `http://127.0.0.1:${(storage.address() as AddressInfo).port}`;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, code: number, status: string, message: string) =>
    json(res, code, { error: { code, message, status } });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if ((req.headers['x-goog-api-key'] ?? url.searchParams.get('key')) !== apiKey)
      return error(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    const predict = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(url.pathname);
    if (req.method === 'POST' && predict) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (!body.instances?.[0]?.prompt) return error(res, 400, 'INVALID_ARGUMENT', 'instances[0].prompt is required');
        const model = decodeURIComponent(predict[1]!);
        const name = `models/${model}/operations/op${++sequence}`;
        operations.set(name, { name, model, request: body, polls: 0 });
        json(res, 200, { name });
      });
      return;
    }
    const file = /^\/v1beta\/files\/([^/:]+):download$/.exec(url.pathname);
    if (req.method === 'GET' && file) {
      res.writeHead(302, { location: `${storageOrigin}/files/${file[1]}?signature=abc123` });
      return res.end();
    }
    const operation = operations.get(url.pathname.replace(/^\/v1beta\//, ''));
    if (req.method !== 'GET' || !operation) return error(res, 404, 'NOT_FOUND', `Requested entity was not found.`);
    operation.polls++;
    if (operation.polls < pollsToFinish) return json(res, 200, { name: operation.name });
    if (String(operation.request.instances[0].prompt).includes('please fail')) {
      return json(res, 200, { name: operation.name, done: true, error: { code: 3, message: 'The prompt could not be processed.' } });
    }
    const id = operation.name.split('/').at(-1);
    return json(res, 200, {
      name: operation.name,
      done: true,
      response: {
        '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
        generateVideoResponse: { generatedSamples: [{ video: { uri: `${base}/v1beta/files/${id}:download?alt=media` } }] },
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    operations,
    get downloads() {
      return state.downloads;
    },
    get leakedKeys() {
      return state.leakedKeys;
    },
    close: async () => {
      for (const s of [server, storage]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
