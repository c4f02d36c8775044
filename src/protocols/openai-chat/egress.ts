import type {
  CanonicalEvent,
  CanonicalMessage,
  CanonicalReasoning,
  CanonicalRequest,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
  CanonicalUsage,
  FinishReason,
} from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import { withFields } from '../../domain/shared/objects';

/**
 * Egress codec for OpenAI Chat Completions: canonical request → request body, and streamed
 * chunks → canonical events. Used for OpenAI itself and, with options, for every
 * OpenAI-compatible vendor (vLLM, Ollama, DeepSeek, xAI…).
 *
 * The few wire types it needs are declared here (the request side of the format is ours to
 * write; the ingress codec owns the full client-facing types).
 */

// --- wire types (request) ---------------------------------------------------------------

export type ChatWireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatWireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatWireToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } };

export type ChatWireTool =
  | { type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean } }
  | { type: 'custom'; custom: { name: string; description?: string; format?: Record<string, unknown> } };

export type ChatWireToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'custom'; custom: { name: string } };

export type ChatWireResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string } };

export type OpenAIEffort = 'low' | 'medium' | 'high';

export interface ChatWireRequest {
  model: string;
  messages: ChatWireMessage[];
  stream: boolean;
  stream_options?: { include_usage: true };
  tools?: ChatWireTool[];
  tool_choice?: ChatWireToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ChatWireResponseFormat;
  max_completion_tokens?: number;
  max_tokens?: number;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  reasoning_effort?: OpenAIEffort;
  user?: string;
}

// --- wire types (stream) ----------------------------------------------------------------

export interface ChatWireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

interface ChatWireDeltaToolCall {
  index?: number;
  id?: string;
  type?: 'function' | 'custom';
  function?: { name?: string; arguments?: string };
  custom?: { name?: string; input?: string };
}

interface ChatWireChunk {
  choices?: Array<{
    index?: number;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      /** Not OpenAI: DeepSeek and vLLM (`reasoning_content`), Ollama/OpenRouter (`reasoning`). */
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ChatWireDeltaToolCall[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatWireUsage | null;
  error?: { message?: string } | string;
}

// --- request mapping ----------------------------------------------------------------------

export interface ChatEgressOptions {
  /** OpenAI: `max_completion_tokens`; most compatible servers still read only `max_tokens`. */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Top-level body fields this vendor rejects; removed after mapping (Portkey-style exclusion). */
  excludeParams?: readonly string[];
  /** OpenAI reasoning models reject temperature, top_p and penalties: drop them for effort models. */
  dropSamplingForReasoningModels: boolean;
}

export const OPENAI_CHAT_OPTIONS: ChatEgressOptions = { maxTokensField: 'max_completion_tokens', dropSamplingForReasoningModels: true };

export function toChatRequest(request: CanonicalRequest, options: ChatEgressOptions = OPENAI_CHAT_OPTIONS): ChatWireRequest {
  const usesEffort = request.model.effort === 'openai-effort';
  const keepSampling = !(usesEffort && options.dropSamplingForReasoningModels);
  const functionLike = request.tools.filter((tool) => tool.type !== 'mcp');
  const body: ChatWireRequest = {
    model: request.model.vendorModelId,
    messages: toChatMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  // A client that reads the answer whole gets it from a non-streamed upstream call: one JSON
  // body instead of an event per few characters (less work here and at the vendor).
  if (request.stream === false) {
    body.stream = false;
    delete body.stream_options;
  }
  if (functionLike.length > 0) {
    body.tools = functionLike.map(toChatTool).filter((tool): tool is ChatWireTool => tool !== null);
    if (request.toolChoice !== undefined) body.tool_choice = toChatToolChoice(request.toolChoice, request.tools);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const format = toChatResponseFormat(request.responseFormat);
  if (format) body.response_format = format;
  body[options.maxTokensField] = request.maxOutputTokens;
  if (request.stop && request.stop.length > 0) body.stop = request.stop;
  if (keepSampling) {
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
    if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  }
  if (usesEffort) {
    const effort = toOpenAIEffort(request.reasoning);
    if (effort) body.reasoning_effort = effort;
  }
  if (request.user !== undefined) body.user = request.user;
  for (const param of options.excludeParams ?? []) delete (body as unknown as Record<string, unknown>)[param];
  return body;
}

/**
 * Chat has no field for reasoning blocks of earlier turns: they are dropped. So are MCP tool
 * listings (the only MCP items a Chat upstream is given: see assertToolsSupported).
 */
export function toChatMessages(messages: readonly CanonicalMessage[]): ChatWireMessage[] {
  return messages.flatMap((message): ChatWireMessage[] => (message.role === 'mcp' ? [] : [toChatMessage(message)]));
}

function toChatMessage(message: Exclude<CanonicalMessage, { role: 'mcp' }>): ChatWireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call): ChatWireToolCall =>
          call.kind === 'custom'
            ? { id: call.id, type: 'custom', custom: { name: call.name, input: call.arguments } }
            : { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
        ),
      };
    case 'tool':
      // Chat has no error flag on tool results; the content carries the error text.
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toChatTool(tool: CanonicalTool): ChatWireTool | null {
  switch (tool.type) {
    case 'function':
      return {
        type: 'function',
        function: {
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          parameters: tool.parameters,
          ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
        },
      };
    case 'custom':
      return {
        type: 'custom',
        custom: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), ...(tool.format ? { format: tool.format } : {}) },
      };
    case 'mcp':
      return null;
  }
}

