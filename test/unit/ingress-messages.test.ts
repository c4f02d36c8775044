import Anthropic from '@anthropic-ai/sdk';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { CanonicalEvent, CanonicalRequest, CanonicalUsage, FinishReason } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { clampOutputLimit } from '../../src/domain/generation/rules';
import { validateCanonicalRequest } from '../../src/domain/generation/validate';
import { namedFor } from '../../src/domain/generation/field-keys';
import { ApiError } from '../../src/domain/shared/errors';
import { decodeMessagesIngress, decodeMessagesRequest } from '../../src/protocols/anthropic-messages/decode-request';
import { encodeMessagesResponse, messagesErrorType } from '../../src/protocols/anthropic-messages/encode-answer';
import { MessagesStreamEncoder } from '../../src/protocols/anthropic-messages/stream-encoder';
import { collectEvents } from '../../src/protocols/collect';
import { SseDecoder } from '../../src/protocols/sse-parse';

/** A vendor that serves every tool kind: these tests are about the format, not a vendor's limits. */
const EVERY_CAPABILITY = { customTools: true, mcpServers: true, mcpCalls: true, mcpApprovals: true };

const catalog = builtinCatalog();
const model = (id: string): TextModel => findModel(catalog, id, 'text')!;
const SONNET = model('anthropic/claude-sonnet-4-5'); // max output 64,000
const GPT_4O_MINI = model('openai/gpt-4o-mini'); // no effort setting

const base = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] };
const body = (extra: Record<string, unknown>) => ({ ...base, ...extra });

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a 400 refusal');
}

function decodeForModel(raw: unknown, m: TextModel): CanonicalRequest {
  const { decoded, names } = decodeMessagesIngress(raw);
  try {
    const { maxOutputTokens } = clampOutputLimit(m, decoded.outputLimit.value, decoded.outputLimit.fallback);
    const request: CanonicalRequest = { ...decoded.request, model: m, maxOutputTokens };
    return validateCanonicalRequest(request, EVERY_CAPABILITY);
  } catch (error) {
    // As the text endpoints answer: the rules' refusals named as this format names the fields.
    throw namedFor(error, names);
  }
}

/** 2,000 input tokens of which 1,500 read from cache and 300 written to it (200 for 5 minutes, 100 for an hour). */
const usage: CanonicalUsage = {
  inputTokens: 2000,
  cachedInputTokens: 1500,
  cacheWrite5mInputTokens: 200,
  cacheWrite1hInputTokens: 100,
  outputTokens: 500,
  reasoningTokens: 320,
};
const meta = { id: 'msg_test', model: 'anthropic/claude-sonnet-4-5', created: 1_760_000_000 };

