import { randomUUID } from 'node:crypto';
import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import { parseSsePayload, type StreamDecoder } from '../streams';
import type { GeminiFinishReason, GeminiGenerateContentResponse, GeminiPart, GeminiUsageMetadata } from './types';

/**
 * Vendor side of Gemini: its GenerateContentResponse chunks (streamed, or one whole answer) →
 * canonical events, finish reason and usage.
 */

const SAFETY_REASONS: ReadonlySet<string> = new Set(['SAFETY', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'RECITATION', 'IMAGE_SAFETY']);

export function geminiFinishReason(reason: GeminiFinishReason, hadToolCalls: boolean): { reason: FinishReason; refusal: boolean } {
  if (reason === 'MAX_TOKENS') return { reason: 'length', refusal: false };
  if (SAFETY_REASONS.has(reason)) return { reason: 'content_filter', refusal: true };
  return { reason: hadToolCalls ? 'tool_calls' : 'stop', refusal: false };
}

/** Gemini's output count excludes thoughts; canonical output includes them. */
export function geminiUsageToCanonical(usage: GeminiUsageMetadata): CanonicalUsage {
  const thoughts = usage.thoughtsTokenCount ?? 0;
  return {
    inputTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    cachedInputTokens: usage.cachedContentTokenCount ?? 0,
    outputTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    // Gemini reports thoughts whenever there were any: absent means none.
    reasoningTokens: thoughts,
  };
}

export const GEMINI_REFUSAL_TEXT = 'The request was blocked by the model provider\u2019s safety filters.';

/**
 * Turns Gemini stream chunks (each a GenerateContentResponse with cumulative usage) into
 * canonical events. Gemini has no end marker: the chunk carrying `finishReason` (or a
 * prompt `blockReason`) is the last; a stream that ends without one was cut.
 */
export class GenerateContentStreamDecoder implements StreamDecoder {
  private reasoningOpen = false;
  private toolCallCount = 0;
  private wroteText = false;
  private usage: GeminiUsageMetadata | null = null;
  private pending: { reason: FinishReason; refusal: boolean } | null = null;
  private finished = false;

  constructor(private readonly vendor: string) {}

  get done(): boolean {
    return this.finished;
  }

  push(data: string): CanonicalEvent[] {
    return this.pushChunk(parseChunk(this.vendor, data));
  }

  /** A non-streamed answer (`generateContent`): the same shape as one stream chunk carrying everything. */
  pushWhole(answer: unknown): CanonicalEvent[] {
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw new ProviderError(`${this.vendor} answered with something other than a JSON object.`, this.vendor);
    return [...this.pushChunk(answer as GeminiGenerateContentResponse), ...this.end()];
  }

  private pushChunk(chunk: GeminiGenerateContentResponse): CanonicalEvent[] {
    if (this.finished) return [];
    const events: CanonicalEvent[] = [];
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    const blocked = chunk.promptFeedback?.blockReason;
    if (blocked && blocked !== 'BLOCK_REASON_UNSPECIFIED' && !chunk.candidates?.length) {
      this.pending = { reason: 'content_filter', refusal: true };
    }
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.part(part, events);
    if (candidate?.finishReason && candidate.finishReason !== 'FINISH_REASON_UNSPECIFIED') {
      this.pending = geminiFinishReason(candidate.finishReason, this.toolCallCount > 0);
    }
    if (this.pending && chunk.usageMetadata) this.finish(events);
    return events;
  }

  end(): CanonicalEvent[] {
    if (this.finished) return [];
    if (!this.pending) throw new ProviderError(`${this.vendor} stream ended before the answer was complete.`, this.vendor);
    if (!this.usage) throw new ProviderError(`${this.vendor} ended its stream without reporting token usage.`, this.vendor);
    const events: CanonicalEvent[] = [];
    this.finish(events);
    return events;
  }

  private part(part: GeminiPart, events: CanonicalEvent[]): void {
    if (part.thought) {
      if (part.text) {
        this.reasoningOpen = true;
        events.push({ type: 'reasoning-delta', text: part.text });
      }
      return;
    }
    if (typeof part.text === 'string' && part.text !== '') {
      this.closeReasoning(events);
      this.wroteText = true;
      events.push({ type: 'text-delta', text: part.text });
    }
    if (part.functionCall) {
      this.closeReasoning(events);
      // Gemini delivers each call whole: start, all arguments, end.
      const index = this.toolCallCount++;
      const id = part.functionCall.id ?? `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      events.push({ type: 'tool-call-start', index, id, name: part.functionCall.name, kind: 'function' });
      events.push({ type: 'tool-call-delta', index, argumentsDelta: JSON.stringify(part.functionCall.args ?? {}) });
      events.push({ type: 'tool-call-end', index });
    }
  }

  private closeReasoning(events: CanonicalEvent[]): void {
    if (!this.reasoningOpen) return;
    this.reasoningOpen = false;
    events.push({ type: 'reasoning-end' });
  }

  private finish(events: CanonicalEvent[]): void {
    const pending = this.pending!;
    this.closeReasoning(events);
    if (pending.refusal && !this.wroteText) events.push({ type: 'text-delta', text: GEMINI_REFUSAL_TEXT });
    // A STOP chunk may precede the function-call parts' count being final; recompute.
    const reason = pending.reason === 'stop' && this.toolCallCount > 0 ? 'tool_calls' : pending.reason;
    this.finished = true;
    events.push({ type: 'finish', reason, refusal: pending.refusal, usage: geminiUsageToCanonical(this.usage ?? {}) });
  }
}

/** A stream chunk, which may instead carry the error that ended the stream. */
type GeminiChunk = GeminiGenerateContentResponse & { error?: { message?: string; status?: string } };

function parseChunk(vendor: string, data: string): GeminiChunk {
  const chunk = parseSsePayload<GeminiChunk>(vendor, data, 'chunk');
  if (chunk.error)
    throw new ProviderError(
      `${vendor} reported an error mid-stream: ${chunk.error.message ?? chunk.error.status ?? 'unknown error'}`,
      vendor,
    );
  return chunk;
}
