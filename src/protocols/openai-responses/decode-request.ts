import type { CanonicalMessage } from '../../domain/generation/canonical';
import { DEFAULT_OUTPUT_TOKENS, mapReasoningEffort } from '../../domain/generation/rules';
import type { DecodedTextRequest } from '../../domain/generation/service';
import type { WireFieldNames } from '../../domain/generation/validate';
import { Fields, compact, fieldListOf, fieldPath, preferFirst, refuseField } from '../decode-fields';
import type { ResponseCreateParams } from './types';
import type {
  ResponseFormatTextConfig,
  ResponseObject,
  ResponseTextConfig,
  ResponseTool,
  ResponseToolChoice,
  ResponsesReasoningEffort,
} from './types';
import { decodeInput } from './decode-input';
import { decodeTextFormat, decodeToolChoice, decodeTools } from './decode-tools';

/**
 * Client side of the stateless `POST /v1/responses`: the request body → canonical request, plus
 * the request fields the `response` object echoes. Every refusal is a 400 naming the field
 * (docs/api.md).
 */

/** Every top-level field the decoder reads (others are refused), exactly the request type's; the API document is built from this list. */
export const KNOWN_FIELDS = fieldListOf<ResponseCreateParams>()([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'max_output_tokens',
  'max_tool_calls', 'reasoning', 'stream', 'stream_options', 'store', 'include', 'temperature', 'top_p',
  'top_logprobs', 'user', 'safety_identifier', 'metadata', 'truncation', 'service_tier', 'prompt_cache_key',
  'prompt_cache_retention', 'previous_response_id', 'conversation', 'prompt', 'background', 'context_management',
]);

const STATELESS = 'is not supported: /v1/responses is stateless; send the whole conversation in input with store: false';

/** The only `include` value with a meaning here: reasoning state for the next stateless turn. */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

const MAX_METADATA_PAIRS = 16;

/** Where the canonical rules' refusals point in a Responses request. */
const RESPONSES_FIELDS: WireFieldNames = {
  requiredToolChoice: { field: 'tool_choice', value: "'required'" },
  namedToolChoice: { field: 'tool_choice.name', noun: 'a function tool' },
  schema: 'text.format.schema',
  prompt: 'input',
};
const RESPONSES_CUSTOM_CHOICE_FIELDS: WireFieldNames = { ...RESPONSES_FIELDS, namedToolChoice: { field: 'tool_choice.name', noun: 'a custom tool' } };

/** Request fields the `response` object repeats back (the SDK types them as always present). */
export interface ResponsesEcho {
  instructions: string | null;
  /** As declared, without MCP credentials (`authorization`, `headers` are never echoed). */
  tools: ResponseTool[];
  toolChoice: ResponseToolChoice;
  parallelToolCalls: boolean;
  text: ResponseTextConfig;
  /** The limit as sent; the REST layer may put the clamped value here. */
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  reasoning: ResponseObject['reasoning'];
  metadata: Record<string, string>;
  user: string | null;
  /** `include` held `reasoning.encrypted_content`: reasoning items carry `encrypted_content`. */
  includeEncryptedReasoning: boolean;
}

export interface ResponsesIngress {
  decoded: DecodedTextRequest;
  echo: ResponsesEcho;
}