function sse(text: string): Array<{ event: string; data: string }> {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

function clientAnswering(payload: string, contentType: string): Anthropic {
  return new Anthropic({
    apiKey: 'test',
    baseURL: 'http://tollgate.test',
    maxRetries: 0,
    fetch: async () => new Response(payload, { status: 200, headers: { 'content-type': contentType } }),
  });
}

describe('decodeMessagesRequest: valid requests', () => {
  test('a full request decodes into the exact canonical form', () => {
    const decoded = decodeMessagesRequest({
      model: 'claude-sonnet-4-5',
      max_tokens: 8000,
      system: [
        { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Use metric.' },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the tool.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '3°C' }] },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'timeout', is_error: true },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
        { role: 'assistant', content: 'Sunny.' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather now', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
        { type: 'custom', name: 'get_time', input_schema: { type: 'object' }, strict: true },
      ],
      mcp_servers: [
        {
          type: 'url',
          url: 'https://mcp.example.com/sse',
          name: 'docs',
          authorization_token: 'tok',
          tool_configuration: { allowed_tools: ['search'] },
        },
        { type: 'url', url: 'https://off.example.com', name: 'off', tool_configuration: { enabled: false } },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 4000 },
      output_config: { effort: 'max', format: { type: 'json_schema', schema: { type: 'object' } } },
      stop_sequences: ['END'],
      temperature: 1,
      top_p: 0.9,
      metadata: { user_id: 'user-9' },
      stream: true,
      service_tier: 'auto',
    });
    expect(decoded.modelId).toBe('claude-sonnet-4-5');
    expect(decoded.stream).toBe(true);
    expect(decoded.outputLimit).toEqual({ value: 8000, fallback: 0 });
    expect(decoded.request).toStrictEqual({
      messages: [
        // A cache breakpoint ends a run of text blocks, so it stays after the same text.
        { role: 'system', content: 'Be brief.', cacheBreakpoint: {} },
        { role: 'system', content: 'Use metric.' },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: 'Checking.',
          toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}', kind: 'function' }],
          reasoning: [
            { text: 'Need the tool.', signature: 'sig-1' },
            { text: '', redactedData: 'opaque' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: '3°C', isError: false },
        { role: 'tool', toolCallId: 'toolu_2', content: 'timeout', isError: true },
        { role: 'user', content: 'And tomorrow?' },
        { role: 'assistant', content: 'Sunny.', toolCalls: [], reasoning: [] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather now',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
        { type: 'function', name: 'get_time', parameters: { type: 'object' }, strict: true },
        {
          type: 'mcp',
          serverLabel: 'docs',
          serverUrl: 'https://mcp.example.com/sse',
          authorization: 'tok',
          allowedTools: ['search'],
          requireApproval: 'never',
        },
      ],
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 'output', schema: { type: 'object' }, strict: true },
      stop: ['END'],
      temperature: 1,
      topP: 0.9,
      reasoning: { mode: 'enabled', budgetTokens: 4000, effort: 'extra_high' },
      user: 'user-9',
      // service_tier and the breakpoint are Anthropic's alone: kept for it, and hints the others drop.
      vendorOnly: {
        protocol: 'anthropic',
        body: { service_tier: 'auto' },
        toolFields: {},
        headers: {},
        contextEdits: [],
        deferredTools: [],
        hints: ['service_tier', 'system[0].cache_control'],
      },
    });
  });

  test('an assistant turn with MCP calls splits around them, in order, each call joined with its result', () => {
    const messages = decodeMessagesRequest(
      body({
        messages: [
          { role: 'user', content: 'Search' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Looking.' },
              { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 'docs', input: { q: 'x' } },
              { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'found x' }] },
              { type: 'mcp_tool_use', id: 'mcptoolu_2', name: 'fetch', server_name: 'docs', input: {} },
              { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_2', is_error: true, content: 'gone' },
              { type: 'text', text: 'Found x.' },
            ],
          },
          { role: 'user', content: 'Thanks' },
        ],
      }),
    ).request.messages;
    expect(messages).toStrictEqual([
      { role: 'user', content: 'Search' },
      { role: 'assistant', content: 'Looking.', toolCalls: [], reasoning: [] },
      {
        role: 'mcp',
        item: { kind: 'call', id: 'mcptoolu_1', serverLabel: 'docs', name: 'search', arguments: '{"q":"x"}', output: 'found x' },
      },
      { role: 'mcp', item: { kind: 'call', id: 'mcptoolu_2', serverLabel: 'docs', name: 'fetch', arguments: '{}', error: 'gone' } },
      { role: 'assistant', content: 'Found x.', toolCalls: [], reasoning: [] },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  test('a minimal request', () => {
    const decoded = decodeMessagesRequest(base);
    expect(decoded.stream).toBe(false);
    expect(decoded.request).toStrictEqual({ messages: [{ role: 'user', content: 'Hi' }], tools: [], reasoning: { mode: 'default' } });
  });

  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['thinking disabled', { thinking: { type: 'disabled' } }, { reasoning: { mode: 'disabled' } }],
    [
      'thinking adaptive with effort',
      { thinking: { type: 'adaptive' }, output_config: { effort: 'low' } },
      { reasoning: { mode: 'adaptive', effort: 'low' } },
    ],
    ['xhigh effort', { output_config: { effort: 'xhigh' } }, { reasoning: { mode: 'default', effort: 'extra_high' } }],
    ['tool_choice auto', { tool_choice: { type: 'auto' } }, { toolChoice: 'auto' }],
    [
      'tool_choice auto allowing parallel',
      { tool_choice: { type: 'auto', disable_parallel_tool_use: false } },
      { toolChoice: 'auto', parallelToolCalls: true },
    ],
    ['tool_choice none', { tool_choice: { type: 'none' } }, { toolChoice: 'none' }],
    [
      'tool_choice tool',
      { tools: [{ name: 't', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 't' } },
      { toolChoice: { name: 't' } },
    ],
    [
      'beta output_format',
      { output_format: { type: 'json_schema', schema: { type: 'object' } } },
      { responseFormat: { type: 'json_schema', name: 'output', schema: { type: 'object' }, strict: true } },
    ],
    [
      'a system role inside messages',
      {
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'U' },
        ],
      },
      {
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'U' },
        ],
      },
    ],
  ])('%s', (_name, extra, expected) => {
    expect(decodeMessagesRequest(body(extra)).request).toMatchObject(expected);
  });
});