function toChatToolChoice(choice: CanonicalToolChoice, tools: readonly CanonicalTool[]): ChatWireToolChoice {
  if (typeof choice === 'string') return choice;
  const named = tools.find((tool) => tool.type !== 'mcp' && tool.name === choice.name);
  return named?.type === 'custom' ? { type: 'custom', custom: { name: choice.name } } : { type: 'function', function: { name: choice.name } };
}

export function toChatResponseFormat(format: CanonicalResponseFormat | undefined): ChatWireResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
      ...(format.description !== undefined ? { description: format.description } : {}),
    },
  };
}

/**
 * Canonical reasoning → OpenAI effort. `extra_high` becomes `high`: `xhigh` exists only on a
 * few newest models and is refused by the others (o4-mini). `disabled` becomes `low`: o-series
 * models cannot stop reasoning. A bare thinking budget (Anthropic-style) picks the nearest
 * effort. `default`/`adaptive` without effort: omitted, the vendor's default applies.
 */
export function toOpenAIEffort(reasoning: CanonicalReasoning): OpenAIEffort | undefined {
  if (reasoning.mode === 'disabled') return 'low';
  if (reasoning.effort) return reasoning.effort === 'extra_high' ? 'high' : reasoning.effort;
  if (reasoning.mode === 'enabled' && reasoning.budgetTokens !== undefined) {
    if (reasoning.budgetTokens <= 2048) return 'low';
    if (reasoning.budgetTokens <= 8192) return 'medium';
    return 'high';
  }
  return undefined;
}

// --- stream mapping -----------------------------------------------------------------------

export function chatUsageToCanonical(usage: ChatWireUsage): CanonicalUsage {
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    // Absent (many compatible servers): unknown, the pipeline estimates it.
    reasoningTokens: typeof reasoning === 'number' ? reasoning : null,
  };
}

export function chatFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

interface OpenToolCall {
  canonicalIndex: number;
}

/**
 * Turns the `data:` payloads of a Chat Completions stream into canonical events. OpenAI
 * sends `finish_reason` in one chunk and (with `include_usage`) the usage in a later chunk
 * with empty `choices`, then `[DONE]`; `finish` is emitted once both are known.
 */
export class ChatStreamDecoder {
  private reasoningOpen = false;
  private readonly toolCalls = new Map<number, OpenToolCall>();
  private openToolIndex: number | null = null;
  private toolCallCount = 0;
  private refusal = false;
  private finishReason: string | null = null;
  private usage: ChatWireUsage | null = null;
  private finished = false;

  constructor(private readonly vendor: string) {}

  get done(): boolean {
    return this.finished;
  }

  /** One SSE `data` payload. */
  push(data: string): CanonicalEvent[] {
    if (this.finished) return [];
    const events: CanonicalEvent[] = [];
    if (data.trim() === '[DONE]') {
      this.closeAll(events);
      this.tryFinish(events);
      if (!this.finished) {
        throw new ProviderError(
          this.finishReason ? `${this.vendor} ended its stream without reporting token usage.` : `${this.vendor} ended its stream before finishing the answer.`,
          this.vendor,
        );
      }
      return events;
    }
    return this.pushChunk(parseChunk(this.vendor, data), events);
  }

