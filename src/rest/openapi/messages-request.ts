import { KNOWN_FIELDS as MESSAGES_FIELDS } from '../../protocols/anthropic-messages/decode-request';
import { COUNT_TOKENS_FIELDS } from '../../protocols/anthropic-messages/count-tokens';
import { MESSAGES_POLICY } from '../../protocols/anthropic-messages/field-policy';
import { documentedFields } from './field-dispositions';
import { answer, any, arrayOf, bool, int, num, object, oneOf, str, type JsonSchema } from './schema';

/*
 * The Messages request bodies (`/v1/messages` and its `count_tokens`) and the Anthropic-shaped
 * error. As for the other formats (text-requests.ts), each field's description starts from its
 * field-policy disposition, refused fields are described by their refusal, and the table is keyed
 * by the policy, so a field added to it does not compile until it is documented here.
 */

const documented = documentedFields(MESSAGES_POLICY, {
  model: str('Model id: a catalog id (`<vendor>/<model>`) or a vendor id that names exactly one model the key can use.', { minLength: 1 }),
  max_tokens: int(
    "Output limit (reasoning included), at least 1. Required. Above the model's largest it is lowered (answer header x-service-max-output-clamped), not refused.",
    { minimum: 1 },
  ),
  messages: arrayOf(
    any(
      'A message: role user, assistant or system; content a string or text, tool_use, tool_result and thinking blocks. A `cache_control` on a text, tool_use or tool_result block is a prompt-cache breakpoint, put back on the same block for Anthropic models.',
    ),
  ),
  system: any('A string or text blocks (their `cache_control` breakpoints go to Anthropic models on the same blocks).'),
  tools: arrayOf(
    any(
      'A client tool: name, description, input_schema, strict; its eager_input_streaming, defer_loading, input_examples, allowed_callers and cache_control go to Anthropic models.',
    ),
  ),
  tool_choice: any('`{type: "auto" | "any" | "tool" | "none"}`.'),
  thinking: any(
    '`{type: "disabled"}`, `{type: "enabled", budget_tokens}` (at least 1,024 below max_tokens) or `{type: "adaptive"}`; `display: "omitted"` answers thinking blocks with their signature and no text.',
  ),
  output_config: object({
    effort: any('Reasoning effort.'),
    format: any('Structured output format.'),
    task_budget: any('Passed to Anthropic models.'),
  }),
  output_format: any('Structured output format (older placement).'),
  stop_sequences: arrayOf(str()),
  temperature: num('0 to 1.'),
  top_p: num('Nucleus sampling, 0 to 1.'),
  top_k: int('Top-k sampling: Anthropic models, not while thinking.', { minimum: 0 }),
  stream: bool('Answer as server-sent events.'),
  metadata: object({ user_id: str('End-user identifier passed to the vendor.') }),
  mcp_servers: arrayOf(any('A remote MCP server the vendor calls.')),
  service_tier: oneOf(['auto', 'standard_only'], 'Anthropic models.'),
  cache_control: {
    type: 'object',
    description:
      'Automatic prompt caching at Anthropic models (`{type: "ephemeral", ttl?}`); takes one of the 4 breakpoints Anthropic allows.',
  },
  context_management: any(
    '`{edits: [...]}`: clear_thinking_*, clear_tool_uses_*, compact_* edits; applied by Tollgate for other vendors where exact, refused where not.',
  ),
  diagnostics: object({ previous_message_id: str() }),
  speed: oneOf(['standard', 'fast'], "Only 'standard': fast mode is priced differently."),
  billing_policy: any("Only `bill_to: 'self'` (the key's account pays)."),
});

export const messagesRequestSchema = object(
  Object.fromEntries(MESSAGES_FIELDS.map((field) => [field, documented[field]])),
  ['model', 'max_tokens', 'messages'],
  'Messages request (Anthropic format).',
);

/** count_tokens takes the Messages fields that shape the prompt (no max_tokens, no sampling). */
export const countTokensRequestSchema = object(
  Object.fromEntries(COUNT_TOKENS_FIELDS.map((field) => [field, documented[field]])),
  ['model', 'messages'],
  'A Messages prompt to count (Anthropic format).',
);

export const MESSAGES_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  MessagesCountTokensRequest: countTokensRequestSchema,
  MessagesTokenCount: answer({
    input_tokens: int('Input tokens of the prompt: the vendor’s own count where it has one, else Tollgate’s.'),
  }),
  MessagesError: answer(
    {
      type: oneOf(['error']),
      error: answer({
        type: str(
          "Anthropic's error type (invalid_request_error, authentication_error, billing_error, permission_error, not_found_error, request_too_large, rate_limit_error, api_error, overloaded_error, timeout_error).",
        ),
        message: str(),
        code: str("Tollgate's error code."),
        details: { type: 'object' },
      }),
      request_id: str(),
    },
    ['type', 'error'],
    'Errors of the Messages endpoints, in Anthropic’s shape with Tollgate’s code and details inside.',
  ),
};
