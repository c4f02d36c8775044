import type {
  AppliedContextEdit,
  CanonicalEvent,
  CanonicalMcpCall,
  CanonicalUsage,
  FinishReason,
  ProviderEvent,
} from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import { parseSsePayload, type StreamDecoder } from '../streams';
import { withFields } from '../../domain/shared/objects';
import type {
  AnthropicWireAnswerBlock,
  AnthropicWireContextManagement,
  AnthropicWireStreamEvent,
  AnthropicWireUsage,
} from './vendor-types';

/**
 * Vendor side of Anthropic Messages: its stream events (or one whole `message`) → canonical
 * events, stop reason and usage.
 */

export function anthropicStopReason(reason: string | null | undefined): { reason: FinishReason; refusal: boolean } {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { reason: 'length', refusal: false };
    case 'tool_use':
      return { reason: 'tool_calls', refusal: false };
    case 'refusal':
      return { reason: 'content_filter', refusal: true };
    default: // end_turn, stop_sequence, pause_turn
      return { reason: 'stop', refusal: false };
  }
}

/**
 * Anthropic's `input_tokens` excludes cache reads and writes; canonical `inputTokens` is the
 * whole prompt. Cache writes are split by entry lifetime (`cache_creation`); writes it does not
 * break down are 5-minute ones, the default lifetime. Anthropic reports no separate thinking
 * count: reasoning is unknown (null) when the answer had thinking blocks, and exactly 0 when it
 * had none.
 */
export function anthropicUsageToCanonical(usage: AnthropicWireUsage, hadThinking: boolean): CanonicalUsage {
  const input = usage.input_tokens ?? 0;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const oneHour = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const cacheWrite = Math.max(usage.cache_creation_input_tokens ?? 0, (usage.cache_creation?.ephemeral_5m_input_tokens ?? 0) + oneHour);
  return {
    inputTokens: input + cacheRead + cacheWrite,
    cachedInputTokens: cacheRead,
    cacheWrite5mInputTokens: cacheWrite - oneHour,
    cacheWrite1hInputTokens: oneHour,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: hadThinking ? null : 0,
  };
}

/** The short message a refusal carries when the model itself wrote nothing. */
export const REFUSAL_TEXT = 'The model declined to answer this request.';

type OpenBlock =
  | { kind: 'text' }
  | { kind: 'thinking'; signature?: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; index: number; argumentChars: number }
  | { kind: 'mcp-use'; id: string; name: string; server: string; json: string }
  | { kind: 'ignored' };

/** Turns Anthropic stream events (`event:` name + `data:` JSON) into canonical events. */
export class MessagesStreamDecoder implements StreamDecoder {
  private readonly blocks = new Map<number, OpenBlock>();
  /** MCP calls Anthropic made whose result block has not come yet, by tool use id. */
  private readonly mcpCalls = new Map<string, CanonicalMcpCall>();
  private toolCallCount = 0;
  private hadThinking = false;
  private wroteText = false;
  private usage: AnthropicWireUsage = {};
  private stop: { reason: string | null; sequence: string | null } | null = null;
  private appliedEdits: AppliedContextEdit[] | null = null;
  private finished = false;

  constructor(private readonly vendor: string) {}

  get done(): boolean {
    return this.finished;
  }

  push(data: string): ProviderEvent[] {
    return this.pushEvent(parseSsePayload<AnthropicWireStreamEvent>(this.vendor, data, 'event'));
  }