  /**
   * A non-streamed answer (`chat.completion`): its message is the whole delta, so it goes
   * through the same mapping as a stream that sent everything in one chunk.
   */
  pushWhole(completion: unknown): CanonicalEvent[] {
    if (typeof completion !== 'object' || completion === null || !Array.isArray((completion as { choices?: unknown }).choices)) {
      throw new ProviderError(`${this.vendor} answered without choices.`, this.vendor);
    }
    const { choices, usage, error } = completion as { choices: Array<{ index?: number; message?: Record<string, unknown> & { tool_calls?: ChatWireDeltaToolCall[] | null }; finish_reason?: string | null }>; usage?: ChatWireUsage | null; error?: ChatWireChunk['error'] };
    const chunk: ChatWireChunk = {
      error,
      usage,
      choices: choices.map((choice) => ({
        index: choice.index,
        finish_reason: choice.finish_reason,
        delta: withFields(choice.message ?? {}, { tool_calls: choice.message?.tool_calls?.map((call, index) => ({ index, ...call })) }),
      })),
    };
    const events = this.pushChunk(chunk, []);
    return [...events, ...this.end()];
  }

  private pushChunk(chunk: ChatWireChunk, events: CanonicalEvent[]): CanonicalEvent[] {
    if (this.finished) return events;
    if (chunk.error !== undefined) {
      const message = typeof chunk.error === 'string' ? chunk.error : chunk.error.message;
      throw new ProviderError(`${this.vendor} reported an error mid-stream: ${message ?? 'unknown error'}`, this.vendor);
    }
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue; // n is always 1
      const delta = choice.delta ?? {};
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') {
        this.reasoningOpen = true;
        events.push({ type: 'reasoning-delta', text: reasoning });
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        this.closeReasoning(events);
        events.push({ type: 'text-delta', text: delta.content });
      }
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        this.closeReasoning(events);
        this.refusal = true;
        events.push({ type: 'text-delta', text: delta.refusal });
      }
      for (const call of delta.tool_calls ?? []) this.toolCallDelta(call, events);
      if (choice.finish_reason) {
        this.finishReason = choice.finish_reason;
        this.closeAll(events);
      }
    }
    if (chunk.usage) this.usage = chunk.usage;
    this.tryFinish(events);
    return events;
  }

  /** The stream ended (EOF). Without a finish, the answer was cut: that is a failure. */
  end(): CanonicalEvent[] {
    if (this.finished) return [];
    const events: CanonicalEvent[] = [];
    this.closeAll(events);
    this.tryFinish(events);
    if (!this.finished) throw new ProviderError(`${this.vendor} stream ended before the answer was complete.`, this.vendor);
    return events;
  }

  private toolCallDelta(call: ChatWireDeltaToolCall, events: CanonicalEvent[]): void {
    const upstreamIndex = call.index ?? 0;
    let open = this.toolCalls.get(upstreamIndex);
    if (!open) {
      this.closeReasoning(events);
      // OpenAI streams tool calls one after another: a new index closes the previous one.
      this.closeTool(events);
      const kind = call.type === 'custom' || call.custom ? 'custom' : 'function';
      const name = (kind === 'custom' ? call.custom?.name : call.function?.name) ?? '';
      open = { canonicalIndex: this.toolCallCount++ };
      this.toolCalls.set(upstreamIndex, open);
      this.openToolIndex = upstreamIndex;
      events.push({ type: 'tool-call-start', index: open.canonicalIndex, id: call.id ?? `call_${open.canonicalIndex}`, name, kind });
    }
    const argumentsDelta = call.function?.arguments ?? call.custom?.input;
    if (argumentsDelta) events.push({ type: 'tool-call-delta', index: open.canonicalIndex, argumentsDelta });
  }

  private closeReasoning(events: CanonicalEvent[]): void {
    if (!this.reasoningOpen) return;
    this.reasoningOpen = false;
    events.push({ type: 'reasoning-end' });
  }

  private closeTool(events: CanonicalEvent[]): void {
    if (this.openToolIndex === null) return;
    const open = this.toolCalls.get(this.openToolIndex);
    this.openToolIndex = null;
    if (open) events.push({ type: 'tool-call-end', index: open.canonicalIndex });
  }

  private closeAll(events: CanonicalEvent[]): void {
    this.closeReasoning(events);
    this.closeTool(events);
  }

  private tryFinish(events: CanonicalEvent[]): void {
    if (this.finished || this.finishReason === null || this.usage === null) return;
    let reason = chatFinishReason(this.finishReason);
    // Some compatible servers say `stop` after tool calls.
    if (reason === 'stop' && this.toolCallCount > 0) reason = 'tool_calls';
    const refusal = this.refusal || reason === 'content_filter';
    if (this.refusal) reason = 'content_filter';
    this.finished = true;
    events.push({ type: 'finish', reason, refusal, usage: chatUsageToCanonical(this.usage) });
  }
}

function parseChunk(vendor: string, data: string): ChatWireChunk {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProviderError(`${vendor} sent a stream chunk that is not JSON.`, vendor);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ProviderError(`${vendor} sent a stream chunk that is not a JSON object.`, vendor);
  return value as ChatWireChunk;
}
