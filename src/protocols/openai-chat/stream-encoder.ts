import type { CanonicalEvent } from '../../domain/generation/canonical';
import type { ApiError } from '../../domain/shared/errors';
import { type AnswerMeta, randomWireId } from '../collect';
import type { StreamEncoder } from '../streams';
import { SSE_DONE, sseData } from '../sse-write';
import type { ChatChunkChoice, ChatChunkDelta, ChatCompletionUsage } from './types';
import { chatFinishReason, chatUsage } from './encode-answer';

export interface ChatStreamMeta extends AnswerMeta {
  /** From `decodeChatIngress`: add the final usage chunk (and `usage: null` on every other chunk). */
  includeUsage: boolean;
}

/**
 * Canonical events → `chat.completion.chunk` SSE frames, as the OpenAI SDK's ChatCompletionStream
 * accumulates them: a first chunk with the assistant role, content and tool-call deltas (tool
 * calls numbered from 0 in start order), a chunk with `finish_reason`, the usage chunk when
 * asked, then `data: [DONE]`. A failure ends the stream with `data: {"error": {...}}` and no
 * `[DONE]`: the answer did not complete (the SDK throws on that frame).
 */
export class ChatStreamEncoder implements StreamEncoder {
  private readonly id: string;
  private started = false;
  private ended = false;
  /** Canonical tool-call index → position in the message's `tool_calls`. */
  private readonly toolPositions = new Map<number, number>();
  /**
   * Every chunk is `{"id","object","created","model","choices"[,"usage"]}`: the bytes before its
   * choices are the same in all of them, serialised once.
   */
  private readonly head: string;

  constructor(private readonly meta: ChatStreamMeta) {
    this.id = meta.id ?? randomWireId('chatcmpl-');
    this.head = `data: {"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${JSON.stringify(meta.created)},"model":${JSON.stringify(meta.model)},"choices":`;
  }

  /**
   * The frame of a text delta, the commonest event by far: the same bytes as
   * `this.delta({ content: text })`, without building and serialising its four objects each time.
   */
  textFrame(text: string): string {
    return `${this.head}[{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null}]${this.meta.includeUsage ? ',"usage":null' : ''}}\n\n`;
  }

  /** The role chunk; emitted by the first `encode` when not called before. */
  start(): string {
    if (this.started || this.ended) return '';
    this.started = true;
    return this.chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]);
  }

  encode(event: CanonicalEvent): string {
    if (this.ended) return '';
    const head = this.start();
    switch (event.type) {
      case 'text-delta':
        return event.text === '' ? head : head + this.textFrame(event.text);
      case 'reasoning-delta':
      case 'reasoning-end':
      case 'tool-call-end':
      case 'mcp-item': // Chat declares no MCP servers, so only a cross-format answer has these: nowhere to show them
        return head;
      case 'tool-call-start': {
        const position = this.toolPositions.size;
        this.toolPositions.set(event.index, position);
        return (
          head +
          this.delta({ tool_calls: [{ index: position, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] })
        );
      }
      case 'tool-call-delta': {
        const position = this.toolPositions.get(event.index);
        if (position === undefined || event.argumentsDelta === '') return head;
        return head + this.delta({ tool_calls: [{ index: position, function: { arguments: event.argumentsDelta } }] });
      }
      case 'finish': {
        this.ended = true;
        const last = this.chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: chatFinishReason(event) }]);
        const usage = this.meta.includeUsage ? this.chunk([], chatUsage(event.usage)) : '';
        return head + last + usage + SSE_DONE;
      }
    }
  }

  /** A stream that fails after it began ends with the error envelope's fields as its last frame, and no `[DONE]` (docs/text.md, Faults). */
  encodeError(error: ApiError): string {
    if (this.ended) return '';
    this.ended = true;
    return sseData({ error: { code: error.code, message: error.message, details: error.details } });
  }

  private delta(delta: ChatChunkDelta): string {
    return this.chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]);
  }

  /** `sseData` of the chunk object, from the serialised head: the same bytes (test/unit/chat-stream-frames.test.ts). */
  private chunk(choices: ChatChunkChoice[], usage?: ChatCompletionUsage): string {
    const tail = this.meta.includeUsage ? `,"usage":${JSON.stringify(usage ?? null)}}` : '}';
    return `${this.head}${JSON.stringify(choices)}${tail}\n\n`;
  }
}
