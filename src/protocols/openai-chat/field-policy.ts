import type { FieldPolicy } from '../field-policy';
import { checkStringMap, isEmpty, type FormatFieldPolicy } from '../apply-field-policy';
import type { ChatCompletionCreateParams } from './types';

/**
 * Chat Completions: what Tollgate does with every top-level field of OpenAI's current request
 * schema (docs/api.md, "Field policy", where each disposition and the hint rule are stated).
 * `satisfies` ties the table to the request type: a field of one missing from the other fails
 * to compile. The decoder reads the honoured and passed fields itself.
 */
export const CHAT_FIELD_POLICY = {
  model: 'honoured',
  messages: 'honoured',
  audio: 'refused',
  frequency_penalty: 'passed-to-vendor',
  function_call: 'refused',
  functions: 'refused',
  logit_bias: 'refused',
  logprobs: 'refused',
  max_completion_tokens: 'honoured',
  max_tokens: 'honoured',
  metadata: 'metadata',
  modalities: 'refused',
  moderation: 'refused',
  n: 'refused',
  parallel_tool_calls: 'passed-to-vendor',
  prediction: 'refused',
  presence_penalty: 'passed-to-vendor',
  prompt_cache_key: 'metadata',
  prompt_cache_options: 'metadata',
  prompt_cache_retention: 'metadata',
  reasoning_effort: 'honoured',
  response_format: 'honoured',
  safety_identifier: 'metadata',
  seed: 'passed-to-vendor',
  service_tier: 'refused',
  stop: 'honoured',
  store: 'refused',
  stream: 'honoured',
  stream_options: 'honoured',
  temperature: 'passed-to-vendor',
  tool_choice: 'honoured',
  tools: 'honoured',
  top_logprobs: 'refused',
  top_p: 'passed-to-vendor',
  user: 'metadata',
  verbosity: 'passed-to-vendor',
  web_search_options: 'refused',
} as const satisfies FieldPolicy<keyof ChatCompletionCreateParams>;

const TEXT_ONLY = 'chat endpoints take and give text only';
const NO_LOGPROBS = 'answers carry no log probabilities';

/** OpenAI's limit on metadata pairs. */
export const MAX_METADATA_PAIRS = 16;

export const CHAT_POLICY: FormatFieldPolicy<typeof CHAT_FIELD_POLICY> = {
  table: CHAT_FIELD_POLICY,
  refusals: {
    audio: { problem: `is not supported: ${TEXT_ONLY}; remove audio` },
    function_call: { problem: 'is not supported (legacy functions API); use tools and tool_choice' },
    functions: { accepts: isEmpty, problem: 'is not supported (legacy functions API); use tools and tool_choice' },
    logit_bias: { accepts: isEmpty, problem: "is not supported: token ids differ between the vendors' tokenizers; remove it" },
    logprobs: { accepts: [false], problem: `must be false or omitted: ${NO_LOGPROBS}` },
    modalities: {
      accepts: (value) => Array.isArray(value) && value.length === 1 && value[0] === 'text',
      problem: `must be ['text'] or omitted: ${TEXT_ONLY}`,
    },
    moderation: { problem: 'is not supported: answers carry no moderation results; remove it and moderate separately' },
    n: { accepts: [1], problem: 'must be 1 or omitted: one choice per request; send several requests for several choices' },
    prediction: { problem: 'is not supported (predicted outputs are billed beyond the output limit); remove it' },
    service_tier: {
      accepts: ['auto', 'default'],
      problem: "must be 'auto', 'default' or omitted: every request is served at the vendor's default tier, at the catalog's price",
    },
    store: { accepts: [false], problem: 'must be false or omitted: Tollgate stores no completions' },
    top_logprobs: { accepts: [0], problem: `must be 0 or omitted: ${NO_LOGPROBS}` },
    web_search_options: { problem: 'is not supported: there is no hosted web search; remove it (a function tool can search instead)' },
  },
  metadata: {
    metadata: checkStringMap(MAX_METADATA_PAIRS),
    prompt_cache_key: (req, field) => req.string(field),
    prompt_cache_options: (req, field) => {
      const options = req.object(field)?.allowOnly(['mode', 'ttl']);
      options?.oneOf('mode', ['implicit', 'explicit']);
      options?.string('ttl');
    },
    prompt_cache_retention: (req, field) => req.oneOf(field, ['in_memory', 'in-memory', '24h']),
    // The end-user id reaches vendors for their abuse monitoring (canonical `user`); the decoder reads it.
    safety_identifier: (req, field) => req.string(field),
    user: (req, field) => req.string(field),
  },
};
