import { FakePromptCache } from './anthropic-cache';
import { pieces, sendCompletionPaced, startFakeVendor, type FakeReplyControls, type FakeVendor, type Send, type SseOut } from './openai';

/**
 * A fake Anthropic Messages API over real HTTP (`POST /v1/messages`, JSON and SSE). It checks
 * what the real API checks first — `x-api-key`, `anthropic-version`, `max_tokens`, the
 * thinking budget below `max_tokens`, no temperature with thinking — and answers scripted
 * content in Anthropic's real event sequence. A request that marks cache breakpoints is billed
 * by its prompt cache (anthropic-cache.ts) unless its reply scripts the usage: a second request
 * with the same prefix reads it back.
 */

export interface FakeAnthropicReply extends FakeReplyControls {
  /** Answer text (default 'Hello from fake Claude.' unless tool calls or a refusal are scripted). */
  text?: string;
  /** A thinking block streamed before the text (with `signature`, default 'sig-fake'). */
  thinking?: string;
  signature?: string;
  /** A redacted_thinking block with this data. */
  redactedThinking?: string;
  toolCalls?: Array<{ id?: string; name: string; input: Record<string, unknown> }>;
  /** Calls Claude made to `mcp_servers` (beta MCP connector), before the text: a mcp_tool_use block, then its mcp_tool_result. */
  mcpCalls?: Array<{ id: string; name: string; server: string; input: Record<string, unknown>; result: string; isError?: boolean }>;
  stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn';
  stopSequence?: string;
  /**
   * `input` excludes cache reads and writes (Anthropic's convention); `cacheCreation1h` is the part
   * of `cacheCreation` written for an hour (absent: no `cache_creation` breakdown). Absent: the
   * prompt cache's bill when the request marks breakpoints, else 20 input tokens and no cache.
   */
  usage?: { input?: number; output?: number; cacheRead?: number; cacheCreation?: number; cacheCreation1h?: number };
  /** End the stream without message_delta/message_stop. */
  omitEnd?: boolean;
  /** Send an `event: error` (e.g. overloaded_error) after the content. */
  midStreamError?: string;
  /** Characters per delta (default 5). */
  chunkSize?: number;
  /** Anthropic's report of the context edits it applied (`context_management.applied_edits`): in the message, or in `message_delta` when streamed. */
  appliedEdits?: Array<Record<string, unknown>>;
  /** What count_tokens answers (default: a quarter of the prompt's JSON length, rounded up). */
  countTokens?: number;
}

/** The fields `POST /v1/messages/count_tokens` takes; others are refused as the real API refuses extra inputs. */
const COUNT_TOKENS_FIELDS = [
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'mcp_servers',
  'context_management',
  'cache_control',
  'output_format',
  'speed',
];

/** Anthropic's count_tokens: `{input_tokens}` for the prompt, nothing generated. */
function countTokens(
  body: Record<string, any>,
  reply: FakeAnthropicReply,
  json: Send,
  error: (status: number, type: string, message: string) => void,
): void {
  const extra = Object.keys(body).find((key) => !COUNT_TOKENS_FIELDS.includes(key));
  if (extra) return error(400, 'invalid_request_error', `${extra}: Extra inputs are not permitted`);
  if (typeof body.model !== 'string' || !Array.isArray(body.messages))
    return error(400, 'invalid_request_error', 'model and messages: Field required');
  const prompt = JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools });
  return json(200, { input_tokens: reply.countTokens ?? Math.ceil(prompt.length / 4) });
}

export interface FakeAnthropicOptions {
  apiKey?: string;
}

