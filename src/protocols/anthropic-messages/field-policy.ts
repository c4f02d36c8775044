import type { FieldPolicy } from '../field-policy';
import { fieldsOf, type FormatFieldPolicy } from '../apply-field-policy';
import type { MessageCreateParams, MessagesTool } from './types';

/**
 * The Messages format's field policy (docs/api.md, "Field policy"): what Tollgate does with
 * every top-level field of Anthropic's current request schema, and with the nested fields real
 * clients send. The decoder applies it as the other formats apply theirs (apply-field-policy.ts),
 * so a field in no table is unknown (400 naming it), and the request type ties the top-level
 * table to the schema: a field one has and the other lacks fails to compile.
 *
 * `passed-to-vendor` fields go to the vendors that take them: Anthropic's own settings (betas,
 * `context_management`, `service_tier`, tools' own fields…) to Anthropic as sent. For any other
 * vendor, Tollgate applies `context_management` edits itself where that is exact (and refuses an
 * edit it cannot apply exactly), offers a deferred tool only once the conversation called it,
 * and drops the rest by the hint rule, naming them (`x-service-dropped-hints`).
 */
export const MESSAGES_FIELD_POLICY = {
  model: 'honoured',
  max_tokens: 'honoured',
  messages: 'honoured',
  system: 'honoured',
  tools: 'honoured',
  tool_choice: 'honoured',
  thinking: 'honoured',
  output_config: 'honoured',
  output_format: 'honoured',
  stop_sequences: 'honoured',

  stream: 'honoured',
  mcp_servers: 'honoured',
  speed: 'honoured',
  billing_policy: 'honoured',
  temperature: 'passed-to-vendor',
  top_p: 'passed-to-vendor',
  top_k: 'passed-to-vendor',
  service_tier: 'passed-to-vendor',
  cache_control: 'passed-to-vendor',
  context_management: 'passed-to-vendor',
  metadata: 'metadata',
  diagnostics: 'metadata',
  container: 'refused',
  inference_geo: 'refused',
  compaction: 'refused',
  fallbacks: 'refused',
  fallback_credit_token: 'refused',
  thread: 'refused',
} as const satisfies FieldPolicy<keyof MessageCreateParams>;

export type MessagesField = keyof typeof MESSAGES_FIELD_POLICY;

/** Nested fields real clients send, per object, by the same dispositions. */
export const TOOL_FIELD_POLICY = {
  type: 'honoured',
  name: 'honoured',
  description: 'honoured',
  input_schema: 'honoured',
  strict: 'honoured',
  cache_control: 'passed-to-vendor',
  eager_input_streaming: 'passed-to-vendor',
  defer_loading: 'passed-to-vendor',
  input_examples: 'passed-to-vendor',
  allowed_callers: 'passed-to-vendor',
} as const satisfies FieldPolicy<keyof MessagesTool>;

/**
 * Content blocks, the system prompt's blocks, `thinking` and `output_config`. Block
 * `cache_control` (a prompt-cache breakpoint) is kept on the canonical part and put back on the
 * same block for Anthropic; a hint elsewhere. MCP blocks are rebuilt from one canonical call, so
 * theirs is metadata; thinking blocks take none (Anthropic refuses it there too).
 */
export const NESTED_FIELD_POLICIES = {
  message: { role: 'honoured', content: 'honoured' },
  text: { type: 'honoured', text: 'honoured', cache_control: 'passed-to-vendor', citations: 'metadata' },
  tool_use: {
    type: 'honoured',
    id: 'honoured',
    name: 'honoured',
    input: 'honoured',
    cache_control: 'passed-to-vendor',
    caller: 'metadata',
    toolset_name: 'metadata',
  },
  tool_result: {
    type: 'honoured',
    tool_use_id: 'honoured',
    content: 'honoured',
    is_error: 'honoured',
    cache_control: 'passed-to-vendor',
    toolset_name: 'metadata',
  },
  thinking_block: { type: 'honoured', thinking: 'honoured', signature: 'honoured' },
  redacted_thinking: { type: 'honoured', data: 'honoured' },
  mcp_tool_use: {
    type: 'honoured',
    id: 'honoured',
    name: 'honoured',
    server_name: 'honoured',
    input: 'honoured',
    cache_control: 'metadata',
  },
  mcp_tool_result: { type: 'honoured', tool_use_id: 'honoured', content: 'honoured', is_error: 'honoured', cache_control: 'metadata' },
  /** `display: 'omitted'` is emulated: the answer's thinking blocks carry their signature and no text. */
  thinking: { type: 'honoured', budget_tokens: 'honoured', display: 'emulated' },
  output_config: { effort: 'honoured', format: 'honoured', task_budget: 'passed-to-vendor' },
  metadata: { user_id: 'metadata' },
} as const satisfies Readonly<Record<string, FieldPolicy>>;

const MODEL_RESOLVED = 'is not supported: Tollgate serves and bills the model it resolved; remove it and retry with another model yourself';

/** The refused fields (what the client should change) and the metadata fields' shape checks. */
export const MESSAGES_POLICY: FormatFieldPolicy<typeof MESSAGES_FIELD_POLICY> = {
  table: MESSAGES_FIELD_POLICY,
  refusals: {
    container: {
      problem:
        'is not supported: containers belong to server-side code execution, which Tollgate does not offer; remove it and run code with client tools',
    },
    inference_geo: {
      problem:
        'is not supported: data residency is priced differently from the catalog price Tollgate charges; remove it (the vendor account default applies)',
    },
    compaction: {
      problem:
        'is not supported: compaction requests are answered by a summary only Anthropic writes; compact the conversation client-side, or use context_management',
    },
    fallbacks: { problem: MODEL_RESOLVED },
    fallback_credit_token: { problem: MODEL_RESOLVED },
    thread: { problem: 'is not supported: Tollgate is stateless; remove it and send the whole conversation in messages' },
  },
  metadata: {
    // `user_id` reaches the vendor as the end-user id (the decoder reads it).
    metadata: (req, field) => req.object(field)?.allowOnly(fieldsOf(NESTED_FIELD_POLICIES.metadata)).string('user_id'),
    diagnostics: (req, field) => req.object(field)?.allowOnly(['previous_message_id']).string('previous_message_id'),
  },
};
