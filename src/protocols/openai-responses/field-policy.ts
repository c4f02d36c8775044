import type { FieldPolicy } from '../field-policy';
import { checkStringMap, isEmpty, type FormatFieldPolicy } from '../apply-field-policy';
import type { ResponseCreateParams } from './types';

/**
 * Responses: what Tollgate does with every top-level field of OpenAI's current request schema
 * and of the Open Responses schema (docs/api.md, "Field policy", where each disposition and
 * the hint rule are stated). `satisfies` ties the table to the request type: a field of one
 * missing from the other fails to compile. The decoder reads the honoured and passed fields.
 */
export const RESPONSES_FIELD_POLICY = {
  model: 'honoured',
  input: 'honoured',
  instructions: 'honoured',
  tools: 'honoured',
  tool_choice: 'honoured',
  parallel_tool_calls: 'passed-to-vendor',
  text: 'honoured',
  max_output_tokens: 'honoured',
  max_tool_calls: 'passed-to-vendor',
  reasoning: 'honoured',
  presence_penalty: 'passed-to-vendor',
  frequency_penalty: 'passed-to-vendor',
  stream: 'honoured',
  stream_options: 'metadata',
  store: 'refused',
  include: 'honoured',
  temperature: 'passed-to-vendor',
  top_p: 'passed-to-vendor',
  top_logprobs: 'refused',
  user: 'metadata',
  safety_identifier: 'metadata',
  metadata: 'metadata',
  client_metadata: 'metadata',
  truncation: 'refused',
  service_tier: 'refused',
  prompt_cache_key: 'metadata',
  prompt_cache_options: 'metadata',
  prompt_cache_retention: 'metadata',
  image: 'metadata',
  moderation: 'refused',
  access_programs: 'refused',
  previous_response_id: 'refused',
  conversation: 'refused',
  prompt: 'refused',
  background: 'refused',
  context_management: 'refused',
} as const satisfies FieldPolicy<keyof ResponseCreateParams>;

const STATELESS = 'is not supported: /v1/responses is stateless; send the whole conversation in input (with store: false)';

/** OpenAI's limit on metadata pairs. */
export const MAX_METADATA_PAIRS = 16;

export const RESPONSES_POLICY: FormatFieldPolicy<typeof RESPONSES_FIELD_POLICY> = {
  table: RESPONSES_FIELD_POLICY,
  refusals: {
    store: { accepts: [false], problem: 'must be false or omitted: /v1/responses is stateless and stores nothing' },
    top_logprobs: { accepts: [0], problem: 'must be 0 or omitted: answers carry no log probabilities' },
    truncation: {
      accepts: ['disabled'],
      problem: "must be 'disabled' or omitted: the conversation is sent as given; shorten input yourself",
    },
    service_tier: {
      accepts: ['auto', 'default'],
      problem: "must be 'auto', 'default' or omitted: every request is served at the vendor's default tier, at the catalog's price",
    },
    moderation: { problem: 'is not supported: answers carry no moderation results; remove it and moderate separately' },
    access_programs: {
      accepts: (value) =>
        isEmpty(value) ||
        (typeof value === 'object' &&
          value !== null &&
          Object.keys(value).length === 1 &&
          (value as Record<string, unknown>).cyber === 'standard'),
      problem: "is not supported beyond {cyber: 'standard'}: requests use the vendor's standard access; remove it",
    },
    previous_response_id: { problem: STATELESS },
    conversation: { problem: STATELESS },
    prompt: { problem: 'is not supported: there are no stored prompts; send instructions and input instead' },
    background: {
      accepts: [false],
      problem: 'must be false or omitted: responses are answered while the request waits (stream: true shows progress)',
    },
    context_management: {
      accepts: isEmpty,
      problem: 'is not supported: there is no server-side compaction; compact the conversation on the client and send it in input',
    },
  },
  metadata: {
    stream_options: (req, field) => req.object(field)?.allowOnly(['include_obfuscation']).boolean('include_obfuscation'),
    user: (req, field) => req.string(field),
    safety_identifier: (req, field) => req.string(field),
    metadata: checkStringMap(MAX_METADATA_PAIRS),
    client_metadata: (req, field) => req.jsonObject(field),
    prompt_cache_key: (req, field) => req.string(field),
    prompt_cache_options: (req, field) => {
      const options = req.object(field)?.allowOnly(['mode', 'ttl']);
      options?.oneOf('mode', ['implicit', 'explicit']);
      options?.string('ttl');
    },
    prompt_cache_retention: (req, field) => req.oneOf(field, ['in_memory', 'in-memory', '24h']),
    image: (req, field) =>
      req.object(field)?.allowOnly(['context_compression']).oneOf('context_compression', ['auto', 'enabled', 'disabled']),
  },
};