export type FakeAnthropic = FakeVendor<FakeAnthropicReply> & { promptCache: FakePromptCache };

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const apiKey = options.apiKey ?? 'sk-ant-fake';
  const promptCache = new FakePromptCache();
  const fake = await startFakeVendor<FakeAnthropicReply>({ apiKey, basePath: '', defaultReply: {} }, async (exchange) => {
    const { request, reply, json, sse } = exchange;
    const error = (status: number, type: string, message: string) =>
      json(status, { type: 'error', error: { type, message }, request_id: 'req_fake' });
    const counting = request.path === '/v1/messages/count_tokens';
    if ((request.path !== '/v1/messages' && !counting) || request.method !== 'POST') return error(404, 'not_found_error', 'Not Found');
    if (request.headers['x-api-key'] !== apiKey) return error(401, 'authentication_error', 'invalid x-api-key');
    if (!request.headers['anthropic-version']) return error(400, 'invalid_request_error', 'anthropic-version: header is required');
    if (counting) return countTokens(request.body ?? {}, reply, json, error);
    if (reply.status && reply.status >= 400) {
      const type =
        reply.status === 529
          ? 'overloaded_error'
          : reply.status === 429
            ? 'rate_limit_error'
            : reply.status >= 500
              ? 'api_error'
              : 'invalid_request_error';
      return error(reply.status, type, reply.errorMessage ?? 'The fake vendor failed.');
    }
    const body = request.body ?? {};
    if (typeof body.max_tokens !== 'number') return error(400, 'invalid_request_error', 'max_tokens: Field required');
    if (!Array.isArray(body.messages) || body.messages.length === 0) return error(400, 'invalid_request_error', 'messages: Field required');
    if (body.thinking?.type === 'enabled') {
      if (!(body.thinking.budget_tokens >= 1024))
        return error(400, 'invalid_request_error', 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (!(body.thinking.budget_tokens < body.max_tokens))
        return error(400, 'invalid_request_error', '`max_tokens` must be greater than `thinking.budget_tokens`.');
      if (body.temperature !== undefined && body.temperature !== 1)
        return error(400, 'invalid_request_error', '`temperature` may only be set to 1 when thinking is enabled.');
      if (body.tool_choice && body.tool_choice.type !== 'auto' && body.tool_choice.type !== 'none')
        return error(400, 'invalid_request_error', 'Thinking may not be enabled when tool_choice forces tool use.');
    }
    if (body.temperature !== undefined && body.top_p !== undefined)
      return error(400, 'invalid_request_error', '`temperature` and `top_p` cannot both be specified for this model.');

    const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({ id: call.id ?? `toolu_fake_${i}`, name: call.name, input: call.input }));
    const text = reply.text ?? (toolCalls.length > 0 || reply.stopReason === 'refusal' ? '' : 'Hello from fake Claude.');
    const stopReason = reply.stopReason ?? (toolCalls.length > 0 ? 'tool_use' : 'end_turn');
    const cached = promptCache.bill(body);
    const scripted =
      reply.usage ??
      (cached
        ? {
            input: cached.input,
            cacheRead: cached.cacheRead,
            cacheCreation: cached.cacheWrite5m + cached.cacheWrite1h,
            cacheCreation1h: cached.cacheWrite1h,
          }
        : undefined);
    const usage = {
      input_tokens: scripted?.input ?? 20,
      cache_creation_input_tokens: scripted?.cacheCreation ?? 0,
      cache_read_input_tokens: scripted?.cacheRead ?? 0,
      // The breakdown by lifetime, as the API sends it now; left out (as older answers did) without cacheCreation1h.
      ...(scripted?.cacheCreation1h !== undefined
        ? {
            cache_creation: {
              ephemeral_5m_input_tokens: (scripted.cacheCreation ?? 0) - scripted.cacheCreation1h,
              ephemeral_1h_input_tokens: scripted.cacheCreation1h,
            },
          }
        : {}),
      output_tokens: reply.usage?.output ?? Math.max(1, Math.ceil((text.length + (reply.thinking?.length ?? 0)) / 4)),
    };
    const content: Array<Record<string, unknown>> = [];
    if (reply.thinking !== undefined)
      content.push({ type: 'thinking', thinking: reply.thinking, signature: reply.signature ?? 'sig-fake' });
    if (reply.redactedThinking !== undefined) content.push({ type: 'redacted_thinking', data: reply.redactedThinking });
    for (const call of reply.mcpCalls ?? []) {
      content.push({ type: 'mcp_tool_use', id: call.id, name: call.name, server_name: call.server, input: call.input });
      content.push({
        type: 'mcp_tool_result',
        tool_use_id: call.id,
        is_error: call.isError ?? false,
        content: [{ type: 'text', text: call.result }],
      });
    }
    if (text) content.push({ type: 'text', text });
    for (const call of toolCalls) content.push({ type: 'tool_use', ...call });
    const contextManagement = reply.appliedEdits ? { context_management: { applied_edits: reply.appliedEdits } } : {};
    const message = {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: reply.stopSequence ?? null,
      usage,
      ...contextManagement,
    };
    if (body.stream !== true) {
      // Without a stream an overload is the error answer; a stream that would have ended early is a body cut short.
      if (reply.midStreamError) return error(529, 'overloaded_error', reply.midStreamError);
      return sendCompletionPaced(exchange, Math.ceil(text.length / (reply.chunkSize ?? 5)), message, { cut: reply.omitEnd });
    }

    const size = reply.chunkSize ?? 5;
    const events: SseOut[] = [];
    const push = (event: string, data: Record<string, unknown>) => events.push({ event, data: JSON.stringify({ type: event, ...data }) });
    push('message_start', {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
        context_management: null,
      },
    });
    content.forEach((block, index) => {
      switch (block.type) {
        case 'thinking':
          push('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
          for (const thinking of pieces(block.thinking as string, size))
            push('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
          push('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
          break;
        case 'redacted_thinking':
          push('content_block_start', { index, content_block: block });
          break;
        case 'text':
          push('content_block_start', { index, content_block: { type: 'text', text: '' } });
          if (index === 0) events.push({ event: 'ping', data: JSON.stringify({ type: 'ping' }) });
          for (const piece of pieces(block.text as string, size))
            push('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
          break;
        case 'mcp_tool_result':
          push('content_block_start', { index, content_block: block });
          break;
        case 'mcp_tool_use':
        case 'tool_use': {
          push('content_block_start', { index, content_block: { ...block, input: {} } });
          const input = JSON.stringify(block.input);
          // Anthropic sends an empty first partial_json, then the JSON in pieces.
          push('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
          if (input !== '{}')
            for (const piece of pieces(input, size))
              push('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
          break;
        }
      }
      push('content_block_stop', { index });
    });
    if (reply.midStreamError)
      events.push({
        event: 'error',
        data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: reply.midStreamError } }),
      });
    if (!reply.omitEnd && !reply.midStreamError) {
      push('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: reply.stopSequence ?? null },
        usage: { output_tokens: usage.output_tokens },
        ...contextManagement,
      });
      push('message_stop', {});
    }
    await sse(events);
  });
  return Object.assign(fake, { promptCache });
}
