import type { CanonicalEvent, CanonicalToolCall } from '../../domain/generation/canonical';
import type { ApiError } from '../../domain/shared/errors';
import { type FinishEvent, type IdFactory, randomWireId } from '../collect';
import { compact } from '../decode-fields';
import type { StreamEncoder } from '../streams';
import { sseEvent } from '../sse-write';
import type { ResponseStreamEvent } from './stream-events';
import type { ResponseFunctionToolCall, ResponseItemStatus, ResponseOutputItem } from './items';
import { withFields } from '../../domain/shared/objects';
import {
  ResponsesMeta,
  callItem,
  itemStatus,
  mcpOutputItem,
  messageItem,
  outputTextPart,
  reasoningItem,
  responseObject,
  responsesUsage,
  terminalState,
} from './encode-answer';

/** The event of a given `type` (lifecycle events share one interface, so `Extract` would not find them). */
type EventOf<T extends ResponseStreamEvent['type']> = ResponseStreamEvent extends infer E
  ? E extends { type: infer U }
    ? T extends U
      ? E
      : never
    : never
  : never;
type Payload<T extends ResponseStreamEvent['type']> = Omit<EventOf<T>, 'type' | 'sequence_number'>;
type OpenText = { kind: 'message' | 'reasoning'; outputIndex: number; id: string; text: string };
type OpenCall = { outputIndex: number; id: string; call: CanonicalToolCall };

