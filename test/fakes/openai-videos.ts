import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

/**
 * A fake OpenAI videos API over real HTTP: `POST /v1/videos` (multipart, as the official SDK
 * sends it, or JSON) with `seconds` as a string ("4", "8", "12") and `size` in pixels
 * (`1280x720`), `GET /v1/videos/{id}` (queued → in_progress with progress → completed, or
 * failed when the prompt contains "please fail"), `GET /v1/videos/{id}/content` (the MP4).
 * A job advances one step per poll: `pollsToFinish` polls after creation it is done.
 */

export interface FakeOpenAIVideoJob {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  inputReference: { mimeType: string; bytes: Buffer } | null;
  polls: number;
}

/** Another host of this API (Azure OpenAI's v1 API: azure-openai-videos.ts): where it is, its key check, its error bodies. */
export interface FakeVideosDialect {
  /** Where `/videos` sits (`/v1`). */
  apiPath: string;
  /** What the fake's `url` ends with (`/v1`: OPENAI_BASE_URL includes it). */
  urlPath: string;
  /** A refusal of the request's credentials, or null. */
  authorize(req: IncomingMessage): FakeRefusal | null;
  /** A refusal of a create's `model`, or null. */
  checkModel(model: string | undefined): FakeRefusal | null;
  errorBody(refusal: FakeRefusal): unknown;
}

export interface FakeRefusal {
  status: number;
  message: string;
  code?: string | null;
  param?: string | null;
}

const OPENAI_DIALECT: FakeVideosDialect = {
  apiPath: '/v1',
  urlPath: '/v1',
  authorize: () => null, // set per fake (its key)
  checkModel: () => null,
  errorBody: ({ message, param = null, code = null }) => ({ error: { message, type: 'invalid_request_error', param, code } }),
};

export interface FakeOpenAIVideos {
  /** Base URL including /v1, as OPENAI_BASE_URL takes it (the host only, for Azure's dialect). */
  url: string;
  /** Every request, in order: method and path (creations, polls, downloads). */
  requests: { method: string; path: string }[];
  jobs: Map<string, FakeOpenAIVideoJob>;
  /** How many creations were received (a duplicate start would show here). */
  creations: number;
  /** Answer the next N polls with this HTTP status (transient vendor failures). */
  failNextPolls(count: number, status: number): void;
  /** Answer the next N creations with this HTTP status and headers (`retry-after`), creating nothing. */
  failNextCreations(count: number, status: number, headers?: Record<string, string>): void;
  /** The next N downloads send half the file, then nothing (a stalled connection). */
  stallNextDownloads(count: number): void;
  /** Downloads answered (stalled ones included). */
  downloads: number;
  close(): Promise<void>;
}

const SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
const SECONDS = ['4', '8', '12'];

