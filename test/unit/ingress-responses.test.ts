import OpenAI from 'openai';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { CanonicalEvent, CanonicalRequest, CanonicalUsage } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { clampOutputLimit } from '../../src/domain/generation/rules';
import { validateCanonicalRequest } from '../../src/domain/generation/validate';
import { namedFor } from '../../src/domain/generation/field-keys';
import { ApiError } from '../../src/domain/shared/errors';
import { type IdFactory, collectEvents } from '../../src/protocols/collect';
import { REDACTED_REASONING_PREFIX } from '../../src/protocols/openai-responses/decode-input';
import { type ResponsesEcho, decodeResponsesIngress, decodeResponsesRequest } from '../../src/protocols/openai-responses/decode-request';
import { type ResponsesMeta, encodeResponsesResponse } from '../../src/protocols/openai-responses/encode-answer';
import { ResponsesStreamEncoder } from '../../src/protocols/openai-responses/stream-encoder';
import { SseDecoder } from '../../src/protocols/sse-parse';

/** A vendor that serves every tool kind: these tests are about the format, not a vendor's limits. */
const EVERY_CAPABILITY = { customTools: true, mcpServers: true, mcpCalls: true, mcpApprovals: true };

const catalog = builtinCatalog();
const model = (id: string): TextModel => findModel(catalog, id, 'text')!;
const O4_MINI = model('openai/o4-mini');
const GPT_41 = model('openai/gpt-4.1');

const base = { model: 'o4-mini', input: 'Hi' };
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
  const { decoded, names } = decodeResponsesIngress(raw);
  try {
    const { maxOutputTokens } = clampOutputLimit(m, decoded.outputLimit.value, decoded.outputLimit.fallback);
    const request: CanonicalRequest = { ...decoded.request, model: m, maxOutputTokens };
    return validateCanonicalRequest(request, EVERY_CAPABILITY);
  } catch (error) {
    // As the text endpoints answer: the rules' refusals named as this format names the fields.
    throw namedFor(error, names);
  }
}

const usage: CanonicalUsage = { inputTokens: 900, cachedInputTokens: 512, outputTokens: 400, reasoningTokens: 250 };

function counterIds(): IdFactory {
  let n = 0;
  return (prefix) => `${prefix}${++n}`;
}

function metaFor(raw: unknown, id = 'resp_test'): ResponsesMeta {
  return {
    id,
    model: 'openai/o4-mini',
    created: 1_760_000_000,
    now: () => 1_760_000_002,
    newId: counterIds(),
    echo: decodeResponsesIngress(raw).echo,
  };
}

function sse(text: string): Array<{ event: string; data: string }> {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

function clientAnswering(payload: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'test',
    baseURL: 'http://tollgate.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(payload, { status: 200, headers: { 'content-type': contentType } }),
  });
}

