/**
 * The sandbox text vendor: deterministic, offline, no key. It streams like a real vendor
 * (one delta per word), so every part of the pipeline — streaming, partial delivery,
 * settlement, reasoning estimates, refusals, failures — can be exercised without a network.
 *
 * What it answers (from the LAST message):
 * - after a tool result: `Tool <name> returned: <content>`;
 * - otherwise the last user message echoed, magic words removed (empty: a fixed sentence);
 * - with `responseFormat` json_object: `{"answer": "<that text>"}`; json_schema: an object
 *   built from the schema (strings "sandbox", numbers 1, booleans true, enums' first value);
 * - with toolChoice `required` or `{name}` (last message from the user): a call of that tool
 *   (the first offered tool for `required`); with `auto`, a call of the first offered tool whose
 *   subject the message names (a word of its name, as `weather` in `get_weather`: mentionsSubject).
 *
 * Magic words, anywhere in the last user message (case-insensitive):
 *   [sandbox:fail]                  ProviderError before any output (vendor status 500)
 *   [sandbox:cut]                   about half of the answer, then ProviderError (stream cut)
 *   [sandbox:refuse]                short refusal text, finish content_filter with refusal true
 *   [sandbox:reason=N]              N reasoning tokens streamed as reasoning deltas, reported as reasoningTokens
 *   [sandbox:hidden-reasoning=N]    N reasoning tokens billed in outputTokens but neither shown nor
 *                                   reported (reasoningTokens null): exercises the pipeline's estimate
 *   [sandbox:tool=NAME]             a call of the offered tool NAME (arguments built from its schema);
 *                                   ignored after a tool result, so tool loops end
 *   [sandbox:cached=N]              N of the input tokens reported as cached (capped at the input)
 *   [sandbox:delay=MS]              waits MS milliseconds before each delta (client-disconnect tests)
 *
 * Models with an effort setting (`sandbox/reasoner`) reason without magic words: low 16,
 * medium 64 (also the default), high 256, extra_high 1024 tokens, capped by a thinking budget;
 * reasoning disabled: none.
 *
 * Token counts: OpenAI's o200k_base tokenizer (`gpt-tokenizer`). Output = the sum of the
 * streamed pieces' counts (+ hidden reasoning, + tool name and arguments); input = each
 * message's text + 3 per message + 3 per request (OpenAI's chat framing). The output limit
 * counts reasoning first: reaching it ends the answer with finish `length`. Like a real vendor
 * it refuses a prompt over the model's context (HTTP 400, OpenAI's wording) before answering:
 * it never bills more input than its context holds.
 */
import { countTokensExactly } from '../domain/billing/estimate';
import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type {
  CanonicalRequest,
  CanonicalTool,
  JsonSchema,
  ProviderEvent,
  ReasoningEffort,
  TextProvider,
  VendorHints,
} from '../domain/generation/canonical';
import { ProviderError } from '../domain/generation/errors';
import { withFields } from '../domain/shared/objects';

export const SANDBOX_REASONING_TOKENS: Readonly<Record<ReasoningEffort, number>> = { low: 16, medium: 64, high: 256, extra_high: 1024 };
export const SANDBOX_FALLBACK_ANSWER = 'This is the Tollgate sandbox: a deterministic offline model.';
export const SANDBOX_REFUSAL = "I can't help with that request.";

const REASONING_WORDS = ['Let', ' me', ' think', ' about', ' this', ' step', ' by', ' step', '.'];
const MAGIC = /\[sandbox:([a-z-]+)(?:=([^\]\s]*))?\]/gi;

export interface SandboxOptions {
  /** Delay before each delta, in ms (default 0); `[sandbox:delay=MS]` overrides it. */
  delayMs?: number;
}

/** The magic words found in a message. */
export interface SandboxDirectives {
  fail: boolean;
  cut: boolean;
  refuse: boolean;
  reason?: number;
  hiddenReasoning?: number;
  tool?: string;
  cached?: number;
  delayMs?: number;
}

export function parseDirectives(text: string): { directives: SandboxDirectives; rest: string } {
  const directives: SandboxDirectives = { fail: false, cut: false, refuse: false };
  const count = (value: string | undefined) => {
    const n = Number(value);
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  };
  for (const match of text.matchAll(MAGIC)) {
    const [, name, value] = match;
    switch (name!.toLowerCase()) {
      case 'fail':
        directives.fail = true;
        break;
      case 'cut':
        directives.cut = true;
        break;
      case 'refuse':
        directives.refuse = true;
        break;
      case 'reason':
        directives.reason = count(value);
        break;
      case 'hidden-reasoning':
        directives.hiddenReasoning = count(value);
        break;
      case 'tool':
        if (value) directives.tool = value;
        break;
      case 'cached':
        directives.cached = count(value);
        break;
      case 'delay':
        directives.delayMs = count(value);
        break;
    }
  }
  return { directives, rest: text.replace(MAGIC, ' ').replace(/\s+/g, ' ').trim() };
}

