import type { CanonicalEvent, InputUsage } from '../../domain/generation/canonical';
import { type ApiError } from '../../domain/shared/errors';
import { type AnswerMeta, type FinishEvent, randomWireId } from '../collect';
import { compact } from '../decode-fields';
import { withFields } from '../../domain/shared/objects';
import type { StreamEncoder } from '../streams';
import { sseEvent } from '../sse-write';
import type { ContentBlock, MessagesMessage, MessagesStreamEvent } from './types';
import { contextManagement, mcpCallContent, messagesErrorBody, messagesStopReason, messagesUsage } from './encode-answer';

export interface MessagesStreamMeta extends AnswerMeta {
  /**
   * The prompt's usage for `message_start` (the vendor's figure when it reported one before its
   * answer, else Tollgate's count): clients that read the input tokens there (LangChain) see
   * them. The exact counts of the finish are sent again in `message_delta`, whose counters the
   * Anthropic SDK takes as the message's totals. Absent: zeros.
   */
  inputUsage?: InputUsage;
  /** `thinking.display: 'omitted'`: thinking blocks carry their signature and no text. */
  omitThinking?: boolean;
  /** The request's id, in `event: error`. */
  requestId?: string;
}

type OpenBlock = { index: number; kind: 'text' | 'thinking' | 'tool' | 'mcp'; toolIndex?: number };

/** `message_start` usage in Anthropic's split (input without cache reads and writes); output comes with the finish. */
function startUsage(input: InputUsage | undefined): MessagesMessage['usage'] {
  if (!input) return { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = messagesUsage({
    ...input,
    outputTokens: 0,
    reasoningTokens: 0,
  });
  return { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens: 0 };
}

/**
 * Canonical events → Anthropic SSE, as the SDK's MessageStream accumulates them:
 * `message_start`, per content block `content_block_start` … deltas (text_delta,
 * thinking_delta, signature_delta, input_json_delta) … `content_block_stop`, then
 * `message_delta` (stop reason and usage) and `message_stop`. Every frame has an `event:` line
 * (the SDK skips frames without one). A failure sends `event: error`.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private readonly id: string;
  private started = false;
  private ended = false;
  private nextIndex = 0;
  private open: OpenBlock | null = null;
  /** Canonical tool index → block index, for tool blocks not yet stopped. */
  private readonly toolBlocks = new Map<number, number>();

  constructor(private readonly meta: MessagesStreamMeta) {
    this.id = meta.id ?? randomWireId('msg_');
  }

  /** `message_start`; emitted by the first `encode` when not called before. */
  start(): string {
    if (this.started || this.ended) return '';
    this.started = true;
    return this.emit({
      type: 'message_start',
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: startUsage(this.meta.inputUsage),
      },
    });
  }

  encode(event: CanonicalEvent): string {
    if (this.ended) return '';
    let out = this.start();
    switch (event.type) {
      case 'reasoning-delta':
        if (this.open?.kind !== 'thinking')
          out += this.closeOpen() + this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        if (this.meta.omitThinking) return out;
        return out + this.delta(this.open!.index, { type: 'thinking_delta', thinking: event.text });
      case 'reasoning-end': {
        if (this.open?.kind === 'thinking') {
          const index = this.open.index;
          if (event.signature !== undefined) out += this.delta(index, { type: 'signature_delta', signature: event.signature });
          out += this.closeOpen();
          if (event.redactedData === undefined) return out;
        }
        if (event.redactedData !== undefined) {
          out += this.closeOpen() + this.openBlock('thinking', { type: 'redacted_thinking', data: event.redactedData });
          return out + this.closeOpen();
        }
        if (event.signature !== undefined) {
          // A signed block with no visible text.
          out += this.closeOpen() + this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
          return out + this.delta(this.open!.index, { type: 'signature_delta', signature: event.signature }) + this.closeOpen();
        }
        return out;
      }
      case 'text-delta':
        if (event.text === '') return out;
        if (this.open?.kind !== 'text') out += this.closeOpen() + this.openBlock('text', { type: 'text', text: '' });
        return out + this.delta(this.open!.index, { type: 'text_delta', text: event.text });
      case 'tool-call-start':
        out += this.closeOpen() + this.openBlock('tool', { type: 'tool_use', id: event.id, name: event.name, input: {} }, event.index);
        this.toolBlocks.set(event.index, this.open!.index);
        return out;
      case 'tool-call-delta': {
        // Providers deliver calls one after another; a late delta still goes to its own block.
        const index = this.toolBlocks.get(event.index);
        if (index === undefined || event.argumentsDelta === '') return out;
        return out + this.delta(index, { type: 'input_json_delta', partial_json: event.argumentsDelta });
      }
      case 'tool-call-end':
        if (this.open?.kind === 'tool' && this.open.toolIndex === event.index) out += this.closeOpen();
        this.toolBlocks.delete(event.index);
        return out;
      case 'mcp-item': {
        // A call as Anthropic shows it: the use (its input streamed like a tool's), then the result.
        // Listings and approval requests have no Anthropic form (mcp_servers never ask).
        if (event.item.kind !== 'call') return out;
        const [use, result] = mcpCallContent(event.item);
        out += this.closeOpen() + this.openBlock('mcp', withFields(use, { input: {} }));
        if (event.item.arguments !== '{}')
          out += this.delta(this.open!.index, { type: 'input_json_delta', partial_json: event.item.arguments });
        return out + this.closeOpen() + this.openBlock('mcp', result) + this.closeOpen();
      }
      case 'finish':
        return out + this.finish(event);
    }
  }

  /** A stream that fails after it began ends with Anthropic's `event: error` (docs/text.md, Faults). */
  encodeError(error: ApiError): string {
    if (this.ended) return '';
    this.ended = true;
    return sseEvent('error', messagesErrorBody(error, this.meta.requestId));
  }

  private finish(event: FinishEvent): string {
    this.ended = true;
    const usage = messagesUsage(event.usage);
    return (
      this.closeOpen() +
      this.emit({
        type: 'message_delta',
        delta: { stop_reason: messagesStopReason(event), stop_sequence: event.stopSequence ?? null },
        usage,
        ...contextManagement(event),
      }) +
      this.emit({ type: 'message_stop' })
    );
  }

  private openBlock(kind: OpenBlock['kind'], contentBlock: ContentBlock, toolIndex?: number): string {
    const index = this.nextIndex++;
    this.open = compact({ index, kind, toolIndex });
    return this.emit({ type: 'content_block_start', index, content_block: contentBlock });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const { index } = this.open;
    this.open = null;
    return this.emit({ type: 'content_block_stop', index });
  }

  private delta(index: number, delta: Extract<MessagesStreamEvent, { type: 'content_block_delta' }>['delta']): string {
    return this.emit({ type: 'content_block_delta', index, delta });
  }

  private emit(event: MessagesStreamEvent): string {
    return sseEvent(event.type, event);
  }
}