describe('decodeMessagesRequest: refusals name the field', () => {
  const manyTools = Array.from({ length: 65 }, (_, i) => ({ name: `t${i}`, input_schema: { type: 'object' } }));
  test.each<[string, unknown, string]>([
    ['missing max_tokens', { model: 'x', messages: base.messages }, 'max_tokens'],
    ['missing model', { max_tokens: 10, messages: base.messages }, 'model'],
    ['missing messages', { model: 'x', max_tokens: 10 }, 'messages'],
    ['unknown field', body({ frequency_penalty: 1 }), 'frequency_penalty'],
    ['top_k negative', body({ top_k: -1 }), 'top_k'],
    ['inference_geo', body({ inference_geo: 'us' }), 'inference_geo'],
    ['thread', body({ thread: { type: 'create' } }), 'thread'],
    ['fallbacks', body({ fallbacks: ['claude-haiku-4-5'] }), 'fallbacks'],
    ['compaction', body({ compaction: { type: 'compact' } }), 'compaction'],
    ['speed fast', body({ speed: 'fast' }), 'speed'],
    ['billing to a user profile', body({ billing_policy: { type: 'billing_policy', bill_to: 'user_profile' } }), 'billing_policy.bill_to'],
    ['unknown tool field', body({ tools: [{ name: 't', input_schema: { type: 'object' }, eager: true }] }), 'tools[0].eager'],
    [
      'eager_input_streaming not a boolean',
      body({ tools: [{ name: 't', input_schema: { type: 'object' }, eager_input_streaming: 'yes' }] }),
      'tools[0].eager_input_streaming',
    ],
    ['unknown context edit', body({ context_management: { edits: [{ type: 'forget_everything' }] } }), 'context_management.edits[0].type'],
    [
      'context edit keep malformed',
      body({ context_management: { edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns' } }] } }),
      'context_management.edits[0].keep.value',
    ],
    ['container', body({ container: 'c' }), 'container'],
    ['bad role', body({ messages: [{ role: 'tool', content: 'x' }] }), 'messages[0].role'],
    [
      'image block',
      body({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://x' } }] },
        ],
      }),
      'messages[2].content[0].type',
    ],
    [
      'document block',
      body({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'document', source: {} },
            ],
          },
        ],
      }),
      'messages[0].content[1].type',
    ],
    [
      'image in a tool result',
      body({
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }] }],
      }),
      'messages[0].content[0].content[0].type',
    ],
    [
      'server tool use block',
      body({ messages: [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }] }),
      'messages[0].content[0].type',
    ],
    [
      'tool_use in a user turn',
      body({ messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] }),
      'messages[0].content[0].type',
    ],
    [
      'tool_use input not an object',
      body({ messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: 'x' }] }] }),
      'messages[0].content[0].input',
    ],
    [
      'thinking without signature',
      body({ messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }] }),
      'messages[0].content[0].signature',
    ],
    ['system not text', body({ system: [{ type: 'image', source: {} }] }), 'system[0].type'],
    ['web search server tool', body({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), 'tools[0].type'],
    [
      'bash tool',
      body({
        tools: [
          { name: 'ok', input_schema: { type: 'object' } },
          { type: 'bash_20250124', name: 'bash' },
        ],
      }),
      'tools[1].type',
    ],
    ['tool without input_schema', body({ tools: [{ name: 't' }] }), 'tools[0].input_schema'],
    ['more than 64 tools', body({ tools: manyTools }), 'tools'],
    ['tool_choice unknown tool', body({ tool_choice: { type: 'tool', name: 'missing' } }), 'tool_choice.name'],
    ['tool_choice bad type', body({ tool_choice: { type: 'sometimes' } }), 'tool_choice.type'],
    ['thinking budget below 1024', body({ thinking: { type: 'enabled', budget_tokens: 1000 } }), 'thinking.budget_tokens'],
    ['thinking budget missing', body({ thinking: { type: 'enabled' } }), 'thinking.budget_tokens'],
    ['thinking type', body({ thinking: { type: 'deep' } }), 'thinking.type'],
    ['thinking display unknown', body({ thinking: { type: 'adaptive', display: 'hidden' } }), 'thinking.display'],
    ['effort invalid', body({ output_config: { effort: 'none' } }), 'output_config.effort'],
    [
      'schema over 32 KiB',
      body({ output_config: { format: { type: 'json_schema', schema: { description: 'x'.repeat(33_000) } } } }),
      'output_config.format.schema',
    ],
    [
      'both output formats',
      body({ output_format: { type: 'json_schema', schema: {} }, output_config: { format: { type: 'json_schema', schema: {} } } }),
      'output_format',
    ],
    ['temperature above 1', body({ temperature: 1.5 }), 'temperature'],
    ['stop_sequences not strings', body({ stop_sequences: [1] }), 'stop_sequences[0]'],
    ['metadata unknown key', body({ metadata: { tenant: 'x' } }), 'metadata.tenant'],
    ['mcp server without url', body({ mcp_servers: [{ type: 'url', name: 'x' }] }), 'mcp_servers[0].url'],
    ['mcp server type', body({ mcp_servers: [{ type: 'stdio', name: 'x', url: 'u' }] }), 'mcp_servers[0].type'],
    [
      'mcp_tool_result without its use',
      body({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'mcp_tool_result', tool_use_id: 'm1', content: 'r' }] },
        ],
      }),
      'messages[1].content[0].tool_use_id',
    ],
    [
      'mcp_tool_use without server_name',
      body({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'mcp_tool_use', id: 'm1', name: 's', input: {} }] },
        ],
      }),
      'messages[1].content[0].server_name',
    ],
    [
      'mcp_tool_use in a user turn',
      body({ messages: [{ role: 'user', content: [{ type: 'mcp_tool_use', id: 'm1', name: 's', server_name: 'd', input: {} }] }] }),
      'messages[0].content[0].type',
    ],
  ])('%s → 400 naming the field', (_name, raw, field) => {
    // Decoded, clamped and checked by the canonical rules, as the pipeline does.
    const error = refusal(() => decodeForModel(raw, SONNET));
    expect(error).toMatchObject({ status: 400, code: 'bad_request' });
    expect(error.message).toContain(field);
  });

  test('max_tokens of 0 is refused by the clamp, naming max_tokens', () => {
    expect(refusal(() => decodeForModel(body({ max_tokens: 0 }), SONNET)).message).toContain('max_tokens');
  });
});

