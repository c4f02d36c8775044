import { CHAT_POLICY } from '../../protocols/openai-chat/field-policy';
import { RESPONSES_POLICY } from '../../protocols/openai-responses/field-policy';
import { documentedFields } from './field-dispositions';
import { any, arrayOf, bool, int, num, object, oneOf, str, type JsonSchema } from './schema';

/*
 * Request bodies of the text endpoints. Their decoders validate by hand against a list of
 * known top-level fields (for Chat and Responses, their field policy); each table below is
 * keyed by that very list (a Record over its union), so a field added to a decoder does not
 * compile until it is documented here, and the document's properties are exactly the fields
 * the decoder accepts. Fields say their disposition, and refused ones are described by the
 * policy's own refusal. Messages has its own file (messages-request.ts).
 */

const model = str('Model id: a catalog id (`<vendor>/<model>`) or a vendor id that names exactly one model the key can use.', {
  minLength: 1,
});
const outputLimit = (field: string) =>
  int(
    `Output limit (reasoning included), at least 1. Above the model's largest it is lowered (answer header x-service-max-output-clamped), not refused.${field}`,
    { minimum: 1 },
  );
const effort = oneOf(
  ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'],
  '`none` and `minimal` mean low; `xhigh` means extra_high; ignored by models without an effort setting.',
);
const temperature = num('Sampling temperature, 0 to 2.');
const topP = num('Nucleus sampling, 0 to 1.');
const stream = bool('Answer as server-sent events.');
const user = str('End-user identifier passed to the vendor.');

const CHAT = documentedFields(CHAT_POLICY, {
  model,
  messages: arrayOf(
    any(
      'A message: role user, assistant, system (developer means system) or tool; content a string or text-only parts (a text part may carry `cache_control`, a prompt-cache breakpoint for Anthropic models).',
    ),
    'The conversation.',
  ),
  frequency_penalty: num('-2 to 2.'),
  max_completion_tokens: outputLimit(' Not together with max_tokens.'),
  max_tokens: outputLimit(' Not together with max_completion_tokens.'),
  metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'Up to 16 string pairs.' },
  parallel_tool_calls: bool(),
  presence_penalty: num('-2 to 2.'),
  prompt_cache_key: str(),
  prompt_cache_options: object({ mode: oneOf(['implicit', 'explicit']), ttl: str() }),
  prompt_cache_retention: oneOf(['in_memory', 'in-memory', '24h']),
  reasoning_effort: effort,
  response_format: any('`{type: "text"}`, `{type: "json_object"}` or `{type: "json_schema", json_schema: {...}}` (schema up to 32 KiB).'),
  safety_identifier: user,
  seed: int('OpenAI and OpenAI-compatible vendors.'),
  stop: any('A string or up to 4 strings.'),
  stream,
  stream_options: object({
    include_usage: bool('Usage in the last chunk.'),
    include_obfuscation: bool('No effect: streams are not padded.'),
  }),
  temperature,
  tool_choice: any('`none`, `auto`, `required` or a named function.'),
  tools: arrayOf(
    any('A function (or custom) tool; a `cache_control` beside `function` is a prompt-cache breakpoint for Anthropic models.'),
    'Up to 64 tool schemas.',
  ),
  top_p: topP,
  user,
  verbosity: oneOf(['low', 'medium', 'high'], 'OpenAI (models that support it).'),
});

const RESPONSES = documentedFields(RESPONSES_POLICY, {
  model,
  input: any(
    'A string, or the whole conversation as input items (messages, function and custom tool calls and outputs, reasoning, MCP items).',
  ),
  instructions: str('System instructions.'),
  tools: arrayOf(
    any('A function, custom, MCP or namespace tool (a namespace is served as the tools it groups; hosted tools are refused).'),
  ),
  tool_choice: any('`none`, `auto`, `required` or a named tool.'),
  parallel_tool_calls: bool(),
  text: object({
    format: any('Structured output: `{type: "text" | "json_object" | "json_schema", ...}`.'),
    verbosity: oneOf(['low', 'medium', 'high'], 'Passed to OpenAI; dropped for other vendors.'),
  }),
  max_output_tokens: outputLimit(''),
  max_tool_calls: int(
    'Limits calls of MCP tools (the only tools the vendor runs): passed to OpenAI, refused for other vendors when MCP tools are declared, no effect without them.',
    { minimum: 0 },
  ),
  reasoning: object({ effort, summary: any('Reasoning summary preference.'), generate_summary: any('Older name of summary.') }),
  presence_penalty: num('-2 to 2.'),
  frequency_penalty: num('-2 to 2.'),
  stream,
  stream_options: object({ include_obfuscation: bool('No effect: streams are not padded.') }),
  include: arrayOf(
    oneOf(['reasoning.encrypted_content']),
    'Only reasoning.encrypted_content (reasoning state for the next stateless turn).',
  ),
  temperature,
  top_p: topP,
  user,
  safety_identifier: user,
  metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'Up to 16 string pairs, echoed in the answer.' },
  client_metadata: { type: 'object', description: "About the calling client (Codex's turn metadata)." },
  prompt_cache_key: str('Echoed in the answer.'),
  prompt_cache_options: object({ mode: oneOf(['implicit', 'explicit']), ttl: str() }),
  prompt_cache_retention: oneOf(['in_memory', 'in-memory', '24h']),
  image: object({ context_compression: oneOf(['auto', 'enabled', 'disabled']) }, [], 'No effect: input is text only.'),
});

/** A request body schema: exactly the fields of the table. */
const bodyOf = (table: Readonly<Record<string, JsonSchema>>, required: readonly string[], description: string) =>
  object(table, required, description);

export const chatRequestSchema = bodyOf(CHAT, ['model', 'messages'], 'Chat Completions request (OpenAI format).');
export const responsesRequestSchema = bodyOf(RESPONSES, ['model', 'input'], 'Responses request (OpenAI format, stateless).');
/** The Messages bodies are built from the Messages field policy (messages-request.ts). */