export const sandboxTokens = (text: string): number => countTokensExactly(text);

export function sandboxInputTokens(request: CanonicalRequest): number {
  let total = 3;
  for (const message of request.messages) {
    total += 3 + sandboxTokens(message.role === 'mcp' ? JSON.stringify(message.item) : message.content);
    if (message.role === 'assistant')
      for (const call of message.toolCalls) total += sandboxTokens(call.name) + sandboxTokens(call.arguments);
  }
  return total;
}

/** A value that satisfies simple JSON schemas, deterministically. */
export function sampleFromSchema(schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema || depth > 8) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants) && variants.length > 0) return sampleFromSchema(variants[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return 'sandbox';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return [];
    default: {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, sampleFromSchema(value, depth + 1)]));
    }
  }
}

type OfferedTool = Exclude<CanonicalTool, { type: 'mcp' }>;

const NO_HINTS: VendorHints = new Set();

export class SandboxProvider implements TextProvider {
  constructor(private readonly options: SandboxOptions = {}) {}

  /** Custom tools are answered like function tools; MCP servers need a vendor that calls them, and the sandbox calls nothing. */
  readonly capabilities: VendorCapabilities = { customTools: true, mcpServers: false, mcpCalls: false, mcpApprovals: false };

  /** Its answers are deterministic, written from the prompt alone: it takes no hint, so every one sent is named as dropped. */
  hints(): VendorHints {
    return NO_HINTS;
  }

  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    return this.stream(request, signal);
  }

  /** The sandbox's own count: the input tokens its answer would report. */
  countTokens(request: CanonicalRequest): Promise<number> {
    return Promise.resolve(sandboxInputTokens(request));
  }

  private async *stream(request: CanonicalRequest, signal: Cancellation): AsyncGenerator<ProviderEvent, void, undefined> {
    const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
    const { directives, rest } = parseDirectives(lastUser?.content ?? '');
    const last = request.messages[request.messages.length - 1];
    const afterToolResult = last?.role === 'tool';
    const delayMs = directives.delayMs ?? this.options.delayMs ?? 0;
    const inputTokens = sandboxInputTokens(request);
    const context = request.model.contextLength;
    if (inputTokens > context) {
      throw new ProviderError(
        `sandbox answered HTTP 400: This model's maximum context length is ${context} tokens. However, your messages resulted in ${inputTokens} tokens. Please reduce the length of the messages.`,
        'sandbox',
        400,
      );
    }
    const usageBase = { inputTokens, cachedInputTokens: Math.min(directives.cached ?? 0, inputTokens) };
    const limit = request.maxOutputTokens;
    let used = 0;

    const pace = async () => {
      if (signal.aborted) throw cancelled();
      if (delayMs > 0) await signal.delay(delayMs, cancelled);
    };

    // Like Anthropic, the prompt's usage comes before the answer.
    yield { type: 'input-usage', usage: usageBase };
    await pace();
    if (directives.fail) throw new ProviderError('The sandbox vendor failed (simulated by [sandbox:fail]).', 'sandbox', 500);

    // Reasoning first: it consumes the output limit before any text, as at real vendors.
    const reasoningWanted = directives.reason ?? this.effortReasoning(request);
    let reasoningTokens = 0;
    let exhausted = false;
    if (reasoningWanted > 0) {
      for (let i = 0; reasoningTokens < reasoningWanted; i++) {
        const word = i > 0 && i % REASONING_WORDS.length === 0 ? ` ${REASONING_WORDS[0]}` : REASONING_WORDS[i % REASONING_WORDS.length]!;
        const tokens = sandboxTokens(word);
        if (used + tokens > limit) {
          exhausted = true;
          break;
        }
        await pace();
        used += tokens;
        reasoningTokens += tokens;
        yield { type: 'reasoning-delta', text: word };
      }
      yield { type: 'reasoning-end', signature: `sandbox-signature-${reasoningTokens}` };
    }
    const hidden = directives.hiddenReasoning ?? 0;
    const hiddenUsed = Math.min(hidden, limit - used);
    used += hiddenUsed;
    const usage = () => withFields(usageBase, { outputTokens: used, reasoningTokens: hidden > 0 ? null : reasoningTokens });
    if (exhausted || hiddenUsed < hidden || used >= limit) {
      yield { type: 'finish', reason: 'length', refusal: false, usage: usage() };
      return;
    }

    if (directives.refuse) {
      for (const piece of words(SANDBOX_REFUSAL)) {
        await pace();
        used += sandboxTokens(piece);
        yield { type: 'text-delta', text: piece };
      }
      yield { type: 'finish', reason: 'content_filter', refusal: true, usage: usage() };
      return;
    }

    const tool = afterToolResult ? undefined : this.toolToCall(request, directives.tool, rest);
    if (tool) {
      const args = tool.type === 'custom' ? 'sandbox input' : JSON.stringify(sampleFromSchema(tool.parameters) ?? {});
      await pace();
      yield { type: 'tool-call-start', index: 0, id: `call_sandbox_${sandboxTokens(args)}_0`, name: tool.name, kind: tool.type };
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        if (part === '') continue;
        await pace();
        yield { type: 'tool-call-delta', index: 0, argumentsDelta: part };
      }
      yield { type: 'tool-call-end', index: 0 };
      used += sandboxTokens(tool.name) + sandboxTokens(args);
      yield { type: 'finish', reason: 'tool_calls', refusal: false, usage: usage() };
      return;
    }

    const pieces = this.answerPieces(request, afterToolResult, rest);
    const cutAt = directives.cut ? Math.max(1, Math.floor(pieces.length / 2)) : Infinity;
    for (let i = 0; i < pieces.length; i++) {
      if (i >= cutAt) throw new ProviderError('The sandbox vendor stream was cut mid-way (simulated by [sandbox:cut]).', 'sandbox');
      const tokens = sandboxTokens(pieces[i]!);
      if (used + tokens > limit) {
        yield { type: 'finish', reason: 'length', refusal: false, usage: usage() };
        return;
      }
      await pace();
      used += tokens;
      yield { type: 'text-delta', text: pieces[i]! };
    }
    if (directives.cut) throw new ProviderError('The sandbox vendor stream was cut mid-way (simulated by [sandbox:cut]).', 'sandbox');
    yield { type: 'finish', reason: 'stop', refusal: false, usage: usage() };
  }

  private effortReasoning(request: CanonicalRequest): number {
    if (request.model.effort === 'none' || request.reasoning.mode === 'disabled') return 0;
    const tokens = SANDBOX_REASONING_TOKENS[request.reasoning.effort ?? 'medium'];
    return request.reasoning.budgetTokens !== undefined ? Math.min(tokens, request.reasoning.budgetTokens) : tokens;
  }

  private toolToCall(request: CanonicalRequest, named: string | undefined, userText: string): OfferedTool | undefined {
    const offered = request.tools.filter((tool): tool is OfferedTool => tool.type !== 'mcp');
    if (offered.length === 0 || request.toolChoice === 'none') return undefined;
    const choice = request.toolChoice;
    if (typeof choice === 'object') return offered.find((tool) => tool.name === choice.name);
    if (named) {
      const tool = offered.find((candidate) => candidate.name === named);
      if (tool) return tool;
    }
    return choice === 'required' ? offered[0] : offered.find((tool) => mentionsSubject(userText, tool.name));
  }

  private answerPieces(request: CanonicalRequest, afterToolResult: boolean, userText: string): string[] {
    let text = userText || SANDBOX_FALLBACK_ANSWER;
    const last = request.messages[request.messages.length - 1];
    if (afterToolResult && last?.role === 'tool') {
      const call = request.messages
        .flatMap((message) => (message.role === 'assistant' ? message.toolCalls : []))
        .find((c) => c.id === last.toolCallId);
      text = `Tool ${call?.name ?? last.toolCallId} returned: ${last.content}`;
    }
    const format = request.responseFormat;
    if (format?.type === 'json_object') return chunks(JSON.stringify({ answer: text }), 12);
    if (format?.type === 'json_schema') return chunks(JSON.stringify(sampleFromSchema(format.schema)), 12);
    return words(text);
  }
}

