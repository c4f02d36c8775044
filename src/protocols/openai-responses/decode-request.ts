import type { CanonicalMessage } from '../../domain/generation/canonical';
import { DEFAULT_OUTPUT_TOKENS, mapReasoningEffort } from '../../domain/generation/rules';
import type { DecodedTextRequest } from '../../domain/generation/service';
import type { TextFieldNames } from '../../domain/generation/field-keys';
import { Fields, compact, fieldPath, preferFirst, refuseField } from '../decode-fields';
import { applyFieldPolicy, fieldsOf } from '../apply-field-policy';
import type { ResponseFormatTextConfig, ResponseObject, ResponsesReasoningEffort } from './types';
import { decodeInput } from './decode-input';
import { decodeTextFormat, decodeToolChoice, decodeTools, type NamespacedName } from './decode-tools';
import { TOP_LEVEL_HINT_NAMES } from '../field-policy';
import { RESPONSES_FIELD_POLICY, RESPONSES_POLICY } from './field-policy';

/**
 * Client side of the stateless `POST /v1/responses`: the request body → canonical request, plus
 * the request fields the `response` object echoes. Every refusal is a 400 naming the field
 * (docs/api.md).
 */

/** Every top-level field a request may carry (others are refused), from the field policy; the API document is built from this list. */
export const KNOWN_FIELDS = fieldsOf(RESPONSES_FIELD_POLICY);

/** The only `include` value with a meaning here: reasoning state for the next stateless turn. */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/** What the Responses API documents as used when a request sets no sampling value. */
const SAMPLING_DEFAULTS = { temperature: 1, top_p: 1, presence_penalty: 0, frequency_penalty: 0, top_logprobs: 0 } as const;

/** How a Responses request names what the canonical rules refuse. */
const RESPONSES_NAMES: TextFieldNames = {
  fields: {
    'text.outputLimit': 'max_output_tokens',
    'text.toolChoice': 'tool_choice',
    'text.toolChoiceName': 'tool_choice.name',
    'text.schema': 'text.format.schema',
    'text.thinkingBudget': 'the thinking budget',
    'text.prompt': 'input',
    'text.tools': 'tools',
    'text.mcpServers': 'tools',
    'text.mcpApproval': 'require_approval',
    'text.maxToolCalls': 'max_tool_calls',
  },
  requiredChoice: "'required'",
  toolNoun: { function: 'a function tool', custom: 'a custom tool' },
};

/** How Responses names each hint (verbosity is nested under `text`). */
const RESPONSES_HINT_NAMES = { ...TOP_LEVEL_HINT_NAMES, verbosity: 'text.verbosity' };

/** The request's settings as the `response` object repeats them: each one, with its default when the request set none. */
export type ResponseSettings = Pick<
  ResponseObject,
  | 'instructions'
  | 'tools'
  | 'tool_choice'
  | 'parallel_tool_calls'
  | 'text'
  | 'max_output_tokens'
  | 'max_tool_calls'
  | 'temperature'
  | 'top_p'
  | 'presence_penalty'
  | 'frequency_penalty'
  | 'top_logprobs'
  | 'reasoning'
  | 'metadata'
  | 'user'
  | 'safety_identifier'
  | 'prompt_cache_key'
>;

/** What the encoders need of the request. */
export interface ResponsesEcho {
  /** `max_output_tokens` as sent; the REST layer shows the clamped limit instead when it lowered it. MCP credentials are never echoed. */
  settings: ResponseSettings;
  /** `include` held `reasoning.encrypted_content`: reasoning items carry `encrypted_content`. */
  includeEncryptedReasoning: boolean;
  /** Tools of namespaces, by the name vendors are given: calls of them show the tool's own name and its namespace. */
  namespaces: ReadonlyMap<string, NamespacedName>;
}

export interface ResponsesIngress {
  decoded: DecodedTextRequest;
  /** How a Responses request names the fields the canonical rules refuse (field-keys.ts). */
  names: TextFieldNames;
  echo: ResponsesEcho;
}