/** Validates a Responses body; throws 400 `bad_request` naming the field. */
export function decodeResponsesIngress(body: unknown): ResponsesIngress {
  const req = Fields.body(body).allowOnly(KNOWN_FIELDS);
  refuseUnsupported(req);

  const modelId = req.requiredString('model', { nonEmpty: true });
  const instructions = req.string('instructions');
  const messages: CanonicalMessage[] = [...(instructions !== undefined ? [{ role: 'system' as const, content: instructions }] : []), ...decodeInput(req)];
  const tools = decodeTools(req);
  const toolChoice = decodeToolChoice(req);
  const text = req.object('text')?.allowOnly(['format', 'verbosity']).refuseIfSet(['verbosity']);
  const format = text?.object('format');
  const reasoning = req.object('reasoning')?.allowOnly(['effort', 'summary', 'generate_summary']);
  const effort = reasoning ? mapReasoningEffort(reasoning.raw('effort'), reasoning.field('effort')) : undefined;
  // Summaries are shown whenever the vendor gives reasoning text; the setting itself is echoed only.
  const summary = reasoning?.oneOf('summary', ['auto', 'concise', 'detailed']) ?? reasoning?.oneOf('generate_summary', ['auto', 'concise', 'detailed']);
  const metadata = req.stringMap('metadata');
  if (metadata && Object.keys(metadata).length > MAX_METADATA_PAIRS) refuseField('metadata', `must hold at most ${MAX_METADATA_PAIRS} pairs`);
  const include = req.strings('include') ?? [];
  include.forEach((value, i) => {
    if (value !== ENCRYPTED_REASONING) refuseField(fieldPath('include', i), `'${value}' is not supported; only '${ENCRYPTED_REASONING}' is`);
  });
  // Accepted and ignored: cache routing hints and the obfuscation switch.
  req.string('prompt_cache_key');
  req.oneOf('prompt_cache_retention', ['in-memory', '24h']);
  req.object('stream_options')?.allowOnly(['include_obfuscation']).boolean('include_obfuscation');

  const temperature = req.number('temperature', { min: 0, max: 2 });
  const topP = req.number('top_p', { min: 0, max: 1 });
  const parallelToolCalls = req.boolean('parallel_tool_calls');
  const user = preferFirst(req.string('safety_identifier'), req.string('user'));
  const maxOutputTokens = req.raw('max_output_tokens');

  const decoded: DecodedTextRequest = {
    modelId,
    outputLimit: { value: maxOutputTokens, field: 'max_output_tokens', fallback: DEFAULT_OUTPUT_TOKENS },
    request: compact({
      messages,
      tools: tools.map((t) => t.canonical),
      toolChoice: toolChoice?.canonical,
      parallelToolCalls,
      responseFormat: format ? decodeTextFormat(format) : undefined,
      temperature,
      topP,
      reasoning: effort ? { mode: 'default' as const, effort } : { mode: 'default' as const },
      user,
    }),
    stream: req.boolean('stream') ?? false,
    fields: typeof toolChoice?.canonical === 'object' && toolChoice.canonical.kind === 'custom' ? RESPONSES_CUSTOM_CHOICE_FIELDS : RESPONSES_FIELDS,
  };
  const echo: ResponsesEcho = {
    instructions: instructions ?? null,
    tools: tools.map((t) => t.echo),
    toolChoice: toolChoice?.echo ?? 'auto',
    parallelToolCalls: parallelToolCalls ?? true,
    text: { format: (format?.value as ResponseFormatTextConfig | undefined) ?? { type: 'text' } },
    maxOutputTokens: typeof maxOutputTokens === 'number' ? maxOutputTokens : null,
    temperature: temperature ?? null,
    topP: topP ?? null,
    reasoning: { effort: (reasoning?.string('effort') as ResponsesReasoningEffort | undefined) ?? null, summary: summary ?? null },
    metadata: metadata ?? {},
    user: user ?? null,
    includeEncryptedReasoning: include.includes(ENCRYPTED_REASONING),
  };
  return { decoded, echo };
}

/** The canonical request alone (see `decodeResponsesIngress` for the echoed fields). */
export function decodeResponsesRequest(body: unknown): DecodedTextRequest {
  return decodeResponsesIngress(body).decoded;
}

function refuseUnsupported(req: Fields): void {
  req.refuseIfSet(['previous_response_id', 'conversation', 'prompt'], STATELESS);
  req.refuseIfEnabled(['background'], 'is not supported: responses are answered synchronously');
  // OpenAI's default is store: true; a stateless gateway stores nothing, so absent means false.
  if (req.raw('store') === true) refuseField('store', 'must be false: /v1/responses is stateless and stores nothing');
  req.boolean('store');
  req.refuseIfSet(['context_management', 'max_tool_calls', 'top_logprobs']);
  if (req.oneOf('truncation', ['auto', 'disabled']) === 'auto') refuseField('truncation', "'auto' is not supported; the conversation is sent as given");
  req.oneOf('service_tier', ['auto', 'default']);
}
