import { randomHex } from '../domain/shared/ids';
import type {
  AppliedContextEdit,
  CanonicalEvent,
  CanonicalMcpItem,
  CanonicalReasoningBlock,
  CanonicalToolCall,
  CanonicalUsage,
  FinishReason,
} from '../domain/generation/canonical';

/**
 * What the three ingress encoders share: the folded result of a generation (for non-streaming
 * answers) and the facts every answer carries (id, model, time).
 */

export type FinishEvent = Extract<CanonicalEvent, { type: 'finish' }>;

/** A whole generation, folded from its canonical events. */
export interface CollectedResult {
  /** The visible answer: every text delta, in order. */
  text: string;
  /** Closed reasoning blocks in order (a block still open at the finish is closed unsigned). */
  reasoning: CanonicalReasoningBlock[];
  /** Tool calls in the order they started. */
  toolCalls: CanonicalToolCall[];
  /** MCP work the vendor did or asks approval for, in order. */
  mcpItems: CanonicalMcpItem[];
  finish: {
    reason: FinishReason;
    refusal: boolean;
    usage: CanonicalUsage;
    stopSequence?: string;
    appliedContextEdits?: AppliedContextEdit[];
  };
}

/** Makes the id of a wire object from a prefix that includes its separator (`resp_`, `chatcmpl-`). */
export type IdFactory = (prefix: string) => string;

/** Random ids of the vendors' look (prefix + 24 hex digits). */
export const randomWireId: IdFactory = (prefix) => `${prefix}${randomHex(12)}`;

/** Facts about the answer that the events do not carry. */
export interface AnswerMeta {
  /** Id of the answer object (`chatcmpl-…`, `resp_…`, `msg_…`); generated when absent. */
  id?: string;
  /** The service model id (`openai/o4-mini`), never the id the client sent (which `x-service-model-routed-from` reports; docs/text.md). */
  model: string;
  /** Unix seconds. */
  created: number;
  /** The output limit used when the one sent was above the model's maximum (Responses echoes it). */
  clampedOutputLimit?: number;
  /** Ids of objects inside the answer (items, tool calls); tests inject a deterministic one. */
  newId?: IdFactory;
}

/** Folds canonical events as they arrive; `result()` once the finish event was seen. */
export class EventCollector {
  private text = '';
  private readonly reasoning: CanonicalReasoningBlock[] = [];
  private openReasoning: string | null = null;
  /** Made on the first tool call: most answers have none. */
  private toolCalls: Map<number, CanonicalToolCall> | null = null;
  private readonly mcpItems: CanonicalMcpItem[] = [];
  private finish: CollectedResult['finish'] | null = null;

  push(event: CanonicalEvent): void {
    switch (event.type) {
      case 'text-delta':
        this.text += event.text;
        break;
      case 'reasoning-delta':
        this.openReasoning = (this.openReasoning ?? '') + event.text;
        break;
      case 'reasoning-end':
        if (this.openReasoning !== null || event.signature !== undefined || event.redactedData !== undefined) {
          this.reasoning.push(reasoningBlock(this.openReasoning ?? '', event.signature, event.redactedData));
        }
        this.openReasoning = null;
        break;
      case 'tool-call-start':
        (this.toolCalls ??= new Map()).set(event.index, { id: event.id, name: event.name, arguments: '', kind: event.kind });
        break;
      case 'tool-call-delta': {
        this.toolCalls ??= new Map();
        const call = this.toolCalls.get(event.index);
        // A delta for a call that never started is a provider defect: keep the arguments anyway.
        if (call) call.arguments += event.argumentsDelta;
        else this.toolCalls.set(event.index, { id: '', name: '', arguments: event.argumentsDelta, kind: 'function' });
        break;
      }
      case 'tool-call-end':
        break;
      case 'mcp-item':
        this.mcpItems.push(event.item);
        break;
      case 'finish':
        if (this.openReasoning !== null) {
          this.reasoning.push({ text: this.openReasoning });
          this.openReasoning = null;
        }
        this.finish = {
          reason: event.reason,
          refusal: event.refusal,
          usage: event.usage,
          ...(event.stopSequence !== undefined ? { stopSequence: event.stopSequence } : {}),
          ...(event.appliedContextEdits !== undefined ? { appliedContextEdits: event.appliedContextEdits } : {}),
        };
        break;
    }
  }

  result(): CollectedResult {
    // The provider port promises a finish event last on success; its absence is a defect.
    if (!this.finish) throw new Error('The generation ended without a finish event.');
    return {
      text: this.text,
      reasoning: [...this.reasoning],
      toolCalls: this.toolCalls ? [...this.toolCalls.values()] : [],
      mcpItems: [...this.mcpItems],
      finish: this.finish,
    };
  }
}

function reasoningBlock(text: string, signature: string | undefined, redactedData: string | undefined): CanonicalReasoningBlock {
  return {
    text,
    ...(signature !== undefined ? { signature } : {}),
    ...(redactedData !== undefined ? { redactedData } : {}),
  };
}

/** Folds a finished list of events. */
export function collectEvents(events: Iterable<CanonicalEvent>): CollectedResult {
  const collector = new EventCollector();
  for (const event of events) collector.push(event);
  return collector.result();
}

/** Folds a generation's event stream (rethrows its ProviderError). */
export async function collectStream(events: AsyncIterable<CanonicalEvent>): Promise<CollectedResult> {
  const collector = new EventCollector();
  for await (const event of events) collector.push(event);
  return collector.result();
}

/** Reasoning tokens to report: the pipeline has already put its estimate in when the vendor gave none. */
export const reportedReasoningTokens = (usage: CanonicalUsage): number => usage.reasoningTokens ?? 0;

/** Parses tool arguments for formats that carry them as a JSON object (Messages `tool_use.input`). */
export function parseToolArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through: a model's malformed arguments must not fail the whole answer
  }
  return {};
}