/** Validates a Responses body; throws 400 `bad_request` naming the field. */
export function decodeResponsesIngress(body: unknown): ResponsesIngress {
  const req = Fields.body(body);
  applyFieldPolicy(req, RESPONSES_POLICY);

  const modelId = req.requiredString('model', { nonEmpty: true });
  const instructions = req.string('instructions');
  const tools = decodeTools(req);
  const messages: CanonicalMessage[] = [
    ...(instructions !== undefined ? [{ role: 'system' as const, content: instructions }] : []),
    ...decodeInput(req),
  ];
  const toolChoice = decodeToolChoice(req, tools);
  const text = req.object('text')?.allowOnly(['format', 'verbosity']);
  const format = text?.object('format');
  const verbosity = text?.oneOf('verbosity', ['low', 'medium', 'high']);
  const reasoning = req.object('reasoning')?.allowOnly(['effort', 'summary', 'generate_summary']);
  const effort = reasoning ? mapReasoningEffort(reasoning.raw('effort'), reasoning.field('effort')) : undefined;
  // Summaries are shown whenever the vendor gives reasoning text; the setting itself is echoed only.
  const summary =
    reasoning?.oneOf('summary', ['auto', 'concise', 'detailed']) ?? reasoning?.oneOf('generate_summary', ['auto', 'concise', 'detailed']);
  const include = req.strings('include') ?? [];
  include.forEach((value, i) => {
    if (value !== ENCRYPTED_REASONING)
      refuseField(fieldPath('include', i), `'${value}' is not supported; only '${ENCRYPTED_REASONING}' is`);
  });

  const temperature = req.number('temperature', { min: 0, max: 2 });
  const topP = req.number('top_p', { min: 0, max: 1 });
  const presencePenalty = req.number('presence_penalty', { min: -2, max: 2 });
  const frequencyPenalty = req.number('frequency_penalty', { min: -2, max: 2 });
  const parallelToolCalls = req.boolean('parallel_tool_calls');
  const user = req.string('user');
  const safetyIdentifier = req.string('safety_identifier');
  const maxOutputTokens = req.raw('max_output_tokens');
  const maxToolCalls = req.integer('max_tool_calls', { min: 0 });

  const decoded: DecodedTextRequest = {
    modelId,
    outputLimit: { value: maxOutputTokens, fallback: DEFAULT_OUTPUT_TOKENS },
    request: compact({
      messages,
      tools: tools.canonical,
      toolChoice: toolChoice?.canonical,
      parallelToolCalls,
      responseFormat: format ? decodeTextFormat(format) : undefined,
      temperature,
      topP,
      presencePenalty,
      frequencyPenalty,
      reasoning: effort ? { mode: 'default' as const, effort } : { mode: 'default' as const },
      // `safety_identifier` is OpenAI's successor of `user`; either reaches vendors as the end-user id.
      user: preferFirst(safetyIdentifier, user),
      verbosity,
      // Limits the vendor's own (MCP) tool calls: without MCP tools there is nothing to limit.
      maxToolCalls: tools.canonical.some((tool) => tool.type === 'mcp') ? maxToolCalls : undefined,
    }),
    stream: req.boolean('stream') ?? false,
    hintNames: RESPONSES_HINT_NAMES,
  };
  const settings: ResponseSettings = {
    instructions: instructions ?? null,
    tools: tools.echo,
    tool_choice: toolChoice?.echo ?? 'auto',
    parallel_tool_calls: parallelToolCalls ?? true,
    text: compact({ format: (format?.value as ResponseFormatTextConfig | undefined) ?? { type: 'text' as const }, verbosity }),
    max_output_tokens: typeof maxOutputTokens === 'number' ? maxOutputTokens : null,
    max_tool_calls: maxToolCalls ?? null,
    temperature: temperature ?? SAMPLING_DEFAULTS.temperature,
    top_p: topP ?? SAMPLING_DEFAULTS.top_p,
    presence_penalty: presencePenalty ?? SAMPLING_DEFAULTS.presence_penalty,
    frequency_penalty: frequencyPenalty ?? SAMPLING_DEFAULTS.frequency_penalty,
    top_logprobs: SAMPLING_DEFAULTS.top_logprobs,
    reasoning: { effort: (reasoning?.string('effort') as ResponsesReasoningEffort | undefined) ?? null, summary: summary ?? null },
    metadata: req.stringMap('metadata') ?? {},
    user: user ?? null,
    safety_identifier: safetyIdentifier ?? null,
    prompt_cache_key: req.string('prompt_cache_key') ?? null,
  };
  return {
    decoded,
    names: RESPONSES_NAMES,
    echo: { settings, includeEncryptedReasoning: include.includes(ENCRYPTED_REASONING), namespaces: tools.namespaces },
  };
}

/** The canonical request alone (see `decodeResponsesIngress` for the echoed fields). */
export function decodeResponsesRequest(body: unknown): DecodedTextRequest {
  return decodeResponsesIngress(body).decoded;
}