describe('decodeResponsesRequest: valid requests', () => {
  const full = {
    model: 'o4-mini',
    instructions: 'Be brief.',
    input: [
      { role: 'developer', content: 'Use metric units.' },
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Need the tool.' }], encrypted_content: 'sig-abc' },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Checking.', annotations: [] }],
        status: 'completed',
        id: 'msg_1',
      },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'custom_tool_call', call_id: 'call_2', name: 'run_sql', input: 'SELECT 1' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"temp":3}' },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '1' }] },
      { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: `${REDACTED_REASONING_PREFIX}opaque` },
      { role: 'assistant', content: 'It is 3°C.' },
      { role: 'user', content: 'Thanks' },
    ],
    tools: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather now',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: true,
      },
      {
        type: 'custom',
        name: 'run_sql',
        description: 'Runs SQL',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: "SELECT 1"' },
      },
      {
        type: 'mcp',
        server_label: 'docs',
        server_url: 'https://mcp.example.com/sse',
        allowed_tools: { tool_names: ['search'] },
        headers: { 'x-team': 'a' },
        authorization: 'secret-token',
        require_approval: 'never',
      },
    ],
    tool_choice: { type: 'function', name: 'get_weather' },
    parallel_tool_calls: false,
    text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    max_output_tokens: 3000,
    reasoning: { effort: 'xhigh', summary: 'auto' },
    temperature: 0.2,
    top_p: 0.8,
    user: 'user-7',
    metadata: { team: 'a' },
    include: ['reasoning.encrypted_content'],
    store: false,
    stream: true,
    truncation: 'disabled',
  };

  test('a full request decodes into the exact canonical form', () => {
    const { decoded, names } = decodeResponsesIngress(full);
    expect(decoded.modelId).toBe('o4-mini');
    expect(decoded.stream).toBe(true);
    expect(decoded.outputLimit).toEqual({ value: 3000, fallback: 4096 });
    expect(names.fields['text.outputLimit']).toBe('max_output_tokens');
    expect(decoded.request).toStrictEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Use metric units.' },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: 'Checking.',
          toolCalls: [
            { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', kind: 'function' },
            { id: 'call_2', name: 'run_sql', arguments: 'SELECT 1', kind: 'custom' },
          ],
          reasoning: [{ text: 'Need the tool.', signature: 'sig-abc' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: '{"temp":3}', isError: false },
        { role: 'tool', toolCallId: 'call_2', content: '1', isError: false },
        { role: 'assistant', content: 'It is 3°C.', toolCalls: [], reasoning: [{ text: '', redactedData: 'opaque' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather now',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
        {
          type: 'custom',
          name: 'run_sql',
          description: 'Runs SQL',
          format: { type: 'grammar', syntax: 'lark', definition: 'start: "SELECT 1"' },
        },
        {
          type: 'mcp',
          serverLabel: 'docs',
          serverUrl: 'https://mcp.example.com/sse',
          allowedTools: ['search'],
          headers: { 'x-team': 'a' },
          authorization: 'secret-token',
          requireApproval: 'never',
        },
      ],
      toolChoice: { name: 'get_weather' },
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      temperature: 0.2,
      topP: 0.8,
      reasoning: { mode: 'default', effort: 'extra_high' },
      user: 'user-7',
    });
  });

  test('the echo repeats the settings, never MCP credentials', () => {
    const { echo } = decodeResponsesIngress(full);
    expect(echo).toStrictEqual({
      settings: {
        instructions: 'Be brief.',
        tools: [
          {
            type: 'function',
            name: 'get_weather',
            description: 'Weather now',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            strict: true,
          },
          {
            type: 'custom',
            name: 'run_sql',
            description: 'Runs SQL',
            format: { type: 'grammar', syntax: 'lark', definition: 'start: "SELECT 1"' },
          },
          {
            type: 'mcp',
            server_label: 'docs',
            server_url: 'https://mcp.example.com/sse',
            allowed_tools: ['search'],
            require_approval: 'never',
          },
        ],
        tool_choice: { type: 'function', name: 'get_weather' },
        parallel_tool_calls: false,
        text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
        max_output_tokens: 3000,
        max_tool_calls: null,
        temperature: 0.2,
        top_p: 0.8,
        presence_penalty: 0,
        frequency_penalty: 0,
        top_logprobs: 0,
        reasoning: { effort: 'xhigh', summary: 'auto' },
        metadata: { team: 'a' },
        user: 'user-7',
        safety_identifier: null,
        prompt_cache_key: null,
      },
      includeEncryptedReasoning: true,
      namespaces: new Map(),
    } satisfies ResponsesEcho);
  });

  test('MCP items of an earlier turn, as the SDK sends them back (nulls included), become mcp messages in order', () => {
    const input = [
      { role: 'user', content: 'Search' },
      {
        type: 'mcp_list_tools',
        id: 'mcpl_1',
        server_label: 'docs',
        tools: [{ name: 'search', input_schema: { type: 'object' }, description: null, annotations: { read_only: true } }],
        error: null,
      },
      {
        type: 'mcp_call',
        id: 'mcp_1',
        server_label: 'docs',
        name: 'search',
        arguments: '{}',
        output: 'x',
        error: null,
        approval_request_id: null,
        status: 'completed',
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Found x.', annotations: [] }] },
      { type: 'mcp_approval_request', id: 'mcpr_2', server_label: 'docs', name: 'search', arguments: '{"q":"y"}' },
      { type: 'mcp_approval_response', approval_request_id: 'mcpr_2', approve: false, reason: 'not now' },
    ];
    expect(decodeResponsesRequest(body({ input })).request.messages).toStrictEqual([
      { role: 'user', content: 'Search' },
      {
        role: 'mcp',
        item: {
          kind: 'list_tools',
          id: 'mcpl_1',
          serverLabel: 'docs',
          tools: [{ name: 'search', inputSchema: { type: 'object' }, annotations: { read_only: true } }],
        },
      },
      { role: 'mcp', item: { kind: 'call', id: 'mcp_1', serverLabel: 'docs', name: 'search', arguments: '{}', output: 'x' } },
      { role: 'assistant', content: 'Found x.', toolCalls: [], reasoning: [] },
      { role: 'mcp', item: { kind: 'approval_request', id: 'mcpr_2', serverLabel: 'docs', name: 'search', arguments: '{"q":"y"}' } },
      { role: 'mcp', item: { kind: 'approval_response', approvalRequestId: 'mcpr_2', approve: false, reason: 'not now' } },
    ]);
  });

  test('a string input is one user message; defaults apply', () => {
    const { decoded, echo } = decodeResponsesIngress(base);
    expect(decoded.request).toStrictEqual({ messages: [{ role: 'user', content: 'Hi' }], tools: [], reasoning: { mode: 'default' } });
    expect(decoded.stream).toBe(false);
    expect(decoded.outputLimit).toEqual({ value: undefined, fallback: 4096 });
    expect(echo).toMatchObject({
      settings: {
        tool_choice: 'auto',
        parallel_tool_calls: true,
        text: { format: { type: 'text' } },
        max_output_tokens: null,
        temperature: 1,
        top_p: 1,
      },
      includeEncryptedReasoning: false,
    });
  });

  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['store absent or false is stateless', { store: false }, {}],
    [
      'require_approval filters are kept',
      {
        tools: [
          {
            type: 'mcp',
            server_label: 's',
            server_url: 'https://m',
            require_approval: { never: { tool_names: ['a'] }, always: { read_only: false } },
          },
        ],
      },
      {
        tools: [
          {
            type: 'mcp',
            serverLabel: 's',
            serverUrl: 'https://m',
            requireApproval: { never: { toolNames: ['a'] }, always: { readOnly: false } },
          },
        ],
      },
    ],
    [
      'require_approval always',
      { tools: [{ type: 'mcp', server_label: 's', server_url: 'https://m', require_approval: 'always' }] },
      { tools: [{ type: 'mcp', serverLabel: 's', serverUrl: 'https://m', requireApproval: 'always' }] },
    ],
    [
      'allowed_tools as a list',
      { tools: [{ type: 'mcp', server_label: 's', server_url: 'https://m', allowed_tools: ['a', 'b'] }] },
      { tools: [{ type: 'mcp', serverLabel: 's', serverUrl: 'https://m', allowedTools: ['a', 'b'] }] },
    ],
    [
      'function tool with null parameters',
      { tools: [{ type: 'function', name: 'f', parameters: null, strict: null }] },
      { tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }] },
    ],
    ['json_object format', { text: { format: { type: 'json_object' } } }, { responseFormat: { type: 'json_object' } }],
    ['minimal effort', { reasoning: { effort: 'minimal' } }, { reasoning: { mode: 'default', effort: 'low' } }],
    [
      'custom tool_choice',
      { tools: [{ type: 'custom', name: 'c' }], tool_choice: { type: 'custom', name: 'c' } },
      { toolChoice: { name: 'c' } },
    ],
  ])('%s', (_name, extra, expected) => {
    expect(decodeResponsesRequest(body(extra)).request).toMatchObject(expected);
  });
});