describe('canonical rules: thinking headroom after clamping', () => {
  test('a lowered max_tokens that leaves less than 1,024 above the budget is refused', () => {
    // 100,000 is lowered to the model's 64,000: 64,000 − 63,500 = 500 < 1,024.
    const error = refusal(() =>
      decodeForModel(body({ max_tokens: 100_000, thinking: { type: 'enabled', budget_tokens: 63_500 } }), SONNET),
    );
    expect(error).toMatchObject({
      status: 400,
      code: 'bad_request',
      details: { field: 'max_tokens', max_tokens: 64_000, budget_tokens: 63_500 },
    });
    expect(error.message).toContain('max_tokens');
    expect(error.message).toContain('thinking.budget_tokens');
  });

  test('exactly 1,024 of headroom is enough', () => {
    const request = decodeForModel(body({ max_tokens: 100_000, thinking: { type: 'enabled', budget_tokens: 64_000 - 1024 } }), SONNET);
    expect(request.maxOutputTokens).toBe(64_000);
    expect(request.reasoning).toEqual({ mode: 'enabled', budgetTokens: 62_976 });
  });

  test('an unlowered max_tokens too close to the budget is refused too', () => {
    expect(
      refusal(() => decodeForModel(body({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 } }), SONNET)).message,
    ).toContain('max_tokens');
  });

  test('a model without an effort setting drops thinking and effort (nothing to constrain)', () => {
    const request = decodeForModel(
      body({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1500 }, output_config: { effort: 'high' } }),
      GPT_4O_MINI,
    );
    expect(request.reasoning).toEqual({ mode: 'default' });
  });
});

