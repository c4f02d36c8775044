import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import { parseSsePayload, type StreamDecoder } from '../streams';
import type { ResponsesWireEvent, ResponsesWireItem, ResponsesWireResponse, ResponsesWireUsage } from './vendor-types';
import { fromWireMcpItem } from './mcp-items';

/**
 * Vendor side of the OpenAI Responses API: its stream events (or one whole `response`, replayed as
 * the events that would have carried it) → canonical events.
 */

export function responsesUsageToCanonical(usage: ResponsesWireUsage): CanonicalUsage {
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage.input_tokens ?? 0,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: typeof reasoning === 'number' ? reasoning : null,
  };
}

/** `incomplete_details.reason` → canonical; anything else incomplete counts as `length`. */
export function responsesIncompleteReason(reason: string | undefined): FinishReason {
  return reason === 'content_filter' ? 'content_filter' : 'length';
}

/**
 * Turns Responses stream events into canonical events. Only client-side tool calls
 * (function, custom) become tool-call events; MCP items (listings, calls, approval requests)
 * become one `mcp-item` event each when done; other vendor-run items are the vendor's
 * business. `finish` comes from `response.completed`/`response.incomplete`.
 */
export class ResponsesStreamDecoder implements StreamDecoder {
  /** output_index → canonical tool-call index. */
  private readonly toolCalls = new Map<number, number>();
  private toolCallCount = 0;
  private reasoningOpen = false;
  private refusal = false;
  private finished = false;

  constructor(private readonly vendor: string) {}

  get done(): boolean {
    return this.finished;
  }

  push(data: string): CanonicalEvent[] {
    return this.apply(parseSsePayload<ResponsesWireEvent>(this.vendor, data, 'event'));
  }

  /**
   * A whole (non-streamed) response: replayed as the stream events that would have carried it,
   * so both paths share one mapping.
   */
  pushWhole(answer: unknown): CanonicalEvent[] {
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw new ProviderError(`${this.vendor} answered with a body that is not a response object.`, this.vendor);
    const response = answer as ResponsesWireResponse;
    if (response.status === 'failed') return this.apply({ type: 'response.failed', response });
    const events: CanonicalEvent[] = [];
    (response.output ?? []).forEach((item, outputIndex) => {
      for (const event of streamEventsOf(item, outputIndex)) events.push(...this.apply(event));
    });
    events.push(...this.apply({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response }));
    return events;
  }