  /**
   * A non-streamed answer (`type: message`), replayed as the events of the stream that would
   * have carried it, so it goes through the same mapping.
   */
  pushWhole(answer: unknown): ProviderEvent[] {
    const message = answer as {
      content?: unknown;
      usage?: AnthropicWireUsage;
      stop_reason?: string | null;
      stop_sequence?: string | null;
      context_management?: AnthropicWireContextManagement | null;
    } | null;
    if (typeof message !== 'object' || message === null || !Array.isArray(message.content))
      throw new ProviderError(`${this.vendor} answered without content.`, this.vendor);
    const events: ProviderEvent[] = [];
    const replay = (event: AnthropicWireStreamEvent) => events.push(...this.pushEvent(event));
    replay({ type: 'message_start', message: { usage: message.usage } });
    (message.content as AnthropicWireAnswerBlock[]).forEach((block, index) => {
      if (block.type === 'tool_use' || block.type === 'mcp_tool_use') {
        replay({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
        replay({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) },
        });
      } else {
        replay({ type: 'content_block_start', index, content_block: block }); // text and thinking start with their whole text
        if (block.type === 'thinking' && block.signature)
          replay({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
      }
      replay({ type: 'content_block_stop', index });
    });
    replay({
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason ?? null, stop_sequence: message.stop_sequence ?? null },
      usage: message.usage,
      context_management: message.context_management,
    });
    replay({ type: 'message_stop' });
    return events;
  }

  private pushEvent(event: AnthropicWireStreamEvent): ProviderEvent[] {
    if (this.finished) return [];
    const events: ProviderEvent[] = [];
    switch (event.type) {
      case 'message_start': {
        this.mergeUsage(event.message?.usage);
        // The prompt's usage, known before the answer: a Messages client sees it in its own message_start.
        if (typeof this.usage.input_tokens !== 'number') break;
        const { inputTokens, cachedInputTokens, cacheWrite5mInputTokens, cacheWrite1hInputTokens } = anthropicUsageToCanonical(
          this.usage,
          false,
        );
        events.push({ type: 'input-usage', usage: { inputTokens, cachedInputTokens, cacheWrite5mInputTokens, cacheWrite1hInputTokens } });
        break;
      }
      case 'content_block_start':
        this.startBlock(event.index ?? 0, event.content_block ?? {}, events);
        break;
      case 'content_block_delta':
        this.blockDelta(event.index ?? 0, event.delta ?? {}, events);
        break;
      case 'content_block_stop':
        this.stopBlock(event.index ?? 0, events);
        break;
      case 'message_delta':
        this.mergeUsage(event.usage);
        this.appliedEdits = appliedEdits(event.context_management) ?? this.appliedEdits;
        if (event.delta && 'stop_reason' in event.delta)
          this.stop = { reason: event.delta.stop_reason ?? null, sequence: event.delta.stop_sequence ?? null };
        break;
      case 'message_stop': {
        for (const index of [...this.blocks.keys()]) this.stopBlock(index, events);
        // A call whose result never came still happened: shown without output.
        for (const call of this.mcpCalls.values()) events.push({ type: 'mcp-item', item: call });
        this.mcpCalls.clear();
        const { reason, refusal } = anthropicStopReason(this.stop?.reason);
        if (refusal && !this.wroteText) events.push({ type: 'text-delta', text: REFUSAL_TEXT });
        this.finished = true;
        events.push({
          type: 'finish',
          reason,
          refusal,
          usage: anthropicUsageToCanonical(this.usage, this.hadThinking),
          ...(this.stop?.sequence ? { stopSequence: this.stop.sequence } : {}),
          ...(this.appliedEdits ? { appliedContextEdits: this.appliedEdits } : {}),
        });
        break;
      }
      case 'error':
        throw new ProviderError(
          `${this.vendor} reported an error mid-stream: ${event.error?.message ?? event.error?.type ?? 'unknown error'}`,
          this.vendor,
        );
      default: // ping and future events
        break;
    }
    return events;
  }

  end(): CanonicalEvent[] {
    if (!this.finished) throw new ProviderError(`${this.vendor} stream ended before the answer was complete.`, this.vendor);
    return [];
  }

  private mergeUsage(usage: AnthropicWireUsage | undefined): void {
    if (!usage) return;
    // message_delta repeats the totals so far; null/absent means "no change".
    for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      const value = usage[key];
      if (typeof value === 'number') this.usage[key] = value;
    }
    if (usage.cache_creation) this.usage.cache_creation = usage.cache_creation;
  }

