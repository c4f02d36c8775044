import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI (and OpenAI-compatible) vendor over real HTTP: Chat Completions and Responses,
 * JSON and SSE, as the real API sends them. The first half of this file is the plumbing all
 * fakes share (request recording, scripting queue, SSE writing with delays, cuts and abort
 * detection); the Anthropic and Gemini fakes import it from here.
 */

// =============================================================================================
// Shared fake-vendor plumbing
// =============================================================================================

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (or the raw text when it is not JSON). */

  body: any;
  /** The body as sent (a signed request is checked against its exact bytes). */
  rawBody: string;
  /** True when the client went away before the answer was complete. */
  aborted: boolean;
  /** True when the fake cut the connection itself (`cutAfterChunks`). */
  cutByServer: boolean;
  /** Resolves when the exchange is over (answer sent, client gone or connection cut). */
  finished: Promise<void>;
}

/** Fault and pacing controls every fake reply accepts. */
export interface FakeReplyControls {
  /** Answer with this HTTP status and the vendor's error body instead. */
  status?: number;
  /** Message inside that error body. */
  errorMessage?: string;
  /** Wait before sending the response headers (timeouts). */
  headersDelayMs?: number;
  /** Wait before each SSE event after the first. */
  chunkDelayMs?: number;
  /** Destroy the socket after this many SSE events (a stream cut mid-way). */
  cutAfterChunks?: number;
  /** The `retry-after` header of an error answer (vendors send it with 429 and overloaded answers). */
  retryAfter?: string;
}

export interface SseOut {
  event?: string;
  data: string;
}