/** Verbs and words too common in tool names to say what a tool is about. */
const GENERIC_TOOL_WORDS = new Set([
  'call',
  'create',
  'delete',
  'fetch',
  'find',
  'list',
  'make',
  'query',
  'read',
  'search',
  'send',
  'tool',
  'update',
  'write',
]);

/**
 * Whether the user's text names what a tool is about, as a model would take it: a word of the
 * tool's name (split at `_`, `-` and case changes) of 4 letters or more, not a generic verb,
 * appears in the text as a word (`get_weather` for "What's the weather like?").
 */
export function mentionsSubject(text: string, toolName: string): boolean {
  const subjects = toolName
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_-]+/)
    .filter((word) => word.length >= 4 && !GENERIC_TOOL_WORDS.has(word));
  const words = new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  return subjects.some((subject) => words.has(subject));
}

const cancelled = () => new ProviderError('The request to sandbox was cancelled by the client.', 'sandbox', null, 'client_cancelled');

/** Words with their leading whitespace (as tokenizers split them): joined, they give the text back exactly. */
const words = (text: string): string[] => {
  const out = text.match(/\s*\S+/g) ?? [];
  const trailing = /\s+$/.exec(text)?.[0];
  if (trailing && out.length > 0) out[out.length - 1] += trailing;
  return out;
};

const chunks = (text: string, size: number): string[] => {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
};