describe('decodeResponsesRequest: refusals name the field', () => {
  const manyTools = Array.from({ length: 65 }, (_, i) => ({ type: 'function', name: `f${i}` }));
  test.each<[string, unknown, string]>([
    ['missing input', { model: 'o4-mini' }, 'input'],
    ['empty input', body({ input: [] }), 'input'],
    ['unknown field', body({ logit_bias: {} }), 'logit_bias'],
    ['frequency_penalty out of range', body({ frequency_penalty: 3 }), 'frequency_penalty'],
    ['top_logprobs', body({ top_logprobs: 2 }), 'top_logprobs'],
    ['moderation', body({ moderation: { model: 'omni-moderation-latest' } }), 'moderation'],
    ['context_management', body({ context_management: [{ type: 'compaction', compact_threshold: 1000 }] }), 'context_management'],
    [
      'namespace of a hosted tool',
      body({ tools: [{ type: 'namespace', name: 'n', description: 'd', tools: [{ type: 'web_search' }] }] }),
      'tools[0].tools[0].type',
    ],
    [
      'namespaced name over 64 characters',
      body({ tools: [{ type: 'namespace', name: 'n'.repeat(40), description: 'd', tools: [{ type: 'function', name: 'f'.repeat(30) }] }] }),
      'tools[0].tools[0].name',
    ],
    [
      'namespaced tool served under a declared name',
      body({
        tools: [
          { type: 'function', name: 'ns__f' },
          { type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'function', name: 'f' }] },
        ],
      }),
      "declare 'ns__f' twice",
    ],
    ['store true', body({ store: true }), 'store'],
    ['previous_response_id', body({ previous_response_id: 'resp_1' }), 'previous_response_id'],
    ['background', body({ background: true }), 'background'],
    ['conversation', body({ conversation: 'conv_1' }), 'conversation'],
    ['stored prompt', body({ prompt: { id: 'pmpt_1' } }), 'prompt'],
    [
      'include other than encrypted reasoning',
      body({ include: ['reasoning.encrypted_content', 'message.output_text.logprobs'] }),
      'include[1]',
    ],
    ['truncation auto', body({ truncation: 'auto' }), 'truncation'],
    [
      'image input part',
      body({
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'a' },
              { type: 'input_image', image_url: 'http://x' },
            ],
          },
        ],
      }),
      'input[0].content[1].type',
    ],
    ['file input part', body({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }), 'input[0].content[0].type'],
    ['item reference', body({ input: [{ type: 'item_reference', id: 'msg_1' }] }), 'input[0].type'],
    [
      'web search call item',
      body({
        input: [
          { role: 'user', content: 'x' },
          { type: 'web_search_call', id: 'ws' },
        ],
      }),
      'input[1].type',
    ],
    ['bad role', body({ input: [{ role: 'tool', content: 'x' }] }), 'input[0].role'],
    ['function_call without call_id', body({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }), 'input[0].call_id'],
    [
      'image in tool output',
      body({ input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'x' }] }] }),
      'input[0].output[0].type',
    ],
    ['web_search tool', body({ tools: [{ type: 'web_search' }] }), 'tools[0].type'],
    [
      'file_search tool',
      body({
        tools: [
          { type: 'function', name: 'f' },
          { type: 'file_search', vector_store_ids: [] },
        ],
      }),
      'tools[1].type',
    ],
    ['computer tool', body({ tools: [{ type: 'computer_use_preview' }] }), 'tools[0].type'],
    ['code interpreter', body({ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }), 'tools[0].type'],
    ['image generation', body({ tools: [{ type: 'image_generation' }] }), 'tools[0].type'],
    ['more than 64 tools', body({ tools: manyTools }), 'tools'],
    ['mcp without server_url', body({ tools: [{ type: 'mcp', server_label: 's' }] }), 'tools[0].server_url'],
    ['mcp connector', body({ tools: [{ type: 'mcp', server_label: 's', connector_id: 'connector_gmail' }] }), 'tools[0].connector_id'],
    [
      'mcp read_only filter',
      body({ tools: [{ type: 'mcp', server_label: 's', server_url: 'https://m', allowed_tools: { read_only: true } }] }),
      'tools[0].allowed_tools.read_only',
    ],
    [
      'mcp require_approval value',
      body({ tools: [{ type: 'mcp', server_label: 's', server_url: 'https://m', require_approval: 'sometimes' }] }),
      'tools[0].require_approval',
    ],
    [
      'mcp require_approval filter key',
      body({ tools: [{ type: 'mcp', server_label: 's', server_url: 'https://m', require_approval: { always: { names: ['a'] } } }] }),
      'tools[0].require_approval.always.names',
    ],
    [
      'mcp_approval_response without approve',
      body({
        input: [
          { role: 'user', content: 'x' },
          { type: 'mcp_approval_response', approval_request_id: 'mcpr_1' },
        ],
      }),
      'input[1].approve',
    ],
    [
      'mcp_approval_response without its request id',
      body({ input: [{ type: 'mcp_approval_response', approve: true }] }),
      'input[0].approval_request_id',
    ],
    [
      'mcp_call without arguments',
      body({ input: [{ type: 'mcp_call', id: 'mcp_1', server_label: 's', name: 'f' }] }),
      'input[0].arguments',
    ],
    [
      'mcp_list_tools tool without name',
      body({ input: [{ type: 'mcp_list_tools', id: 'mcpl_1', server_label: 's', tools: [{ input_schema: {} }] }] }),
      'input[0].tools[0].name',
    ],
    [
      'mcp_approval_request with an unknown field',
      body({ input: [{ type: 'mcp_approval_request', id: 'mcpr_1', server_label: 's', name: 'f', arguments: '{}', status: 'x' }] }),
      'input[0].status',
    ],
    ['tool_choice mcp', body({ tool_choice: { type: 'mcp', server_label: 's' } }), 'tool_choice.type'],
    ['tool_choice hosted', body({ tool_choice: { type: 'web_search_preview' } }), 'tool_choice.type'],
    [
      'tool_choice unknown function',
      body({ tools: [{ type: 'function', name: 'a' }], tool_choice: { type: 'function', name: 'b' } }),
      'tool_choice.name',
    ],
    ['text.format type', body({ text: { format: { type: 'xml' } } }), 'text.format.type'],
    [
      'text.format schema over 32 KiB',
      body({ text: { format: { type: 'json_schema', name: 'big', schema: { description: 'x'.repeat(40_000) } } } }),
      'text.format.schema',
    ],
    ['text.format without name', body({ text: { format: { type: 'json_schema', schema: {} } } }), 'text.format.name'],
    ['verbosity value', body({ text: { verbosity: 'loud' } }), 'text.verbosity'],
    ['reasoning.effort invalid', body({ reasoning: { effort: 'max' } }), 'reasoning.effort'],
    ['temperature', body({ temperature: 3 }), 'temperature'],
    ['metadata value not a string', body({ metadata: { a: 1 } }), 'metadata.a'],
    ['max_tool_calls negative', body({ max_tool_calls: -1 }), 'max_tool_calls'],
  ])('%s → 400 naming the field', (_name, raw, field) => {
    // Decoded, clamped and checked by the canonical rules, as the pipeline does.
    const error = refusal(() => decodeForModel(raw, O4_MINI));
    expect(error).toMatchObject({ status: 400, code: 'bad_request' });
    expect(error.message).toContain(field);
  });

  test('a named tool_choice must name a declared tool of its own kind', () => {
    const raw = body({ tools: [{ type: 'function', name: 'c' }], tool_choice: { type: 'custom', name: 'c' } });
    expect(refusal(() => decodeForModel(raw, O4_MINI))).toMatchObject({
      message: "tool_choice.name 'c' does not name a custom tool in tools",
      details: { field: 'tool_choice.name' },
    });
  });

  test('a negative max_output_tokens is refused by the clamp, naming it', () => {
    expect(refusal(() => decodeForModel(body({ max_output_tokens: -1 }), O4_MINI)).message).toContain('max_output_tokens');
  });
});