export async function startFakeOpenAIVideos(options: {
  apiKey?: string;
  content: Buffer;
  pollsToFinish?: number;
  dialect?: FakeVideosDialect;
}): Promise<FakeOpenAIVideos> {
  const apiKey = options.apiKey ?? 'sk-fake-openai';
  const dialect = options.dialect ?? {
    ...OPENAI_DIALECT,
    authorize: (req: IncomingMessage) =>
      req.headers.authorization === `Bearer ${apiKey}`
        ? null
        : { status: 401, message: `Incorrect API key provided: ${(req.headers.authorization ?? '').replace(/^Bearer /, '')}.` },
  };
  const pollsToFinish = options.pollsToFinish ?? 3;
  const jobs = new Map<string, FakeOpenAIVideoJob>();
  let sequence = 0;
  let failing = { count: 0, status: 500 };
  let failingCreations = { count: 0, status: 500, headers: {} as Record<string, string> };
  const requests: { method: string; path: string }[] = [];
  let stalls = 0;
  const state = { creations: 0, downloads: 0 };

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, message: string, param: string | null = null) =>
    json(res, status, dialect.errorBody({ status, message, param }));

  const videoObject = (job: FakeOpenAIVideoJob) => {
    const failed = job.prompt.includes('please fail') && job.polls >= 1;
    const done = !failed && job.polls >= pollsToFinish;
    const status = failed ? 'failed' : done ? 'completed' : job.polls === 0 ? 'queued' : 'in_progress';
    return {
      id: job.id,
      object: 'video',
      model: job.model,
      status,
      progress: done ? 100 : Math.floor((job.polls / pollsToFinish) * 100),
      created_at: 1_764_000_000,
      completed_at: done ? 1_764_000_100 : null,
      expires_at: null,
      prompt: job.prompt,
      seconds: job.seconds,
      size: job.size,
      remixed_from_video_id: null,
      error: failed ? { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' } : null,
    };
  };

  const readCreate = (
    req: IncomingMessage,
  ): Promise<{ fields: Record<string, string>; file: { mimeType: string; bytes: Buffer } | null }> =>
    new Promise((resolve, reject) => {
      if ((req.headers['content-type'] ?? '').startsWith('application/json')) {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve({ fields: JSON.parse(Buffer.concat(chunks).toString('utf8')), file: null }));
        return;
      }
      const fields: Record<string, string> = {};
      let file: { mimeType: string; bytes: Buffer } | null = null;
      const parser = busboy({ headers: req.headers });
      parser.on('field', (name, value) => (fields[name] = value));
      parser.on('file', (name, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (name === 'input_reference') file = { mimeType: info.mimeType, bytes: Buffer.concat(chunks) };
        });
      });
      parser.on('close', () => resolve({ fields, file }));
      parser.on('error', reject);
      req.pipe(parser);
    });

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    requests.push({ method: req.method ?? '', path });
    const refused = dialect.authorize(req);
    if (refused) return json(res, refused.status, dialect.errorBody(refused));
    if (req.method === 'POST' && path === `${dialect.apiPath}/videos`) {
      const { fields, file } = await readCreate(req);
      const badModel = dialect.checkModel(fields.model);
      if (badModel) return json(res, badModel.status, dialect.errorBody(badModel));
      if (failingCreations.count > 0) {
        failingCreations.count--;
        res.writeHead(failingCreations.status, { 'content-type': 'application/json', ...failingCreations.headers });
        return res.end(JSON.stringify(dialect.errorBody({ status: failingCreations.status, message: 'The fake failed this creation.' })));
      }
      if (!fields.prompt) return error(res, 400, "Missing required parameter: 'prompt'.", 'prompt');
      if (fields.seconds !== undefined && !SECONDS.includes(fields.seconds))
        return error(res, 400, `Invalid value: '${fields.seconds}'. Supported values are: '4', '8', and '12'.`, 'seconds');
      if (fields.size !== undefined && !SIZES.includes(fields.size)) return error(res, 400, `Invalid value: '${fields.size}'.`, 'size');
      state.creations++;
      const job: FakeOpenAIVideoJob = {
        id: `video_${(++sequence).toString().padStart(6, '0')}`,
        model: fields.model ?? 'sora-2',
        prompt: fields.prompt,
        seconds: fields.seconds ?? '4',
        size: fields.size ?? '720x1280',
        inputReference: file,
        polls: 0,
      };
      jobs.set(job.id, job);
      return json(res, 200, videoObject(job));
    }
    const match = path.startsWith(`${dialect.apiPath}/videos/`)
      ? /^\/videos\/([^/]+)(\/content)?$/.exec(path.slice(dialect.apiPath.length))
      : null;
    const job = match ? jobs.get(decodeURIComponent(match[1]!)) : undefined;
    if (req.method !== 'GET' || !match) return error(res, 404, `Invalid URL (${req.method} ${path})`);
    if (!job) return error(res, 404, `Video with id '${match[1]}' not found.`, 'id');
    if (match[2]) {
      if (videoObject(job).status !== 'completed')
        return error(res, 400, 'Video is not ready yet, use GET /v1/videos/{video_id} to check status.');
      state.downloads++;
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': options.content.length });
      if (stalls > 0) {
        stalls--;
        return void res.write(options.content.subarray(0, options.content.length >> 1));
      }
      return res.end(options.content);
    }
    if (failing.count > 0) {
      failing.count--;
      return error(res, failing.status, 'The server had an error while processing your request.');
    }
    job.polls++;
    return json(res, 200, videoObject(job));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${dialect.urlPath}`,
    jobs,
    requests,
    get creations() {
      return state.creations;
    },
    get downloads() {
      return state.downloads;
    },
    failNextPolls: (count, status) => (failing = { count, status }),
    failNextCreations: (count, status, headers = {}) => (failingCreations = { count, status, headers }),
    stallNextDownloads: (count) => (stalls = count),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