  private apply(event: ResponsesWireEvent): CanonicalEvent[] {
    if (this.finished) return [];
    const events: CanonicalEvent[] = [];
    switch (event.type) {
      case 'response.output_item.added': {
        const item = event.item ?? {};
        if (item.type === 'function_call' || item.type === 'custom_tool_call') {
          this.closeReasoning(events);
          const index = this.toolCallCount++;
          this.toolCalls.set(event.output_index ?? -1, index);
          events.push({
            type: 'tool-call-start',
            index,
            id: item.call_id ?? item.id ?? `call_${index}`,
            name: item.name ?? '',
            kind: item.type === 'custom_tool_call' ? 'custom' : 'function',
          });
        }
        break;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (event.delta) {
          this.reasoningOpen = true;
          events.push({ type: 'reasoning-delta', text: event.delta });
        }
        break;
      case 'response.reasoning_summary_part.added':
        // Separate summary paragraphs the way the vendor's own UI does.
        if ((event.summary_index ?? 0) > 0 && this.reasoningOpen) events.push({ type: 'reasoning-delta', text: '\n\n' });
        break;
      case 'response.output_text.delta':
        if (event.delta) {
          this.closeReasoning(events);
          events.push({ type: 'text-delta', text: event.delta });
        }
        break;
      case 'response.refusal.delta':
        if (event.delta) {
          this.closeReasoning(events);
          this.refusal = true;
          events.push({ type: 'text-delta', text: event.delta });
        }
        break;
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const index = this.toolCalls.get(event.output_index ?? -1);
        if (index !== undefined && event.delta) events.push({ type: 'tool-call-delta', index, argumentsDelta: event.delta });
        break;
      }
      case 'response.output_item.done': {
        const item = event.item ?? {};
        if (item.type === 'reasoning') this.closeReasoning(events);
        const mcp = fromWireMcpItem(item);
        if (mcp) {
          this.closeReasoning(events);
          events.push({ type: 'mcp-item', item: mcp });
        }
        const index = this.toolCalls.get(event.output_index ?? -1);
        if (index !== undefined) {
          events.push({ type: 'tool-call-end', index });
          this.toolCalls.delete(event.output_index ?? -1);
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response ?? {};
        if (!response.usage) throw new ProviderError(`${this.vendor} finished its response without reporting token usage.`, this.vendor);
        this.closeReasoning(events);
        for (const index of this.toolCalls.values()) events.push({ type: 'tool-call-end', index });
        this.toolCalls.clear();
        let reason: FinishReason =
          response.status === 'incomplete'
            ? responsesIncompleteReason(response.incomplete_details?.reason)
            : this.toolCallCount > 0
              ? 'tool_calls'
              : 'stop';
        if (this.refusal) reason = 'content_filter';
        this.finished = true;
        events.push({ type: 'finish', reason, refusal: reason === 'content_filter', usage: responsesUsageToCanonical(response.usage) });
        break;
      }
      case 'response.failed': {
        const error = event.response?.error;
        throw new ProviderError(`${this.vendor} failed the response: ${error?.message ?? error?.code ?? 'unknown error'}`, this.vendor);
      }
      case 'error':
        throw new ProviderError(
          `${this.vendor} reported an error mid-stream: ${event.message ?? event.code ?? 'unknown error'}`,
          this.vendor,
        );
      default:
        break;
    }
    return events;
  }

  end(): CanonicalEvent[] {
    if (!this.finished) throw new ProviderError(`${this.vendor} stream ended before the answer was complete.`, this.vendor);
    return [];
  }

  private closeReasoning(events: CanonicalEvent[]): void {
    if (!this.reasoningOpen) return;
    this.reasoningOpen = false;
    events.push({ type: 'reasoning-end' });
  }
}

/** The stream events that carry one finished output item (what pushWhole replays). */
function streamEventsOf(item: ResponsesWireItem, outputIndex: number): ResponsesWireEvent[] {
  const events: ResponsesWireEvent[] = [];
  const at = { output_index: outputIndex };
  switch (item.type) {
    case 'reasoning':
      (item.summary ?? []).forEach((part, summaryIndex) => {
        events.push({ type: 'response.reasoning_summary_part.added', ...at, summary_index: summaryIndex });
        if (part.text) events.push({ type: 'response.reasoning_summary_text.delta', ...at, summary_index: summaryIndex, delta: part.text });
      });
      for (const part of item.content ?? [])
        if (part.type === 'reasoning_text' && part.text) events.push({ type: 'response.reasoning_text.delta', ...at, delta: part.text });
      break;
    case 'message':
      for (const part of item.content ?? []) {
        if (part.type === 'output_text' && part.text) events.push({ type: 'response.output_text.delta', ...at, delta: part.text });
        if (part.type === 'refusal' && part.refusal) events.push({ type: 'response.refusal.delta', ...at, delta: part.refusal });
      }
      break;
    case 'function_call':
    case 'custom_tool_call': {
      events.push({ type: 'response.output_item.added', ...at, item });
      const delta = item.type === 'function_call' ? item.arguments : item.input;
      if (delta)
        events.push({
          type: item.type === 'function_call' ? 'response.function_call_arguments.delta' : 'response.custom_tool_call_input.delta',
          ...at,
          delta,
        });
      break;
    }
    case 'mcp_list_tools':
    case 'mcp_call':
    case 'mcp_approval_request':
      break;
    default:
      // Other vendor-run items (searches) are the vendor's business, as in a stream.
      return events;
  }
  events.push({ type: 'response.output_item.done', ...at, item });
  return events;
}
