import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  chatCompletions,
  pieces,
  sendCompletionPaced,
  startFakeVendor,
  type FakeExchange,
  type FakeOpenAIReply,
  type FakeReplyControls,
  type FakeVendor,
  type RecordedRequest,
  type SseOut,
} from './openai';

/**
 * A fake Google Vertex AI over real HTTP, with its OAuth token endpoint on a server of its own
 * (as `oauth2.googleapis.com` is another host):
 * - `POST {tokenUri}`: the JWT bearer grant. The assertion's RS256 signature is verified with the
 *   service account's public key, and its claims checked (iss, scope, aud = the token URI, iat,
 *   exp at most an hour on); Google's `{"error": "invalid_grant", ...}` otherwise. It issues
 *   `ya29.` tokens living `tokenLifetimeS` (settable), remembered with their expiry.
 * - `POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`
 *   (or `:streamRawPredict`): Claude's Messages body without `model`, with
 *   `anthropic_version: vertex-2023-10-16`; Anthropic's answer, or its SSE stream.
 * - `.../publishers/google/models/{model}:generateContent` (or `:streamGenerateContent?alt=sse`):
 *   the Gemini body; Gemini's answer, or its SSE stream (CRLF line ends).
 * - `POST /v1/projects/{project}/locations/{region}/endpoints/openapi/chat/completions`: open
 *   models (`model: "meta/llama-3.3-70b-instruct-maas"`), OpenAI's Chat body, answers and streams.
 * - Counting: `.../publishers/anthropic/models/count-tokens:rawPredict` (Anthropic's count_tokens
 *   body with `model` and `anthropic_version`; `{"input_tokens"}`) and
 *   `.../publishers/google/models/{model}:countTokens` (`contents`, `systemInstruction`, `tools`,
 *   `generationConfig`; `{"totalTokens", "totalBillableCharacters", "promptTokensDetails"}`).
 * Each model call must carry a live token (`Authorization: Bearer`) for the fake's project and
 * region; errors are Google's envelope `{"error": {"code", "message", "status"}}`.
 */

export interface FakeVertexReply extends FakeReplyControls {
  text?: string;
  usage?: { input?: number; output?: number };
  chunkSize?: number;
  /** What a count answers (default: a quarter of the prompt's JSON length, rounded up). */
  countTokens?: number;
}

export interface ServiceAccountFixture {
  /** The key file's JSON, as a credential variable holds it. */
  json: string;
  clientEmail: string;
  publicKey: KeyObject;
}

export type FakeVertex = FakeVendor<FakeVertexReply> & {
  project: string;
  region: string;
  tokenUri: string;
  /** Token requests received (their claims when the assertion could be read). */
  tokenRequests: Array<{ form: Record<string, string>; claims: Record<string, unknown> | null; status: number }>;
  /** Lifetime of the tokens issued next (`expires_in`, seconds; default 3600). */
  tokenLifetime: { seconds: number };
  /** The service account whose assertions the token endpoint takes. */
  account: ServiceAccountFixture;
  /** Tokens issued, by value: whether the fake still takes them is their expiry. */
  tokens: Map<string, number>;
};

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const MODEL_PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^/:]+):(rawPredict|streamRawPredict|generateContent|streamGenerateContent|countTokens)$/;
/** The OpenAI-compatible endpoint of open models (its groups line up with MODEL_PATH's: project, region, `openapi`, …). */
const OPENAPI_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/endpoints\/(openapi)\/(chat)\/(completions)$/;
const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** A service account key for tests: a fresh RSA key pair, its private half in the key file's JSON. */
export function testServiceAccount(tokenUri: string, options: { projectId?: string | null } = {}): ServiceAccountFixture {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'tollgate-test@tollgate-test.iam.gserviceaccount.com';
  const json = JSON.stringify({
    type: 'service_account',
    ...(options.projectId !== null ? { project_id: options.projectId ?? 'tollgate-test' } : {}),
    private_key_id: 'fake-key-id',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: '100000000000000000000',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
  });
  return { json, clientEmail, publicKey };
}

