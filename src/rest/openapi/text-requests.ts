import { KNOWN_FIELDS as CHAT_FIELDS } from '../../protocols/openai-chat/decode-request';
import { KNOWN_FIELDS as RESPONSES_FIELDS } from '../../protocols/openai-responses/decode-request';
import { any, arrayOf, bool, int, num, object, oneOf, str, type JsonSchema } from './schema';

/*
 * Request bodies of the text endpoints. Their decoders validate by hand against a list of
 * known top-level fields; each table below is keyed by that very list (a Record over its
 * union), so a field added to a decoder does not compile until it is documented here, and the
 * document's properties are exactly the fields the decoder accepts.
 */

type FieldTable<Fields extends readonly string[]> = Readonly<Record<Fields[number], JsonSchema>>;

/** A field the decoder recognises only to refuse it by name when it is set. */
const refused = (why: string): JsonSchema => ({ type: 'null', description: `Refused with 400 when set: ${why}.` });
/** Accepted for SDK compatibility, with no effect on the answer. */
const ignored = (schema: JsonSchema): JsonSchema => ({ ...schema, description: 'Accepted for SDK compatibility; no effect on the answer.' });

const model = str('Model id: a catalog id (`<vendor>/<model>`) or a vendor id that names exactly one model the key can use.', { minLength: 1 });
const outputLimit = (field: string) =>
  int(`Output limit (reasoning included), at least 1. Above the model's largest it is lowered (answer header x-service-max-output-clamped), not refused.${field}`, { minimum: 1 });
const effort = oneOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'], '`none` and `minimal` mean low; `xhigh` means extra_high; ignored by models without an effort setting.');
const temperature = num('Sampling temperature, 0 to 2.');
const topP = num('Nucleus sampling, 0 to 1.');
const stream = bool('Answer as server-sent events.');
const user = str('End-user identifier passed to the vendor.');

const CHAT: FieldTable<typeof CHAT_FIELDS> = {
  model,
  messages: arrayOf(any('A message: role user, assistant, system (developer means system) or tool; content a string or text-only parts (a text part may carry `cache_control`, a prompt-cache breakpoint for Anthropic models).'), 'The conversation.'),
  audio: refused('chat endpoints answer in text only'),
  frequency_penalty: num('-2 to 2.'),
  function_call: refused('the legacy functions API; use tools and tool_choice'),
  functions: refused('the legacy functions API; use tools and tool_choice'),
  logit_bias: refused('not offered by every vendor behind Tollgate'),
  logprobs: { type: ['boolean', 'null'], description: 'Only false or null: log probabilities are not offered.' },
  max_completion_tokens: outputLimit(' Not together with max_tokens.'),
  max_tokens: outputLimit(' Not together with max_completion_tokens.'),
  metadata: refused('Tollgate does not store completions'),
  modalities: arrayOf(oneOf(['text']), "Only ['text']."),
  n: { type: ['integer', 'null'], const: 1, description: 'Omitted or 1.' },
  parallel_tool_calls: bool(),
  prediction: refused('predicted outputs are not offered'),
  presence_penalty: num('-2 to 2.'),
  prompt_cache_key: ignored(str()),
  prompt_cache_retention: ignored(oneOf(['in-memory', '24h'])),
  reasoning_effort: effort,
  response_format: any('`{type: "text"}`, `{type: "json_object"}` or `{type: "json_schema", json_schema: {...}}` (schema up to 32 KiB).'),
  safety_identifier: user,
  seed: ignored(int()),
  service_tier: ignored(str()),
  stop: any('A string or up to 4 strings.'),
  store: { type: ['boolean', 'null'], description: 'Only false or null: nothing is stored.' },
  stream,
  stream_options: object({ include_usage: bool('Usage in the last chunk.'), include_obfuscation: ignored(bool()) }),
  temperature,
  tool_choice: any('`none`, `auto`, `required` or a named function.'),
  tools: arrayOf(any('A function (or custom) tool; a `cache_control` beside `function` is a prompt-cache breakpoint for Anthropic models.'), 'Up to 64 tool schemas.'),
  top_logprobs: refused('log probabilities are not offered'),
  top_p: topP,
  user,
  verbosity: refused('not offered by every vendor behind Tollgate'),
  web_search_options: refused('hosted web search is not offered'),
};

const RESPONSES: FieldTable<typeof RESPONSES_FIELDS> = {
  model,
  input: any('A string, or the whole conversation as input items (messages, function and custom tool calls and outputs, reasoning, MCP items).'),
  instructions: str('System instructions.'),
  tools: arrayOf(any('A function, custom or MCP tool (hosted tools are refused).')),
  tool_choice: any('`none`, `auto`, `required` or a named tool.'),
  parallel_tool_calls: bool(),
  text: object({ format: any('Structured output: `{type: "text" | "json_object" | "json_schema", ...}`.'), verbosity: refused('not offered by every vendor') }),
  max_output_tokens: outputLimit(''),
  max_tool_calls: refused('not offered by every vendor behind Tollgate'),
  reasoning: object({ effort, summary: any('Reasoning summary preference.'), generate_summary: any('Older name of summary.') }),
  stream,
  stream_options: object({ include_obfuscation: ignored(bool()) }),
  store: { type: ['boolean', 'null'], description: 'Only false (or absent): /v1/responses is stateless.' },
  include: arrayOf(oneOf(['reasoning.encrypted_content']), 'Only reasoning.encrypted_content (reasoning state for the next stateless turn).'),
  temperature,
  top_p: topP,
  top_logprobs: refused('log probabilities are not offered'),
  user,
  safety_identifier: user,
  metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'String pairs, echoed in the answer.' },
  truncation: oneOf(['disabled', 'auto'], "Only 'disabled': the conversation is sent as given."),
  service_tier: ignored(oneOf(['auto', 'default'])),
  prompt_cache_key: ignored(str()),
  prompt_cache_retention: ignored(oneOf(['in-memory', '24h'])),
  previous_response_id: refused('stateless: send the whole conversation in input with store: false'),
  conversation: refused('stateless: send the whole conversation in input with store: false'),
  prompt: refused('stateless: stored prompts are not offered'),
  background: { type: ['boolean', 'null'], description: 'Only false: responses are answered synchronously.' },
  context_management: refused('not offered by every vendor behind Tollgate'),
};

/** A request body schema: exactly the fields of the table. */
const bodyOf = (table: Readonly<Record<string, JsonSchema>>, required: readonly string[], description: string) => object(table, required, description);

export const chatRequestSchema = bodyOf(CHAT, ['model', 'messages'], 'Chat Completions request (OpenAI format).');
export const responsesRequestSchema = bodyOf(RESPONSES, ['model', 'input'], 'Responses request (OpenAI format, stateless).');
/** The Messages bodies are built from the Messages field policy (messages-request.ts). */
export { messagesRequestSchema } from './messages-request';
