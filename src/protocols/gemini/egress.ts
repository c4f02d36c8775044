import { randomUUID } from 'node:crypto';
import type { CanonicalEvent, CanonicalMessage, CanonicalRequest, CanonicalToolChoice, CanonicalUsage, FinishReason } from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import type {
  GeminiContent,
  GeminiFinishReason,
  GeminiGenerateContentRequest,
  GeminiGenerateContentResponse,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiThinkingConfig,
  GeminiToolConfig,
  GeminiUsageMetadata,
} from './types';

/**
 * Egress codec for the Gemini API (`streamGenerateContent?alt=sse`).
 *
 * Decisions (see the README):
 * - Schemas go as full JSON Schema (`parametersJsonSchema`, `responseJsonSchema`), not the
 *   OpenAPI subset of `parameters`/`responseSchema`, so client schemas pass unchanged.
 * - Thinking: effort → thinkingBudget low 1024 / medium 8192 / high 24576 / extra_high 32768,
 *   clamped to the model family's range; `adaptive` → -1 (dynamic); `disabled` → 0, or the
 *   family's minimum where thinking cannot be turned off (2.5 Pro). Thought summaries are
 *   requested (`includeThoughts`) and streamed as reasoning.
 * - Thought signatures are not sent back: optional for 2.5 models, and the canonical
 *   reasoning block cannot tell a Gemini signature from another vendor's.
 * - Gemini has no tool-call ids: ids are minted here, and tool results find their function
 *   name through the id of the call in the conversation.
 * - `parallelToolCalls` has no Gemini control and is ignored.
 */

export const GEMINI_THINKING_BUDGETS = { low: 1024, medium: 8192, high: 24576, extra_high: 32768 } as const;

interface ThinkingRange {
  /** Budget that means "no thinking" (the minimum where it cannot be off). */
  off: number;
  min: number;
  max: number;
}

/** Published thinkingBudget ranges of the Gemini 2.5 families, most specific first. */
const THINKING_RANGES: ReadonlyArray<readonly [RegExp, ThinkingRange]> = [
  [/flash-lite/, { off: 0, min: 512, max: 24576 }],
  [/pro/, { off: 128, min: 128, max: 32768 }],
  [/.*/, { off: 0, min: 1, max: 24576 }],
];

const thinkingRange = (vendorModelId: string): ThinkingRange => THINKING_RANGES.find(([pattern]) => pattern.test(vendorModelId))![1];