const answerEvents: CanonicalEvent[] = [
  { type: 'reasoning-delta', text: 'Need ' },
  { type: 'reasoning-delta', text: 'weather.' },
  { type: 'reasoning-end', signature: 'sig-1' },
  { type: 'reasoning-end', redactedData: 'opaque' },
  { type: 'text-delta', text: 'Let me ' },
  { type: 'text-delta', text: 'check.' },
  { type: 'tool-call-start', index: 0, id: 'toolu_1', name: 'get_weather', kind: 'function' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: '"Oslo"}' },
  { type: 'tool-call-end', index: 0 },
  { type: 'finish', reason: 'tool_calls', refusal: false, usage },
];

describe('encodeMessagesResponse', () => {
  test('thinking, text and tool use: the exact message, input_tokens without cache reads and writes', () => {
    expect(encodeMessagesResponse(collectEvents(answerEvents), meta)).toStrictEqual({
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'anthropic/claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'Need weather.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 200,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 1500,
        cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
        output_tokens: 500,
        output_tokens_details: { thinking_tokens: 320 },
      },
    });
  });

  test.each<[string, FinishReason, boolean, string | undefined, string]>([
    ['stop', 'stop', false, undefined, 'end_turn'],
    ['stop sequence', 'stop', false, 'END', 'stop_sequence'],
    ['length', 'length', false, undefined, 'max_tokens'],
    ['tool calls', 'tool_calls', false, undefined, 'tool_use'],
    ['safety refusal', 'stop', true, undefined, 'refusal'],
    ['vendor content filter', 'content_filter', false, undefined, 'refusal'],
  ])('%s → stop_reason %s', (_name, reason, isRefusal, stopSequence, expected) => {
    const finish: CanonicalEvent = { type: 'finish', reason, refusal: isRefusal, usage, ...(stopSequence ? { stopSequence } : {}) };
    const answer = encodeMessagesResponse(collectEvents([finish]), meta);
    expect(answer.stop_reason).toBe(expected);
    expect(answer.stop_sequence).toBe(stopSequence ?? null);
  });

  test('usage without cache figures; an estimated thinking count passes through', () => {
    const answer = encodeMessagesResponse(
      collectEvents([
        {
          type: 'finish',
          reason: 'stop',
          refusal: false,
          usage: { inputTokens: 50, cachedInputTokens: 0, outputTokens: 90, reasoningTokens: 61 },
        },
      ]),
      meta,
    );
    expect(answer.usage).toEqual({
      input_tokens: 50,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: 90,
      output_tokens_details: { thinking_tokens: 61 },
    });
  });

  test('malformed tool arguments become an empty input object', () => {
    const answer = encodeMessagesResponse(
      collectEvents([
        { type: 'tool-call-start', index: 0, id: 't', name: 'n', kind: 'function' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"broken' },
        { type: 'finish', reason: 'tool_calls', refusal: false, usage },
      ]),
      meta,
    );
    expect(answer.content).toEqual([{ type: 'tool_use', id: 't', name: 'n', input: {} }]);
  });

  test('the Anthropic SDK reads it', async () => {
    const client = clientAnswering(JSON.stringify(encodeMessagesResponse(collectEvents(answerEvents), meta)), 'application/json');
    const answer = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'text', 'tool_use']);
  });
});