  private startBlock(index: number, block: NonNullable<AnthropicWireStreamEvent['content_block']>, events: ProviderEvent[]): void {
    switch (block.type) {
      case 'text':
        this.blocks.set(index, { kind: 'text' });
        if (block.text) this.text(block.text, events);
        break;
      case 'thinking':
        this.hadThinking = true;
        this.blocks.set(index, { kind: 'thinking' });
        if (block.thinking) events.push({ type: 'reasoning-delta', text: block.thinking });
        break;
      case 'redacted_thinking':
        this.hadThinking = true;
        this.blocks.set(index, { kind: 'redacted', data: block.data ?? '' });
        break;
      case 'tool_use': {
        const toolIndex = this.toolCallCount++;
        this.blocks.set(index, { kind: 'tool', index: toolIndex, argumentChars: 0 });
        events.push({
          type: 'tool-call-start',
          index: toolIndex,
          id: block.id ?? `toolu_${toolIndex}`,
          name: block.name ?? '',
          kind: 'function',
        });
        break;
      }
      case 'mcp_tool_use':
        this.blocks.set(index, {
          kind: 'mcp-use',
          id: block.id ?? `mcptoolu_${index}`,
          name: block.name ?? '',
          server: block.server_name ?? '',
          json: '',
        });
        break;
      case 'mcp_tool_result': {
        // Comes whole, after its use: the pair is one canonical MCP call.
        const call = this.mcpCalls.get(block.tool_use_id ?? '');
        this.blocks.set(index, { kind: 'ignored' });
        if (!call) break;
        this.mcpCalls.delete(call.id);
        const text = mcpResultText(block.content);
        events.push({ type: 'mcp-item', item: block.is_error ? withFields(call, { error: text }) : withFields(call, { output: text }) });
        break;
      }
      default:
        // server_tool_use, web_search_tool_result…: run by Anthropic, with no canonical form.
        this.blocks.set(index, { kind: 'ignored' });
    }
  }

  private blockDelta(index: number, delta: NonNullable<AnthropicWireStreamEvent['delta']>, events: ProviderEvent[]): void {
    const block = this.blocks.get(index);
    if (!block) return;
    if (block.kind === 'text' && delta.type === 'text_delta' && delta.text) this.text(delta.text, events);
    else if (block.kind === 'thinking' && delta.type === 'thinking_delta' && delta.thinking)
      events.push({ type: 'reasoning-delta', text: delta.thinking });
    else if (block.kind === 'thinking' && delta.type === 'signature_delta' && delta.signature)
      block.signature = (block.signature ?? '') + delta.signature;
    else if (block.kind === 'tool' && delta.type === 'input_json_delta' && delta.partial_json) {
      block.argumentChars += delta.partial_json.length;
      events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: delta.partial_json });
    } else if (block.kind === 'mcp-use' && delta.type === 'input_json_delta' && delta.partial_json) block.json += delta.partial_json;
  }

  private stopBlock(index: number, events: ProviderEvent[]): void {
    const block = this.blocks.get(index);
    if (!block) return;
    this.blocks.delete(index);
    if (block.kind === 'thinking') events.push({ type: 'reasoning-end', ...(block.signature ? { signature: block.signature } : {}) });
    else if (block.kind === 'redacted') events.push({ type: 'reasoning-end', redactedData: block.data });
    else if (block.kind === 'mcp-use')
      this.mcpCalls.set(block.id, {
        kind: 'call',
        id: block.id,
        serverLabel: block.server,
        name: block.name,
        arguments: block.json === '' ? '{}' : block.json,
      });
    else if (block.kind === 'tool') {
      // A tool without input streams no JSON at all; canonical arguments are always JSON.
      if (block.argumentChars === 0) events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: '{}' });
      events.push({ type: 'tool-call-end', index: block.index });
    }
  }

  private text(text: string, events: ProviderEvent[]): void {
    this.wroteText = true;
    events.push({ type: 'text-delta', text });
  }
}

/** The edits of a `context_management` report, as Anthropic sent them (objects only); null without one. */
function appliedEdits(report: AnthropicWireContextManagement | null | undefined): AppliedContextEdit[] | null {
  const edits = report?.applied_edits;
  if (!Array.isArray(edits)) return null;
  return edits.filter((edit): edit is AppliedContextEdit => typeof edit === 'object' && edit !== null && !Array.isArray(edit));
}

/** An MCP result's content: a string or text blocks. */
function mcpResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((part: { type?: string; text?: string } | null) => (part?.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join('\n');
}
