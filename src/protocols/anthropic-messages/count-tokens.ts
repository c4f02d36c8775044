import type { TextFieldNames } from '../../domain/generation/field-keys';
import type { DecodedTextRequest } from '../../domain/generation/service';
import { Fields } from '../decode-fields';
import { decodeMessagesIngress } from './decode-request';
import type { MessagesRequestHeaders } from './decode-vendor-only';
import type { MessagesField } from './field-policy';

/**
 * Client side of `POST /v1/messages/count_tokens`: the Messages fields that shape a prompt
 * (Anthropic's count_tokens schema, beta fields included), decoded as a Messages request is,
 * by the same field policy. `compaction` is accepted and ignored, as Anthropic's endpoint does.
 */
export const COUNT_TOKENS_FIELDS = [
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'output_format',
  'mcp_servers',
  'context_management',
  'cache_control',
  'speed',
  'billing_policy',
  'compaction',
] as const satisfies readonly MessagesField[];

/** The prompt as a Messages request with no output (the output limit is the model's, for the thinking rule), and its field names. */
export function decodeCountTokensRequest(
  body: unknown,
  headers: MessagesRequestHeaders = {},
): { decoded: DecodedTextRequest; names: TextFieldNames } {
  const { value } = Fields.body(body).allowOnly(COUNT_TOKENS_FIELDS);
  const { compaction: _ignored, ...prompt } = value;
  const { decoded, names } = decodeMessagesIngress({ ...prompt, max_tokens: 1 }, headers);
  return { decoded: { ...decoded, outputLimit: { value: undefined, fallback: Number.MAX_SAFE_INTEGER }, stream: false }, names };
}

/** Anthropic's answer: `{"input_tokens": N}`. */
export const countTokensAnswer = (inputTokens: number) => ({ input_tokens: inputTokens });