/** `:streamGenerateContent?alt=sse`, or `:generateContent` when the client reads the answer whole. */
export function generateContentPath(vendorModelId: string, stream: boolean): string {
  // A catalog may spell the id the way Google's resource names do (`models/gemini-…`).
  const id = encodeURIComponent(vendorModelId.replace(/^models\//, ''));
  return stream ? `/v1beta/models/${id}:streamGenerateContent?alt=sse` : `/v1beta/models/${id}:generateContent`;
}

export function toGenerateContentRequest(request: CanonicalRequest): GeminiGenerateContentRequest {
  const { systemInstruction, contents } = toGeminiContents(request.messages);
  const body: GeminiGenerateContentRequest = { contents };
  if (systemInstruction) body.systemInstruction = { parts: [{ text: systemInstruction }] };

  const functions = request.tools.flatMap((tool) => (tool.type === 'function' ? [tool] : []));
  if (functions.length > 0) {
    body.tools = [
      {
        functionDeclarations: functions.map((tool) => ({
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
    if (request.toolChoice !== undefined) body.toolConfig = toGeminiToolConfig(request.toolChoice);
  }

  const config: GeminiGenerationConfig = { maxOutputTokens: request.maxOutputTokens };
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.stop && request.stop.length > 0) config.stopSequences = request.stop;
  if (request.presencePenalty !== undefined) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) config.frequencyPenalty = request.frequencyPenalty;
  const format = request.responseFormat;
  if (format && format.type !== 'text') {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema') config.responseJsonSchema = format.schema;
  }
  const thinking = toGeminiThinking(request);
  if (thinking) config.thinkingConfig = thinking;
  body.generationConfig = config;
  return body;
}

/** System messages → `systemInstruction`; user/tool → `user`, assistant → `model`, consecutive same-role turns merged. */
export function toGeminiContents(messages: readonly CanonicalMessage[]): { systemInstruction: string | undefined; contents: GeminiContent[] } {
  const callNames = new Map<string, string>();
  for (const message of messages) if (message.role === 'assistant') for (const call of message.toolCalls) callNames.set(call.id, call.name);

  const system: string[] = [];
  const contents: GeminiContent[] = [];
  const append = (role: 'user' | 'model', parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        if (message.content !== '') append('user', [{ text: message.content }]);
        break;
      case 'assistant': {
        const parts: GeminiPart[] = [];
        if (message.content !== '') parts.push({ text: message.content });
        for (const call of message.toolCalls) parts.push({ functionCall: { name: call.name, args: toolArgs(call.arguments, call.kind) } });
        append('model', parts);
        break;
      }
      case 'tool':
        append('user', [{ functionResponse: { name: callNames.get(message.toolCallId) ?? message.toolCallId, response: toolResponse(message.content, message.isError) } }]);
        break;
      case 'mcp':
        // Only tool listings get here (assertToolsSupported refuses the rest), and they need no server.
        break;
    }
  }
  return { systemInstruction: system.length > 0 ? system.join('\n\n') : undefined, contents };
}

function toolArgs(args: string, kind: 'function' | 'custom'): Record<string, unknown> {
  if (kind === 'custom') return { input: args };
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    return { input: args };
  }
}

/** functionResponse.response must be an object: a JSON object result is sent as is, anything else wrapped. */
function toolResponse(content: string, isError: boolean): Record<string, unknown> {
  if (isError) return { error: content };
  try {
    const parsed: unknown = JSON.parse(content);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // plain text
  }
  return { result: content };
}

export function toGeminiToolConfig(choice: CanonicalToolChoice): GeminiToolConfig {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
}

export function toGeminiThinking(request: CanonicalRequest): GeminiThinkingConfig | undefined {
  if (request.model.effort !== 'gemini-thinking') return undefined;
  const range = thinkingRange(request.model.vendorModelId);
  const { mode, effort, budgetTokens } = request.reasoning;
  if (mode === 'disabled') return { thinkingBudget: range.off };
  if (mode === 'adaptive' && budgetTokens === undefined) return { thinkingBudget: -1, includeThoughts: true };
  let wanted: number | undefined;
  if (budgetTokens !== undefined && mode === 'enabled') wanted = budgetTokens;
  else if (effort !== undefined || mode === 'enabled') wanted = GEMINI_THINKING_BUDGETS[effort ?? 'medium'];
  if (wanted === undefined) return { includeThoughts: true };
  const budget = Math.max(range.min, Math.min(wanted, range.max, request.maxOutputTokens));
  return { thinkingBudget: budget, includeThoughts: true };
}

// --- stream mapping -----------------------------------------------------------------------

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
export class GenerateContentStreamDecoder {
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
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new ProviderError(`${this.vendor} answered with something other than a JSON object.`, this.vendor);
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

function parseChunk(vendor: string, data: string): GeminiGenerateContentResponse & { error?: { message?: string; status?: string } } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProviderError(`${vendor} sent a stream chunk that is not JSON.`, vendor);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ProviderError(`${vendor} sent a stream chunk that is not a JSON object.`, vendor);
  const chunk = value as GeminiGenerateContentResponse & { error?: { message?: string; status?: string } };
  if (chunk.error) throw new ProviderError(`${vendor} reported an error mid-stream: ${chunk.error.message ?? chunk.error.status ?? 'unknown error'}`, vendor);
  return chunk;
}