/**
 * Starts the fake; `account` is called with the token URI (known once its server listens) and
 * answers the service account whose assertions it accepts.
 */
export async function startFakeVertex(
  account: (tokenUri: string) => ServiceAccountFixture,
  options: { project?: string; region?: string } = {},
): Promise<FakeVertex> {
  const project = options.project ?? 'tollgate-test';
  const region = options.region ?? 'us-east5';
  const tokens = new Map<string, number>();
  const tokenRequests: FakeVertex['tokenRequests'] = [];
  let issued = 0;
  const tokenLifetime = { seconds: 3600 };
  // Known once the token server listens (the key names its URI); requests come later.
  let fixture: ServiceAccountFixture | undefined;

  const tokenServer: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      let claims: Record<string, unknown> | null = null;
      const refuse = (status: number, error: string, description: string) => {
        tokenRequests.push({ form, claims, status });
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ error, error_description: description }));
      };
      if (!fixture) return refuse(503, 'unavailable', 'Not ready');
      if (req.method !== 'POST' || req.url !== '/token') return refuse(404, 'not_found', 'Not Found');
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
        return refuse(400, 'invalid_request', 'Bad Request');
      if (form.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
        return refuse(400, 'unsupported_grant_type', 'Invalid grant_type: ');
      const parts = (form.assertion ?? '').split('.');
      if (parts.length !== 3)
        return refuse(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.');
      const [header, payload, signature] = parts as [string, string, string];
      try {
        claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
        if ((JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown }).alg !== 'RS256') throw new Error('alg');
      } catch {
        return refuse(400, 'invalid_grant', 'Invalid JWT.');
      }
      const verified = createVerify('RSA-SHA256')
        .update(`${header}.${payload}`)
        .verify(fixture.publicKey, Buffer.from(signature, 'base64url'));
      if (!verified) return refuse(400, 'invalid_grant', 'Invalid JWT Signature.');
      const now = Math.floor(Date.now() / 1000);
      const { iss, scope, aud, iat, exp } = claims;
      if (iss !== fixture.clientEmail) return refuse(401, 'invalid_client', 'The OAuth client was not found.');
      if (aud !== tokenUri) return refuse(400, 'invalid_grant', 'Invalid JWT: Failed audience check.');
      if (typeof scope !== 'string' || !scope.split(' ').includes(SCOPE)) return refuse(400, 'invalid_scope', 'Invalid OAuth scope.');
      if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + 60 || exp <= now || exp - iat > 3600)
        return refuse(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
      const token = `ya29.fake-token-${++issued}`;
      tokens.set(token, Date.now() + tokenLifetime.seconds * 1000);
      tokenRequests.push({ form, claims, status: 200 });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ access_token: token, expires_in: tokenLifetime.seconds, token_type: 'Bearer' }));
    });
  });
  await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
  const tokenUri = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;
  const key = account(tokenUri);
  fixture = key;

  const fake = await startFakeVendor<FakeVertexReply>({ apiKey: null, basePath: '', defaultReply: {} }, async (exchange) => {
    const { request, reply, json } = exchange;
    const error = (code: number, message: string) => json(code, { error: { code, message, status: STATUS_NAMES[code] ?? 'UNKNOWN' } });
    const match = MODEL_PATH.exec(request.path) ?? OPENAPI_PATH.exec(request.path);
    if (!match || request.method !== 'POST') return error(404, `The requested URL ${request.path} was not found on this server.`);
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (!bearer)
      return error(
        401,
        'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    if (!((tokens.get(bearer) ?? 0) > Date.now()))
      return error(
        401,
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    const [, sentProject, sentRegion, publisher, model, method] = match as unknown as [string, string, string, string, string, string];
    if (sentProject !== project)
      return error(
        403,
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${sentProject}'.`,
      );
    if (sentRegion !== region)
      return error(
        404,
        `Publisher Model \`projects/${sentProject}/locations/${sentRegion}/publishers/${publisher}/models/${model}\` not found.`,
      );
    const claude = publisher === 'anthropic';
    if (claude !== (method === 'rawPredict' || method === 'streamRawPredict'))
      return error(400, `Method ${method} is not supported by publisher ${publisher}.`);
    if (reply.status && reply.status >= 400)
      return error(
        reply.status,
        reply.errorMessage ?? (reply.status === 429 ? 'Resource exhausted. Please try again later.' : 'Internal error encountered.'),
      );
    const body = request.body ?? {};
    if (claude && model === 'count-tokens') return claudeCount(exchange, body);
    if (method === 'countTokens') return geminiCount(exchange, body);
    if (publisher === 'openapi') return openModelAnswer(exchange, body);
    return claude ? claudeAnswer(exchange, body, model, method === 'streamRawPredict') : geminiAnswer(exchange, body, model, method);
  });
  const close = fake.close.bind(fake);
  return Object.assign(fake, {
    project,
    region,
    tokenUri,
    tokenRequests,
    tokens,
    account: key,
    tokenLifetime,
    async close() {
      tokenServer.closeAllConnections();
      await Promise.all([close(), new Promise<void>((resolve) => tokenServer.close(() => resolve()))]);
    },
  });
}

type Exchange = FakeExchange<FakeVertexReply>;

/** Claude on Vertex: Anthropic's errors, answer and SSE events. */
async function claudeAnswer(exchange: Exchange, body: Record<string, any>, model: string, streamed: boolean): Promise<void> {
  const { reply, json, sse } = exchange;
  const error = (message: string) => json(400, { type: 'error', error: { type: 'invalid_request_error', message } });
  if (body.anthropic_version !== 'vertex-2023-10-16') return error("anthropic_version: Input should be 'vertex-2023-10-16'");
  if ('model' in body) return error('model: Extra inputs are not permitted');
  if ((body.stream === true) !== streamed) return error(`stream: must be ${streamed} for ${streamed ? 'streamRawPredict' : 'rawPredict'}`);
  if (typeof body.max_tokens !== 'number') return error('max_tokens: Field required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) return error('messages: Field required');
  const text = reply.text ?? 'Hello from Claude on Vertex.';
  const usage = {
    input_tokens: reply.usage?.input ?? 20,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: reply.usage?.output ?? 10,
  };
  const message = {
    id: 'msg_vrtx_fake',
    type: 'message',
    role: 'assistant',
    model: model.replace(/@.*$/, ''),
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage,
  };
  const size = reply.chunkSize ?? 5;
  if (!streamed) return sendCompletionPaced(exchange, Math.ceil(text.length / size), message);
  const events: SseOut[] = [];
  const push = (event: string, data: Record<string, unknown>) => events.push({ event, data: JSON.stringify({ type: event, ...data }) });
  push('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  push('ping', {});
  push('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  for (const piece of pieces(text, size)) push('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  push('content_block_stop', { index: 0 });
  push('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  push('message_stop', {});
  await sse(events);
}

/** The fields Claude's count-tokens takes (Anthropic's count_tokens body, and Vertex's version); others are refused. */
const CLAUDE_COUNT_FIELDS = ['anthropic_version', 'model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config'];
const GEMINI_COUNT_FIELDS = ['contents', 'systemInstruction', 'tools', 'generationConfig', 'instances', 'model'];

const promptTokens = (reply: FakeVertexReply, ...parts: unknown[]) => reply.countTokens ?? Math.ceil(JSON.stringify(parts).length / 4);

/** Claude's count on Vertex: Anthropic's count_tokens, the model named in the body. */
function claudeCount(exchange: Exchange, body: Record<string, any>): void {
  const { reply, json } = exchange;
  const error = (message: string) => json(400, { type: 'error', error: { type: 'invalid_request_error', message } });
  const extra = Object.keys(body).find((key) => !CLAUDE_COUNT_FIELDS.includes(key));
  if (extra) return error(`${extra}: Extra inputs are not permitted`);
  if (body.anthropic_version !== 'vertex-2023-10-16') return error("anthropic_version: Input should be 'vertex-2023-10-16'");
  if (typeof body.model !== 'string' || !body.model.startsWith('claude-')) return error('model: Field required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) return error('messages: Field required');
  return json(200, { input_tokens: promptTokens(reply, body.system, body.messages, body.tools) });
}

/** Gemini's count on Vertex: the prompt's tokens and billable characters. */
function geminiCount(exchange: Exchange, body: Record<string, any>): void {
  const { reply, json } = exchange;
  const error = (message: string) => json(400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
  const extra = Object.keys(body).find((key) => !GEMINI_COUNT_FIELDS.includes(key));
  if (extra) return error(`Invalid JSON payload received. Unknown name "${extra}": Cannot find field.`);
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return error('Unable to submit request because it has an empty contents field.');
  const totalTokens = promptTokens(reply, body.systemInstruction, body.contents, body.tools);
  const characters = JSON.stringify(body.contents).length;
  return json(200, {
    totalTokens,
    totalBillableCharacters: characters,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }],
  });
}

/** An open model through Vertex's OpenAI-compatible endpoint: the model must be a `publisher/model` id. */
async function openModelAnswer(exchange: Exchange, body: Record<string, any>): Promise<void> {
  if (typeof body.model !== 'string' || !/^[a-z0-9-]+\/[\w.-]+$/.test(body.model))
    return exchange.json(400, {
      error: {
        code: 400,
        message: `Invalid model: expected "publisher/model", got ${JSON.stringify(body.model)}.`,
        status: 'INVALID_ARGUMENT',
      },
    });
  await chatCompletions(exchange as unknown as FakeExchange<FakeOpenAIReply>, undefined);
}

/** Gemini on Vertex: the Gemini API's answer and stream, with Vertex's usage fields. */
async function geminiAnswer(exchange: Exchange, body: Record<string, any>, model: string, method: string): Promise<void> {
  const { request, reply, json, sse } = exchange;
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return json(400, {
      error: { code: 400, message: 'Unable to submit request because it has an empty contents field.', status: 'INVALID_ARGUMENT' },
    });
  const text = reply.text ?? 'Hello from Gemini on Vertex.';
  const prompt = reply.usage?.input ?? 15;
  const output = reply.usage?.output ?? 8;
  const usageMetadata = {
    promptTokenCount: prompt,
    candidatesTokenCount: output,
    totalTokenCount: prompt + output,
    trafficType: 'ON_DEMAND',
  };
  const meta = { modelVersion: model, createTime: new Date().toISOString(), responseId: 'vrtx-fake-response' };
  const candidate = (parts: unknown[], finish?: string) => ({
    content: { role: 'model', parts },
    ...(finish ? { finishReason: finish } : {}),
  });
  const chunks = pieces(text, reply.chunkSize ?? 6).map((piece) => ({
    candidates: [candidate([{ text: piece }])],
    usageMetadata: { trafficType: 'ON_DEMAND' },
    ...meta,
  }));
  chunks.push({ candidates: [candidate([{ text: '' }], 'STOP')], usageMetadata, ...meta });
  if (method === 'generateContent')
    return sendCompletionPaced(exchange, chunks.length, { candidates: [candidate([{ text }], 'STOP')], usageMetadata, ...meta });
  if (request.query.alt !== 'sse') return json(200, chunks);
  await sse(
    chunks.map((chunk) => ({ data: JSON.stringify(chunk) })),
    { lineEnd: '\r\n' },
  );
}

export type { RecordedRequest };