export interface FakeVendor<Reply> {
  /** Base URL by the vendor SDK's convention (OpenAI: with `/v1`; Anthropic, Gemini: origin only). */
  url: string;
  origin: string;
  /** The API key the fake accepts (null: it accepts any or none). */
  apiKey: string | null;
  requests: RecordedRequest[];
  readonly lastRequest: RecordedRequest | undefined;
  /** Replies for the next requests, in order; the last one keeps answering until replaced. */
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

export type Send = (status: number, body: unknown) => void;

export interface FakeExchange<Reply> {
  request: RecordedRequest;
  response: ServerResponse;
  reply: Reply;
  json: Send;
  /** Streams SSE events honouring the reply's delays and cut. */
  sse(events: SseOut[], options?: { lineEnd?: '\n' | '\r\n' }): Promise<void>;
}

/** Starts a fake on 127.0.0.1:0; `handle` answers one recorded request. */
export async function startFakeVendor<Reply extends FakeReplyControls>(
  options: { apiKey: string | null; basePath: string; defaultReply: Reply },
  handle: (exchange: FakeExchange<Reply>) => Promise<void> | void,
): Promise<FakeVendor<Reply>> {
  const requests: RecordedRequest[] = [];
  let queue: Reply[] = [options.defaultReply];
  const sockets = new Set<import('node:net').Socket>();

  const server: Server = createServer((req, res) => {
    void (async () => {
      const record = await recordRequest(req, res);
      requests.push(record);
      const reply = queue.length > 1 ? queue.shift()! : queue[0]!;
      const json: Send = (status, body) => {
        if (res.destroyed) return;
        res.writeHead(status, {
          'content-type': 'application/json',
          ...(status >= 400 && reply.retryAfter !== undefined ? { 'retry-after': reply.retryAfter } : {}),
        });
        res.end(JSON.stringify(body));
      };
      if (reply.headersDelayMs) await delay(reply.headersDelayMs);
      if (res.destroyed) return;
      await handle({
        request: record,
        response: res,
        reply,
        json,
        sse: (events, sseOptions) => writeSse(record, res, reply, events, sseOptions?.lineEnd ?? '\n'),
      });
    })().catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake vendor defect: ${String(error)}` } }));
      } else res.destroy();
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
    origin,
    apiKey: options.apiKey,
    requests,
    get lastRequest() {
      return requests[requests.length - 1];
    },
    script(...replies: Reply[]) {
      queue = replies.length > 0 ? [...replies] : [options.defaultReply];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function recordRequest(req: IncomingMessage, res: ServerResponse): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // keep the raw text
  }
  const url = new URL(req.url ?? '/', 'http://fake');
  let resolveFinished!: () => void;
  const record: RecordedRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    body,
    rawBody: text,
    aborted: false,
    cutByServer: false,
    finished: new Promise<void>((resolve) => (resolveFinished = resolve)),
  };
  res.on('close', () => {
    if (!res.writableFinished && !record.cutByServer) record.aborted = true;
    resolveFinished();
  });
  return record;
}

async function writeSse(
  record: RecordedRequest,
  res: ServerResponse,
  controls: FakeReplyControls,
  events: SseOut[],
  lineEnd: string,
): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  for (let i = 0; i < events.length; i++) {
    if (controls.cutAfterChunks !== undefined && i >= controls.cutAfterChunks) {
      record.cutByServer = true;
      res.socket?.destroy();
      return;
    }
    if (i > 0 && controls.chunkDelayMs) await delay(controls.chunkDelayMs);
    if (res.destroyed) return;
    const event = events[i]!;
    // Wait for each write to reach the socket, so a later cut cannot swallow it.
    await new Promise<void>((resolve) =>
      res.write((event.event ? `event: ${event.event}${lineEnd}` : '') + `data: ${event.data}${lineEnd}${lineEnd}`, () => resolve()),
    );
  }
  res.end();
}

/**
 * A non-streamed answer paced like a generation: headers at once, then the body when the
 * whole answer is "generated" (`chunkDelayMs` per chunk the stream would have had), or cut
 * half-way (`cutAfterChunks`): what the stream-pacing fault controls mean without a stream.
 */
export async function sendCompletionPaced(
  exchange: FakeExchange<FakeReplyControls>,
  chunks: number,
  completion: unknown,
  options: { cut?: boolean } = {},
): Promise<void> {
  const { request, response: res, reply } = exchange;
  const text = JSON.stringify(completion);
  // `cut`: the vendor's answer breaks off (a stream control such as omitEnd, without a stream).
  const cutAfterChunks = options.cut ? (reply.cutAfterChunks ?? chunks) : reply.cutAfterChunks;
  if (!reply.chunkDelayMs && cutAfterChunks === undefined) return exchange.json(200, completion);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.flushHeaders();
  const generated = cutAfterChunks !== undefined ? Math.min(chunks, cutAfterChunks) : chunks;
  if (reply.chunkDelayMs) await delay(reply.chunkDelayMs * Math.max(0, generated - 1));
  if (res.destroyed) return;
  if (cutAfterChunks !== undefined) {
    request.cutByServer = true;
    await new Promise<void>((resolve) => res.write(text.slice(0, text.length >> 1), () => resolve()));
    res.socket?.destroy();
    return;
  }
  res.end(text);
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Splits text into small deltas, as vendors stream it. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// =============================================================================================
// OpenAI
// =============================================================================================

export interface FakeToolCall {
  id?: string;
  name: string;
  /** JSON text (function) or raw input (custom). */
  arguments: string;
  kind?: 'function' | 'custom';
}

export interface FakeOpenAIReply extends FakeReplyControls {
  /** Answer text (default: 'Hello from fake OpenAI.' unless tool calls or a refusal are scripted). */
  text?: string;
  /** Responses: reasoning summary deltas. Chat: `reasoning_content` deltas (the DeepSeek/vLLM extension). */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** A refusal message (Chat `delta.refusal`, Responses `response.refusal.delta`). */
  refusal?: string;
  /** Chat finish_reason; for Responses `length` and `content_filter` make the response incomplete. Default derived. */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  usage?: { input?: number; cached?: number; output?: number; reasoning?: number };
  /** Chat: no usage chunk; Responses: usage null on completion. */
  omitUsage?: boolean;
  /** End the stream without its last events (Chat: finish/usage/[DONE]; Responses: response.completed). */
  omitEnd?: boolean;
  /** Characters per text delta (default 5). */
  chunkSize?: number;
  /**
   * Responses: MCP items (mcp_list_tools, mcp_call, mcp_approval_request) as the vendor
   * finishes them, output before the reasoning and the message, each streamed with the
   * sub-events OpenAI sends for its type.
   */
  mcpItems?: Array<Record<string, unknown>>;
}

export interface FakeOpenAIOptions {
  /** Accepted key (default 'sk-fake-openai'); null accepts requests without (and with any) Authorization. */
  apiKey?: string | null;
  /** Path prefix before `/chat/completions` and `/responses` (default '/v1'). */
  basePath?: string;
  /** `model` in the answers (default: the requested model). */
  model?: string;
}

const DEFAULT_OPENAI_TEXT = 'Hello from fake OpenAI.';

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeVendor<FakeOpenAIReply>> {
  const apiKey = options.apiKey === undefined ? 'sk-fake-openai' : options.apiKey;
  const basePath = options.basePath ?? '/v1';
  return startFakeVendor<FakeOpenAIReply>({ apiKey, basePath, defaultReply: {} }, async (exchange) => {
    const { request, json, reply } = exchange;
    const error = (status: number, message: string, type = 'invalid_request_error', code: string | null = null) =>
      json(status, { error: { message, type, param: null, code } });
    if (apiKey !== null && request.headers.authorization !== `Bearer ${apiKey}`) {
      const sent = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      return error(
        401,
        `Incorrect API key provided: ${sent}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    if (request.method !== 'POST') return error(405, 'Method not allowed.');
    if (reply.status && reply.status >= 400)
      return error(
        reply.status,
        reply.errorMessage ?? 'The fake vendor failed.',
        reply.status === 429 ? 'rate_limit_exceeded' : 'server_error',
      );
    if (request.path === `${basePath}/chat/completions`) return chatCompletions(exchange, options.model);
    if (request.path === `${basePath}/responses`) return responses(exchange, options.model);
    return error(404, `Invalid URL (POST ${request.path})`);
  });
}

interface OpenAIAnswer {
  text: string;
  reasoning: string;
  toolCalls: Required<FakeToolCall>[];
  refusal: string;
  usage: { input: number; cached: number; output: number; reasoning: number };
}

function openAIAnswer(reply: FakeOpenAIReply): OpenAIAnswer {
  const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_fake_${i}`,
    name: call.name,
    arguments: call.arguments,
    kind: call.kind ?? 'function',
  }));
  const text = reply.text ?? (toolCalls.length > 0 || reply.refusal ? '' : DEFAULT_OPENAI_TEXT);
  const reasoning = reply.reasoning ?? '';
  return {
    text,
    reasoning,
    toolCalls,
    refusal: reply.refusal ?? '',
    usage: {
      input: reply.usage?.input ?? 12,
      cached: reply.usage?.cached ?? 0,
      output: reply.usage?.output ?? Math.max(1, Math.ceil(text.length / 4)) + (reply.usage?.reasoning ?? 0),
      reasoning: reply.usage?.reasoning ?? 0,
    },
  };
}

function chatFinish(reply: FakeOpenAIReply, answer: OpenAIAnswer): string {
  if (reply.finishReason) return reply.finishReason;
  if (answer.refusal) return 'stop'; // OpenAI ends refusals with `stop` and the `refusal` field
  return answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

export async function chatCompletions(exchange: FakeExchange<FakeOpenAIReply>, fixedModel: string | undefined): Promise<void> {
  const { request, reply, json, sse } = exchange;
  const body = request.body ?? {};
  if (typeof body.model !== 'string' || !Array.isArray(body.messages))
    return json(400, { error: { message: "Missing required parameter: 'messages'.", type: 'invalid_request_error' } });
  const answer = openAIAnswer(reply);
  const model = fixedModel ?? body.model;
  const created = Math.floor(Date.now() / 1000);
  const usage = {
    prompt_tokens: answer.usage.input,
    completion_tokens: answer.usage.output,
    total_tokens: answer.usage.input + answer.usage.output,
    prompt_tokens_details: { cached_tokens: answer.usage.cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: answer.usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
  const finishReason = chatFinish(reply, answer);
  if (body.stream !== true) {
    return sendCompletionPaced(exchange, Math.ceil(answer.text.length / (reply.chunkSize ?? 5)), {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: answer.text || null,
            refusal: answer.refusal || null,
            ...(answer.toolCalls.length > 0
              ? {
                  tool_calls: answer.toolCalls.map((c) =>
                    c.kind === 'custom'
                      ? { id: c.id, type: 'custom', custom: { name: c.name, input: c.arguments } }
                      : { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } },
                  ),
                }
              : {}),
          },
          finish_reason: finishReason,
          logprobs: null,
        },
      ],
      usage: reply.omitUsage ? undefined : usage,
    });
  }
  const size = reply.chunkSize ?? 5;
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const events: SseOut[] = [{ data: chunk({ role: 'assistant', content: '', refusal: null }) }];
  for (const piece of pieces(answer.reasoning, size)) events.push({ data: chunk({ reasoning_content: piece }) });
  for (const piece of pieces(answer.text, size)) events.push({ data: chunk({ content: piece }) });
  for (const piece of pieces(answer.refusal, size)) events.push({ data: chunk({ refusal: piece }) });
  answer.toolCalls.forEach((call, index) => {
    events.push({
      data: chunk({
        tool_calls: [
          call.kind === 'custom'
            ? { index, id: call.id, type: 'custom', custom: { name: call.name, input: '' } }
            : { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    });
    for (const piece of pieces(call.arguments, size)) {
      events.push({
        data: chunk({
          tool_calls: [call.kind === 'custom' ? { index, custom: { input: piece } } : { index, function: { arguments: piece } }],
        }),
      });
    }
  });
  if (!reply.omitEnd) {
    events.push({ data: chunk({}, finishReason) });
    if (includeUsage && !reply.omitUsage)
      events.push({ data: JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created, model, choices: [], usage }) });
    events.push({ data: '[DONE]' });
  }
  await sse(events);
}

async function responses(exchange: FakeExchange<FakeOpenAIReply>, fixedModel: string | undefined): Promise<void> {
  const { request, reply, json, sse } = exchange;
  const body = request.body ?? {};
  if (typeof body.model !== 'string' || body.input === undefined)
    return json(400, { error: { message: "Missing required parameter: 'input'.", type: 'invalid_request_error' } });
  if (body.previous_response_id) return json(400, { error: { message: 'Previous response not found.', type: 'invalid_request_error' } });
  const answer = openAIAnswer(reply);
  const model = fixedModel ?? body.model;
  const size = reply.chunkSize ?? 5;
  const incomplete =
    reply.finishReason === 'length' ? 'max_output_tokens' : reply.finishReason === 'content_filter' ? 'content_filter' : null;
  const usage = reply.omitUsage
    ? null
    : {
        input_tokens: answer.usage.input,
        input_tokens_details: { cached_tokens: answer.usage.cached },
        output_tokens: answer.usage.output,
        output_tokens_details: { reasoning_tokens: answer.usage.reasoning },
        total_tokens: answer.usage.input + answer.usage.output,
      };
  const output: Record<string, unknown>[] = [];
  const events: Array<Record<string, unknown>> = [];
  const base = { id: 'resp_fake', object: 'response', created_at: Math.floor(Date.now() / 1000), model, store: false, output };
  events.push({ type: 'response.created', response: { ...base, status: 'in_progress', output: [], usage: null } });
  let outputIndex = 0;
  for (const item of reply.mcpItems ?? []) {
    const at = { item_id: item.id, output_index: outputIndex };
    if (item.type === 'mcp_list_tools') {
      events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, tools: [] } });
      events.push({ type: 'response.mcp_list_tools.in_progress', ...at });
      events.push({ type: 'response.mcp_list_tools.completed', ...at });
    } else if (item.type === 'mcp_call') {
      events.push({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, arguments: '', output: null, error: null, status: 'in_progress' },
      });
      events.push({ type: 'response.mcp_call.in_progress', ...at });
      events.push({ type: 'response.mcp_call_arguments.delta', ...at, delta: item.arguments });
      events.push({ type: 'response.mcp_call_arguments.done', ...at, arguments: item.arguments });
      events.push({ type: item.error ? 'response.mcp_call.failed' : 'response.mcp_call.completed', ...at });
    } else {
      events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    }
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
    output.push(item);
    outputIndex++;
  }
  if (answer.reasoning || answer.usage.reasoning > 0) {
    const item = { id: 'rs_fake', type: 'reasoning', summary: [] as unknown[] };
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    if (answer.reasoning) {
      events.push({
        type: 'response.reasoning_summary_part.added',
        item_id: item.id,
        output_index: outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
      for (const delta of pieces(answer.reasoning, size))
        events.push({
          type: 'response.reasoning_summary_text.delta',
          item_id: item.id,
          output_index: outputIndex,
          summary_index: 0,
          delta,
        });
      events.push({
        type: 'response.reasoning_summary_text.done',
        item_id: item.id,
        output_index: outputIndex,
        summary_index: 0,
        text: answer.reasoning,
      });
    }
    const done = { ...item, summary: answer.reasoning ? [{ type: 'summary_text', text: answer.reasoning }] : [] };
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
    output.push(done);
    outputIndex++;
  }
  if (answer.text || answer.refusal) {
    const item = { id: 'msg_fake', type: 'message', role: 'assistant', status: 'in_progress', content: [] as unknown[] };
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    const partType = answer.refusal ? 'refusal' : 'output_text';
    events.push({
      type: 'response.content_part.added',
      item_id: item.id,
      output_index: outputIndex,
      content_index: 0,
      part: partType === 'refusal' ? { type: 'refusal', refusal: '' } : { type: 'output_text', text: '', annotations: [] },
    });
    const content = answer.refusal || answer.text;
    for (const delta of pieces(content, size)) {
      events.push({
        type: answer.refusal ? 'response.refusal.delta' : 'response.output_text.delta',
        item_id: item.id,
        output_index: outputIndex,
        content_index: 0,
        delta,
      });
    }
    const part = answer.refusal ? { type: 'refusal', refusal: content } : { type: 'output_text', text: content, annotations: [] };
    events.push({
      type: answer.refusal ? 'response.refusal.done' : 'response.output_text.done',
      item_id: item.id,
      output_index: outputIndex,
      content_index: 0,
      ...(answer.refusal ? { refusal: content } : { text: content }),
    });
    events.push({ type: 'response.content_part.done', item_id: item.id, output_index: outputIndex, content_index: 0, part });
    const done = { ...item, status: 'completed', content: [part] };
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
    output.push(done);
    outputIndex++;
  }
  for (const call of answer.toolCalls) {
    const custom = call.kind === 'custom';
    const item = custom
      ? { id: `ctc_${call.id}`, type: 'custom_tool_call', call_id: call.id, name: call.name, input: '' }
      : { id: `fc_${call.id}`, type: 'function_call', call_id: call.id, name: call.name, arguments: '', status: 'in_progress' };
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    for (const delta of pieces(call.arguments, size)) {
      events.push({
        type: custom ? 'response.custom_tool_call_input.delta' : 'response.function_call_arguments.delta',
        item_id: item.id,
        output_index: outputIndex,
        delta,
      });
    }
    events.push(
      custom
        ? { type: 'response.custom_tool_call_input.done', item_id: item.id, output_index: outputIndex, input: call.arguments }
        : { type: 'response.function_call_arguments.done', item_id: item.id, output_index: outputIndex, arguments: call.arguments },
    );
    const done = custom ? { ...item, input: call.arguments } : { ...item, arguments: call.arguments, status: 'completed' };
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
    output.push(done);
    outputIndex++;
  }
  const final = {
    ...base,
    status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: incomplete } : null,
    usage,
  };
  if (body.stream !== true) {
    const chunks = events.filter((event) => String(event.type).endsWith('.delta')).length;
    return sendCompletionPaced(exchange, Math.max(1, chunks), final);
  }
  if (!reply.omitEnd) events.push({ type: incomplete ? 'response.incomplete' : 'response.completed', response: final });
  await sse(events.map((event, i) => ({ event: event.type as string, data: JSON.stringify({ ...event, sequence_number: i }) })));
}