/**
 * Canonical events → Responses SSE events, in the order the OpenAI SDK's ResponseStream
 * accumulates them: `response.created`, `response.in_progress`, then per output item
 * `output_item.added` … deltas … `output_item.done`, and `response.completed` (or
 * `response.incomplete`) with the whole response. Reasoning is shown as a reasoning item
 * with one summary part. A failure sends `error` then `response.failed`.
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  private readonly id: string;
  private readonly newId: IdFactory;
  private sequence = 0;
  private started = false;
  private ended = false;
  /** Final items by output index; a slot stays empty while its item is open. */
  private readonly output: Array<ResponseOutputItem | undefined> = [];
  /** The open message or reasoning item (they never overlap). */
  private open: OpenText | null = null;
  /** Tool-call items not yet done, by canonical index. */
  private readonly calls = new Map<number, OpenCall>();

  constructor(private readonly meta: ResponsesMeta) {
    this.id = meta.id ?? randomWireId('resp_');
    this.newId = meta.newId ?? randomWireId;
  }

  /** `response.created` and `response.in_progress`; emitted by the first `encode` when not called before. */
  start(): string {
    if (this.started || this.ended) return '';
    this.started = true;
    const response = responseObject(this.meta, this.id, 'in_progress', []);
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  encode(event: CanonicalEvent): string {
    if (this.ended) return '';
    let out = this.start();
    switch (event.type) {
      case 'reasoning-delta': {
        if (this.open?.kind !== 'reasoning') out += this.closeOpen('completed') + this.openReasoning();
        const open = this.open!;
        open.text += event.text;
        out += this.emit('response.reasoning_summary_text.delta', {
          item_id: open.id,
          output_index: open.outputIndex,
          summary_index: 0,
          delta: event.text,
        });
        return out;
      }
      case 'reasoning-end': {
        if (this.open?.kind === 'reasoning')
          return out + this.closeReasoning({ signature: event.signature, redactedData: event.redactedData });
        if (event.signature === undefined && event.redactedData === undefined) return out;
        // A block with nothing to show (redacted thinking): an item added and done at once.
        out += this.closeOpen('completed');
        const outputIndex = this.output.length;
        const item = reasoningItem(
          this.newId('rs_'),
          compact({ text: '', signature: event.signature, redactedData: event.redactedData }),
          this.meta.echo.includeEncryptedReasoning,
        );
        this.output.push(item);
        return (
          out +
          this.emit('response.output_item.added', { output_index: outputIndex, item: withFields(item, { summary: [] }) }) +
          this.emit('response.output_item.done', { output_index: outputIndex, item })
        );
      }
      case 'text-delta': {
        if (event.text === '') return out;
        if (this.open?.kind !== 'message') out += this.closeOpen('completed') + this.openMessage();
        const open = this.open!;
        open.text += event.text;
        return (
          out +
          this.emit('response.output_text.delta', {
            item_id: open.id,
            output_index: open.outputIndex,
            content_index: 0,
            delta: event.text,
            logprobs: [],
          })
        );
      }
      case 'tool-call-start': {
        out += this.closeOpen('completed');
        const call: CanonicalToolCall = { id: event.id, name: event.name, arguments: '', kind: event.kind };
        const open: OpenCall = { outputIndex: this.output.length, id: this.newId(event.kind === 'custom' ? 'ctc_' : 'fc_'), call };
        this.output.push(undefined);
        this.calls.set(event.index, open);
        return (
          out +
          this.emit('response.output_item.added', {
            output_index: open.outputIndex,
            item: callItem(open.id, call, 'in_progress', this.meta.echo),
          })
        );
      }
      case 'tool-call-delta': {
        const open = this.calls.get(event.index);
        if (!open || event.argumentsDelta === '') return out;
        open.call.arguments += event.argumentsDelta;
        const where = { item_id: open.id, output_index: open.outputIndex, delta: event.argumentsDelta };
        return (
          out +
          (open.call.kind === 'custom'
            ? this.emit('response.custom_tool_call_input.delta', where)
            : this.emit('response.function_call_arguments.delta', where))
        );
      }
      case 'tool-call-end':
        return out + this.closeCall(event.index, 'completed');
      case 'mcp-item': {
        // The vendor reports MCP work when it is done: the item is added and done at once.
        const item = mcpOutputItem(event.item);
        if (!item) return out;
        out += this.closeOpen('completed');
        const outputIndex = this.output.length;
        this.output.push(item);
        const added =
          item.type === 'mcp_list_tools'
            ? withFields(item, { tools: [] })
            : item.type === 'mcp_call'
              ? withFields(item, { output: null, error: null, status: 'in_progress' as const })
              : item;
        return (
          out +
          this.emit('response.output_item.added', { output_index: outputIndex, item: added }) +
          this.emit('response.output_item.done', { output_index: outputIndex, item })
        );
      }
      case 'finish':
        return out + this.finish(event);
    }
  }

  /** A stream that fails after it began: an `error` event, then `response.failed` with what was delivered (docs/text.md, Faults). */
  encodeError(error: ApiError): string {
    if (this.ended) return '';
    const out = this.start();
    this.ended = true;
    const output = this.snapshotOutput();
    return (
      out +
      this.emit('error', {
        code: error.code,
        message: error.message,
        param: null,
        error: {
          type: error.status >= 500 ? 'server_error' : 'invalid_request_error',
          code: error.code,
          message: error.message,
          param: null,
        },
      }) +
      this.emit('response.failed', { response: responseObject(this.meta, this.id, 'failed', output, { error }) })
    );
  }

  private finish(event: FinishEvent): string {
    const state = terminalState(event);
    const status = itemStatus(state);
    let out = this.closeOpen(status);
    for (const index of [...this.calls.keys()]) out += this.closeCall(index, status);
    this.ended = true;
    const response = responseObject(
      this.meta,
      this.id,
      state.status,
      this.output.filter((item): item is ResponseOutputItem => item !== undefined),
      {
        usage: responsesUsage(event.usage),
        incompleteDetails: state.incompleteDetails,
      },
    );
    return out + this.emit(state.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  private openMessage(): string {
    const open: OpenText = { kind: 'message', outputIndex: this.output.length, id: this.newId('msg_'), text: '' };
    this.output.push(undefined);
    this.open = open;
    const where = { item_id: open.id, output_index: open.outputIndex, content_index: 0 };
    return (
      this.emit('response.output_item.added', { output_index: open.outputIndex, item: messageItem(open.id, '', 'in_progress') }) +
      this.emit('response.content_part.added', withFields(where, { part: outputTextPart('') }))
    );
  }

  private openReasoning(): string {
    const open: OpenText = { kind: 'reasoning', outputIndex: this.output.length, id: this.newId('rs_'), text: '' };
    this.output.push(undefined);
    this.open = open;
    return (
      this.emit('response.output_item.added', { output_index: open.outputIndex, item: { id: open.id, type: 'reasoning', summary: [] } }) +
      this.emit('response.reasoning_summary_part.added', {
        item_id: open.id,
        output_index: open.outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      })
    );
  }

  /** Closes the open message or reasoning item (a reasoning item closed this way is unsigned). */
  private closeOpen(status: ResponseItemStatus): string {
    if (this.open?.kind === 'reasoning') return this.closeReasoning({});
    if (this.open?.kind !== 'message') return '';
    const open = this.open;
    this.open = null;
    const item = messageItem(open.id, open.text, status);
    this.output[open.outputIndex] = item;
    const where = { item_id: open.id, output_index: open.outputIndex, content_index: 0 };
    return (
      this.emit('response.output_text.done', withFields(where, { text: open.text, logprobs: [] })) +
      this.emit('response.content_part.done', withFields(where, { part: outputTextPart(open.text) })) +
      this.emit('response.output_item.done', { output_index: open.outputIndex, item })
    );
  }

  private closeReasoning(end: { signature?: string; redactedData?: string }): string {
    const open = this.open!;
    this.open = null;
    const item = reasoningItem(open.id, compact({ text: open.text, ...end }), this.meta.echo.includeEncryptedReasoning);
    this.output[open.outputIndex] = item;
    const where = { item_id: open.id, output_index: open.outputIndex, summary_index: 0 };
    return (
      this.emit('response.reasoning_summary_text.done', withFields(where, { text: open.text })) +
      this.emit('response.reasoning_summary_part.done', withFields(where, { part: { type: 'summary_text', text: open.text } })) +
      this.emit('response.output_item.done', { output_index: open.outputIndex, item })
    );
  }

  private closeCall(index: number, status: ResponseItemStatus): string {
    const open = this.calls.get(index);
    if (!open) return '';
    this.calls.delete(index);
    const item = callItem(open.id, open.call, status, this.meta.echo);
    this.output[open.outputIndex] = item;
    const where = { item_id: open.id, output_index: open.outputIndex };
    const done =
      open.call.kind === 'custom'
        ? this.emit('response.custom_tool_call_input.done', withFields(where, { input: open.call.arguments }))
        : this.emit(
            'response.function_call_arguments.done',
            withFields(where, { name: (item as ResponseFunctionToolCall).name, arguments: open.call.arguments }),
          );
    return done + this.emit('response.output_item.done', { output_index: open.outputIndex, item });
  }

  /** Items delivered so far, open ones as incomplete (for `response.failed`). */
  private snapshotOutput(): ResponseOutputItem[] {
    const items = [...this.output];
    if (this.open) {
      items[this.open.outputIndex] =
        this.open.kind === 'message'
          ? messageItem(this.open.id, this.open.text, 'incomplete')
          : reasoningItem(this.open.id, { text: this.open.text }, false);
    }
    for (const open of this.calls.values()) items[open.outputIndex] = callItem(open.id, open.call, 'incomplete', this.meta.echo);
    return items.filter((item): item is ResponseOutputItem => item !== undefined);
  }

  private emit<T extends ResponseStreamEvent['type']>(type: T, payload: Payload<T>): string {
    return sseEvent(type, { type, sequence_number: this.sequence++, ...payload });
  }
}
