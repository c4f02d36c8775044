import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FieldDisposition } from '../../src/protocols/field-policy';
import type { Refusal } from '../../src/protocols/apply-field-policy';
import { ApiError } from '../../src/domain/shared/errors';
import { CHAT_FIELD_POLICY, CHAT_POLICY } from '../../src/protocols/openai-chat/field-policy';
import { decodeChatIngress } from '../../src/protocols/openai-chat/decode-request';
import { RESPONSES_FIELD_POLICY, RESPONSES_POLICY } from '../../src/protocols/openai-responses/field-policy';
import { decodeResponsesIngress } from '../../src/protocols/openai-responses/decode-request';

/**
 * Every field of each OpenAI field policy, sent with a value that means something, behaves as
 * its disposition says: refused → 400 naming it (its neutral values accepted); metadata → the
 * canonical request is the same as without it (the end-user id aside, which vendors get for
 * abuse monitoring); passed-to-vendor → carried in the canonical request; honoured → the
 * decoded request changes. The sample tables are typed by the policies, so a field added to a
 * policy fails to compile here until it has a sample.
 */

type Patch = Record<string, unknown>;

function decodeOrError<T>(decode: (body: unknown) => T, body: unknown): T | ApiError {
  try {
    return decode(body);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/** What a request decodes into, as comparable data (Maps as entries). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (_key, v: unknown) => (v instanceof Map ? [...v] : v)));

function checkPolicy<T extends { decoded: { request: Record<string, unknown> } }>(
  name: string,
  table: Readonly<Record<string, FieldDisposition>>,
  refusals: Readonly<Record<string, Refusal>>,
  base: Patch,
  samples: Readonly<Record<string, Patch>>,
  decode: (body: unknown) => T,
): void {
  describe(`${name}: every field behaves as its disposition says`, () => {
    test.each(Object.entries(table))('%s is %s', (field, disposition) => {
      const patch = samples[field]!;
      expect(patch).toHaveProperty(field);
      const { [field]: _value, ...context } = patch;
      const without = decode({ ...base, ...context });
      const result = decodeOrError(decode, { ...base, ...patch });
      if (disposition === 'refused') {
        expect(result).toBeInstanceOf(ApiError);
        const error = result as ApiError;
        expect(error).toMatchObject({ status: 400, code: 'bad_request', details: { field } });
        expect(error.message.startsWith(`${field} `)).toBe(true);
        expect(error.message).toBe(`${field} ${refusals[field]!.problem}`);
        const accepts = refusals[field]!.accepts;
        for (const neutral of Array.isArray(accepts) ? accepts : [])
          expect(decodeOrError(decode, { ...base, ...context, [field]: neutral })).not.toBeInstanceOf(ApiError);
        expect(decodeOrError(decode, { ...base, ...context, [field]: null })).not.toBeInstanceOf(ApiError);
        return;
      }
      expect(result).not.toBeInstanceOf(ApiError);
      const decoded = result as T;
      if (disposition === 'metadata') {
        const { user: _user, ...request } = decoded.decoded.request;
        const { user: _baseUser, ...baseRequest } = without.decoded.request;
        expect(plain(request)).toEqual(plain(baseRequest));
      } else if (disposition === 'passed-to-vendor') {
        expect(plain(decoded.decoded.request)).not.toEqual(plain(without.decoded.request));
      } else {
        expect(plain(decoded)).not.toEqual(plain(without));
      }
    });

    test('an unknown field is still refused, naming it', () => {
      expect(decodeOrError(decode, { ...base, not_a_field: 1 })).toMatchObject({
        status: 400,
        message: 'not_a_field is not a known field',
      });
    });
  });
}

const CHAT_SAMPLES: Readonly<Record<keyof typeof CHAT_FIELD_POLICY, Patch>> = {
  model: { model: 'gpt-4.1' },
  messages: { messages: [{ role: 'user', content: 'Other' }] },
  audio: { audio: { format: 'mp3', voice: 'alloy' } },
  frequency_penalty: { frequency_penalty: 0.5 },
  function_call: { function_call: 'auto' },
  functions: { functions: [{ name: 'f' }] },
  logit_bias: { logit_bias: { '50256': -100 } },
  logprobs: { logprobs: true },
  max_completion_tokens: { max_completion_tokens: 100 },
  max_tokens: { max_tokens: 100 },
  metadata: { metadata: { team: 'a' } },
  modalities: { modalities: ['text', 'audio'] },
  moderation: { moderation: { model: 'omni-moderation-latest' } },
  n: { n: 2 },
  parallel_tool_calls: { parallel_tool_calls: false },
  prediction: { prediction: { type: 'content', content: 'x' } },
  presence_penalty: { presence_penalty: 0.5 },
  prompt_cache_key: { prompt_cache_key: 'k' },
  prompt_cache_options: { prompt_cache_options: { mode: 'explicit', ttl: '30m' } },
  prompt_cache_retention: { prompt_cache_retention: 'in_memory' },
  reasoning_effort: { reasoning_effort: 'high' },
  response_format: { response_format: { type: 'json_object' } },
  safety_identifier: { safety_identifier: 'end-user-1' },
  seed: { seed: 7 },
  service_tier: { service_tier: 'priority' },
  stop: { stop: ['END'] },
  store: { store: true },
  stream: { stream: true },
  stream_options: { stream_options: { include_usage: true } },
  temperature: { temperature: 0.3 },
  tool_choice: { tool_choice: 'none' },
  tools: { tools: [{ type: 'function', function: { name: 'f' } }] },
  top_logprobs: { top_logprobs: 3 },
  top_p: { top_p: 0.5 },
  user: { user: 'end-user-2' },
  verbosity: { verbosity: 'low' },
  web_search_options: { web_search_options: {} },
};

const MCP_TOOL = { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com' };

const RESPONSES_SAMPLES: Readonly<Record<keyof typeof RESPONSES_FIELD_POLICY, Patch>> = {
  model: { model: 'gpt-4.1' },
  input: { input: 'Other' },
  instructions: { instructions: 'Be brief.' },
  tools: { tools: [{ type: 'function', name: 'f' }] },
  tool_choice: { tool_choice: 'none' },
  parallel_tool_calls: { parallel_tool_calls: false },
  text: { text: { format: { type: 'json_object' } } },
  max_output_tokens: { max_output_tokens: 100 },
  // Limits only the vendor's own (MCP) tool calls: sampled with an MCP tool.
  max_tool_calls: { max_tool_calls: 2, tools: [MCP_TOOL] },
  reasoning: { reasoning: { effort: 'high' } },
  presence_penalty: { presence_penalty: 0.5 },
  frequency_penalty: { frequency_penalty: 0.5 },
  stream: { stream: true },
  stream_options: { stream_options: { include_obfuscation: false } },
  store: { store: true },
  include: { include: ['reasoning.encrypted_content'] },
  temperature: { temperature: 0.3 },
  top_p: { top_p: 0.5 },
  top_logprobs: { top_logprobs: 2 },
  user: { user: 'end-user-2' },
  safety_identifier: { safety_identifier: 'end-user-1' },
  metadata: { metadata: { team: 'a' } },
  client_metadata: { client_metadata: { 'x-codex-turn-metadata': '{"turn_id":"t1"}' } },
  truncation: { truncation: 'auto' },
  service_tier: { service_tier: 'flex' },
  prompt_cache_key: { prompt_cache_key: 'k' },
  prompt_cache_options: { prompt_cache_options: { mode: 'implicit' } },
  prompt_cache_retention: { prompt_cache_retention: '24h' },
  image: { image: { context_compression: 'disabled' } },
  moderation: { moderation: { model: 'omni-moderation-latest' } },
  access_programs: { access_programs: { cyber: 'daybreak_red' } },
  previous_response_id: { previous_response_id: 'resp_1' },
  conversation: { conversation: 'conv_1' },
  prompt: { prompt: { id: 'pmpt_1' } },
  background: { background: true },
  context_management: { context_management: [{ type: 'compaction', compact_threshold: 1000 }] },
};

checkPolicy(
  'Chat Completions',
  CHAT_FIELD_POLICY,
  CHAT_POLICY.refusals,
  { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
  CHAT_SAMPLES,
  decodeChatIngress,
);
checkPolicy(
  'Responses',
  RESPONSES_FIELD_POLICY,
  RESPONSES_POLICY.refusals,
  { model: 'o4-mini', input: 'Hi' },
  RESPONSES_SAMPLES,
  decodeResponsesIngress,
);

test('max_tool_calls without MCP tools limits nothing: dropped from the canonical request, echoed', () => {
  const { decoded, echo } = decodeResponsesIngress({ model: 'o4-mini', input: 'Hi', max_tool_calls: 2 });
  expect(decoded.request).not.toHaveProperty('maxToolCalls');
  expect(echo.settings.max_tool_calls).toBe(2);
});

test('the older in-memory spelling of prompt_cache_retention is accepted too', () => {
  expect(() =>
    decodeChatIngress({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_retention: 'in-memory' }),
  ).not.toThrow();
  expect(() => decodeResponsesIngress({ model: 'o4-mini', input: 'Hi', prompt_cache_retention: 'in-memory' })).not.toThrow();
});

/** The rows of the table under a heading of docs/api.md: field → disposition. */
function documentedPolicy(heading: string): Record<string, string> {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const start = doc.indexOf(`#### ${heading}\n`);
  expect(start).toBeGreaterThan(-1);
  const rows = doc
    .slice(start)
    .split('\n\n')
    .find((block) => block.startsWith('| Field |'))!
    .split('\n')
    .slice(2);
  return Object.fromEntries(rows.map((row) => /^\| `([a-z_]+)` \| ([a-z-]+) \|/.exec(row)!).map((match) => [match[1], match[2]]));
}

test('docs/api.md states exactly the dispositions of the code, one row per field', () => {
  expect(documentedPolicy('Chat Completions fields')).toEqual({ ...CHAT_FIELD_POLICY });
  expect(documentedPolicy('Responses fields')).toEqual({ ...RESPONSES_FIELD_POLICY });
});