describe('canonical rules for a model', () => {
  test('reasoning.effort is dropped for a model without an effort setting, kept otherwise', () => {
    expect(decodeForModel(body({ reasoning: { effort: 'high' } }), GPT_41).reasoning).toEqual({ mode: 'default' });
    expect(decodeForModel(body({ reasoning: { effort: 'high' } }), O4_MINI).reasoning).toEqual({ mode: 'default', effort: 'high' });
  });
});

const answerEvents: CanonicalEvent[] = [
  { type: 'reasoning-delta', text: 'Need ' },
  { type: 'reasoning-delta', text: 'weather.' },
  { type: 'reasoning-end', signature: 'sig-1' },
  { type: 'text-delta', text: 'Let me ' },
  { type: 'text-delta', text: 'check.' },
  { type: 'tool-call-start', index: 0, id: 'call_1', name: 'get_weather', kind: 'function' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: '"Oslo"}' },
  { type: 'tool-call-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'call_2', name: 'run_sql', kind: 'custom' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: 'SELECT 1' },
  { type: 'tool-call-end', index: 1 },
  { type: 'finish', reason: 'tool_calls', refusal: false, usage },
];

const withEncrypted = body({ include: ['reasoning.encrypted_content'] });

describe('encodeResponsesResponse', () => {
  test('reasoning, message and tool calls: the exact response object', () => {
    expect(encodeResponsesResponse(collectEvents(answerEvents), metaFor(withEncrypted))).toStrictEqual({
      id: 'resp_test',
      object: 'response',
      created_at: 1_760_000_000,
      completed_at: 1_760_000_002,
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      max_tool_calls: null,
      model: 'openai/o4-mini',
      output: [
        { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need weather.' }], encrypted_content: 'sig-1' },
        {
          id: 'msg_2',
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Let me check.' }],
          role: 'assistant',
        },
        { id: 'fc_3', type: 'function_call', status: 'completed', arguments: '{"city":"Oslo"}', call_id: 'call_1', name: 'get_weather' },
        { id: 'ctc_4', type: 'custom_tool_call', call_id: 'call_2', name: 'run_sql', input: 'SELECT 1' },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      service_tier: 'default',
      store: false,
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      truncation: 'disabled',
      usage: {
        input_tokens: 900,
        input_tokens_details: { cached_tokens: 512 },
        output_tokens: 400,
        output_tokens_details: { reasoning_tokens: 250 },
        total_tokens: 1300,
      },
      user: null,
      safety_identifier: null,
      prompt_cache_key: null,
      metadata: {},
      access_programs: null,
    });
  });

  test('encrypted_content only when included; redacted blocks keep their prefix', () => {
    const events: CanonicalEvent[] = [
      { type: 'reasoning-end', redactedData: 'xyz' },
      { type: 'text-delta', text: 'ok' },
      { type: 'finish', reason: 'stop', refusal: false, usage },
    ];
    expect(encodeResponsesResponse(collectEvents(events), metaFor(withEncrypted)).output[0]).toEqual({
      id: 'rs_1',
      type: 'reasoning',
      summary: [],
      encrypted_content: 'redacted_thinking:xyz',
    });
    expect(encodeResponsesResponse(collectEvents(events), metaFor(base)).output[0]).toEqual({ id: 'rs_1', type: 'reasoning', summary: [] });
  });

  test('limit reached: incomplete with reason max_output_tokens, the message incomplete', () => {
    const answer = encodeResponsesResponse(
      collectEvents([
        { type: 'text-delta', text: 'Part' },
        { type: 'finish', reason: 'length', refusal: false, usage },
      ]),
      metaFor(base),
    );
    expect(answer.status).toBe('incomplete');
    expect(answer.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(answer.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
  });

  test('limit consumed by reasoning: incomplete, no message item', () => {
    const answer = encodeResponsesResponse(
      collectEvents([
        { type: 'reasoning-delta', text: '…' },
        { type: 'finish', reason: 'length', refusal: false, usage },
      ]),
      metaFor(base),
    );
    expect(answer.output.map((o) => o.type)).toEqual(['reasoning']);
    expect(answer.status).toBe('incomplete');
  });

  test('an estimated reasoning count passes through', () => {
    const answer = encodeResponsesResponse(
      collectEvents([{ type: 'finish', reason: 'stop', refusal: false, usage: { ...usage, reasoningTokens: 77 } }]),
      metaFor(base),
    );
    expect(answer.usage?.output_tokens_details).toEqual({ reasoning_tokens: 77 });
  });

  test('the openai SDK reads it (output_text included)', async () => {
    const client = clientAnswering(JSON.stringify(encodeResponsesResponse(collectEvents(answerEvents), metaFor(base))), 'application/json');
    const answer = await client.responses.create({ model: 'o4-mini', input: 'x' });
    expect(answer.output_text).toBe('Let me check.');
    expect(answer.usage?.input_tokens_details.cached_tokens).toBe(512);
  });
});

function encodeAll(events: CanonicalEvent[], raw: unknown = base): string {
  const encoder = new ResponsesStreamEncoder(metaFor(raw));
  return events.map((e) => encoder.encode(e)).join('');
}

describe('ResponsesStreamEncoder', () => {
  test('the event sequence, with event names, types and increasing sequence numbers', () => {
    const frames = sse(encodeAll(answerEvents, withEncrypted));
    const events = frames.map((f) => JSON.parse(f.data));
    expect(frames.map((f) => f.event)).toEqual(events.map((e) => e.type));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0].response).toMatchObject({ id: 'resp_test', status: 'in_progress', output: [], usage: null });
    expect(events[11]).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 11,
      item_id: 'msg_2',
      output_index: 1,
      content_index: 0,
      delta: 'Let me ',
      logprobs: [],
    });
    expect(events[19]).toEqual({
      type: 'response.function_call_arguments.done',
      sequence_number: 19,
      item_id: 'fc_3',
      output_index: 2,
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    });
    const completed = events.at(-1).response;
    expect(completed.status).toBe('completed');
    // The streamed final object equals the non-streaming answer.
    expect(completed).toEqual(encodeResponsesResponse(collectEvents(answerEvents), metaFor(withEncrypted)));
  });

  test('a truncated answer ends with response.incomplete', () => {
    const events = sse(
      encodeAll([
        { type: 'text-delta', text: 'Part' },
        { type: 'finish', reason: 'length', refusal: false, usage },
      ]),
    ).map((f) => JSON.parse(f.data));
    const last = events.at(-1);
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(last.response.output[0]).toMatchObject({ type: 'message', status: 'incomplete', content: [{ text: 'Part' }] });
  });

  test('a failure: error event then response.failed with what was delivered', () => {
    const encoder = new ResponsesStreamEncoder(metaFor(base));
    const text =
      encoder.encode({ type: 'text-delta', text: 'Hel' }) +
      encoder.encodeError(new ProviderError('The provider failed.', 'anthropic', 529));
    const events = sse(text).map((f) => JSON.parse(f.data));
    expect(events.slice(-2)).toEqual([
      {
        type: 'error',
        sequence_number: 5,
        code: 'provider_error',
        message: 'The provider failed.',
        param: null,
        error: { type: 'server_error', code: 'provider_error', message: 'The provider failed.', param: null },
      },
      expect.objectContaining({ type: 'response.failed', sequence_number: 6 }),
    ]);
    expect(events.at(-1).response).toMatchObject({
      status: 'failed',
      error: { code: 'provider_error', message: 'The provider failed.' },
      output: [{ type: 'message', status: 'incomplete', content: [{ text: 'Hel' }] }],
      usage: null,
    });
    expect(encoder.encode({ type: 'finish', reason: 'stop', refusal: false, usage })).toBe('');
  });

  test('a failure before any event still opens the response first', () => {
    const events = sse(new ResponsesStreamEncoder(metaFor(base)).encodeError(new ProviderError('down', 'openai'))).map(
      (f) => JSON.parse(f.data).type,
    );
    expect(events).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed']);
  });

  test('the openai SDK ResponseStream accumulates it into the final response', async () => {
    const client = clientAnswering(encodeAll(answerEvents), 'text/event-stream');
    const stream = client.responses.stream({ model: 'o4-mini', input: 'x' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.snapshot));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Let me ', 'Let me check.']);
    const message = final.output.find((o) => o.type === 'message');
    expect(message?.type === 'message' && message.content).toEqual([
      { type: 'output_text', annotations: [], logprobs: [], text: 'Let me check.', parsed: null },
    ]);
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'custom_tool_call']);
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(250);
  });
});
