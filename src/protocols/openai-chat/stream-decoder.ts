import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import { parseSsePayload, type StreamDecoder } from '../streams';
import { withFields } from '../../domain/shared/objects';
import type { ChatWireChunk, ChatWireDeltaToolCall, ChatWireUsage } from './vendor-types';

/**
 * Vendor side of Chat Completions: the answer's chunks (streamed, or one whole `chat.completion`)
 * → canonical events, usage and finish reason.
 */

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
export class ChatStreamDecoder implements StreamDecoder {
  private reasoningOpen = false;
  /** Made on the first tool call: most answers have none. */
  private toolCalls: Map<number, OpenToolCall> | null = null;
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
          this.finishReason
            ? `${this.vendor} ended its stream without reporting token usage.`
            : `${this.vendor} ended its stream before finishing the answer.`,
          this.vendor,
        );
      }
      return events;
    }
    return this.pushChunk(parseSsePayload<ChatWireChunk>(this.vendor, data, 'chunk'), events);
  }

  /**
   * A non-streamed answer (`chat.completion`): its message is the whole delta, so it goes
   * through the same mapping as a stream that sent everything in one chunk.
   */
  pushWhole(completion: unknown): CanonicalEvent[] {
    if (typeof completion !== 'object' || completion === null || !Array.isArray((completion as { choices?: unknown }).choices)) {
      throw new ProviderError(`${this.vendor} answered without choices.`, this.vendor);
    }
    const { choices, usage, error } = completion as {
      choices: Array<{
        index?: number;
        message?: Record<string, unknown> & { tool_calls?: ChatWireDeltaToolCall[] | null };
        finish_reason?: string | null;
      }>;
      usage?: ChatWireUsage | null;
      error?: ChatWireChunk['error'];
    };
    const chunk: ChatWireChunk = {
      error,
      usage,
      choices: choices.map((choice) => ({
        index: choice.index,
        finish_reason: choice.finish_reason,
        // The message itself when it calls no tool (nearly every answer): the mapping only reads it.
        delta: choice.message?.tool_calls
          ? withFields(choice.message, { tool_calls: choice.message.tool_calls.map((call, index) => ({ index, ...call })) })
          : (choice.message ?? {}),
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
    this.toolCalls ??= new Map();
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
    const open = this.toolCalls?.get(this.openToolIndex);
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