function encodeAll(events: CanonicalEvent[], inputTokens?: number): string {
  const encoder = new MessagesStreamEncoder({
    ...meta,
    ...(inputTokens !== undefined ? { inputUsage: { inputTokens, cachedInputTokens: 0 } } : {}),
  });
  return events.map((e) => encoder.encode(e)).join('');
}

describe('MessagesStreamEncoder', () => {
  test('the exact event sequence, every frame named', () => {
    const frames = sse(encodeAll(answerEvents, 1800));
    const events = frames.map((f) => JSON.parse(f.data));
    expect(frames.map((f) => f.event)).toEqual(events.map((e) => e.type));
    expect(events).toStrictEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_test',
          type: 'message',
          role: 'assistant',
          model: 'anthropic/claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1800, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Need ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'weather.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Let me ' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'check.' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          input_tokens: 200,
          cache_creation_input_tokens: 300,
          cache_read_input_tokens: 1500,
          cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
          output_tokens: 500,
          output_tokens_details: { thinking_tokens: 320 },
        },
      },
      { type: 'message_stop' },
    ]);
  });

  test('a block still open at the finish is stopped before message_delta', () => {
    const types = sse(
      encodeAll([
        { type: 'text-delta', text: 'Part' },
        { type: 'finish', reason: 'length', refusal: false, usage },
      ]),
    ).map((f) => JSON.parse(f.data));
    expect(types.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(types[4].delta).toEqual({ stop_reason: 'max_tokens', stop_sequence: null });
  });

  test('a failure: an Anthropic error event and nothing after', () => {
    const encoder = new MessagesStreamEncoder(meta);
    const text =
      encoder.encode({ type: 'text-delta', text: 'Hel' }) +
      encoder.encodeError(new ProviderError('The provider failed.', 'anthropic', 529));
    const frames = sse(text);
    // Anthropic's type and message, Tollgate's code and details beside them.
    expect(JSON.parse(frames.at(-1)!.data)).toEqual({
      type: 'error',
      error: {
        type: 'api_error',
        message: 'The provider failed.',
        code: 'provider_error',
        details: { vendor: 'anthropic', vendor_status: 529 },
      },
    });
    expect(frames.at(-1)!.event).toBe('error');
    expect(encoder.encode({ type: 'finish', reason: 'stop', refusal: false, usage })).toBe('');
  });

  test.each<[number, string]>([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
  ])('status %i → error type %s', (status, type) => {
    expect(messagesErrorType(status)).toBe(type);
  });

  test('the Anthropic SDK MessageStream accumulates it, taking the real usage from message_delta', async () => {
    const client = clientAnswering(encodeAll(answerEvents), 'text/event-stream');
    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    const texts: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    const final = await stream.finalMessage();
    expect(texts).toEqual(['Let me ', 'check.']);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Need weather.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(final.usage).toMatchObject({
      input_tokens: 200,
      cache_read_input_tokens: 1500,
      cache_creation_input_tokens: 300,
      output_tokens: 500,
      output_tokens_details: { thinking_tokens: 320 },
    });
  });

  test('the Anthropic SDK raises the error event', async () => {
    const encoder = new MessagesStreamEncoder(meta);
    const client = clientAnswering(
      encoder.encode({ type: 'text-delta', text: 'Hel' }) + encoder.encodeError(new ProviderError('upstream down', 'anthropic')),
      'text/event-stream',
    );
    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    await expect(stream.finalMessage()).rejects.toMatchObject({ type: 'api_error' });
  });
});
