import OpenAI from 'openai';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { CanonicalEvent, CanonicalRequest, CanonicalUsage } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { clampOutputLimit } from '../../src/domain/generation/rules';
import { validateCanonicalRequest } from '../../src/domain/generation/validate';
import { namedFor } from '../../src/domain/generation/field-keys';
import { ApiError } from '../../src/domain/shared/errors';
import { collectEvents } from '../../src/protocols/collect';
import { decodeChatIngress, decodeChatRequest } from '../../src/protocols/openai-chat/decode-request';
import { encodeChatResponse } from '../../src/protocols/openai-chat/encode-answer';
import { ChatStreamEncoder } from '../../src/protocols/openai-chat/stream-encoder';
import { SseDecoder } from '../../src/protocols/sse-parse';

/** A vendor that serves every tool kind: these tests are about the format, not a vendor's limits. */
const EVERY_CAPABILITY = { customTools: true, mcpServers: true, mcpCalls: true, mcpApprovals: true };

const catalog = builtinCatalog();
const model = (id: string): TextModel => findModel(catalog, id, 'text')!;
const O4_MINI = model('openai/o4-mini');
const GPT_4O_MINI = model('openai/gpt-4o-mini');

const base = { model: 'o4-mini', messages: [{ role: 'user', content: 'Hi' }] };
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

function expectRefused(run: () => unknown, field: string): void {
  const error = refusal(run);
  expect(error).toMatchObject({ status: 400, code: 'bad_request' });
  expect(error.message).toContain(field);
}

/** What the pipeline does before calling the vendor: decode, clamp, then the canonical rules. */
function decodeForModel(raw: unknown, m: TextModel): CanonicalRequest {
  const { decoded, names } = decodeChatIngress(raw);
  try {
    const { maxOutputTokens } = clampOutputLimit(m, decoded.outputLimit.value, decoded.outputLimit.fallback);
    const request: CanonicalRequest = { ...decoded.request, model: m, maxOutputTokens };
    return validateCanonicalRequest(request, EVERY_CAPABILITY);
  } catch (error) {
    // As the text endpoints answer: the rules' refusals named as this format names the fields.
    throw namedFor(error, names);
  }
}

const usage: CanonicalUsage = { inputTokens: 1200, cachedInputTokens: 1000, outputTokens: 300, reasoningTokens: 200 };
const meta = { id: 'chatcmpl-test', model: 'openai/o4-mini', created: 1_760_000_000 };

function sse(text: string): Array<{ event: string; data: string }> {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

/** An OpenAI client whose every request is answered with `payload` (no network). */
function clientAnswering(payload: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'test',
    baseURL: 'http://tollgate.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(payload, { status: 200, headers: { 'content-type': contentType } }),
  });
}

describe('decodeChatRequest: valid requests', () => {
  test('a full request decodes into the exact canonical form', () => {
    const ingress = decodeChatIngress({
      model: 'o4-mini',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Rule one.' },
            { type: 'text', text: 'Rule two.' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }], name: 'ann' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
        { role: 'assistant', content: [{ type: 'text', text: 'It is 3°C.' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather now',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            strict: true,
          },
        },
        { type: 'function', function: { name: 'no_args' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      max_completion_tokens: 2000,
      stop: 'END',
      temperature: 0.5,
      top_p: 0.9,
      frequency_penalty: 0.1,
      presence_penalty: -0.1,
      reasoning_effort: 'minimal',
      user: 'user-42',
      seed: 7,
      n: 1,
      store: false,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(ingress.includeUsage).toBe(true);
    const { decoded } = ingress;
    expect(decoded.modelId).toBe('o4-mini');
    expect(decoded.stream).toBe(true);
    expect(decoded.outputLimit).toEqual({ value: 2000, fallback: 4096 });
    expect(ingress.names.fields['text.outputLimit']).toBe('max_completion_tokens');
    expect(decoded.request).toStrictEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Rule one.\nRule two.' },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', kind: 'function' }],
          reasoning: [],
        },
        { role: 'tool', toolCallId: 'call_1', content: '{"temp":3}', isError: false },
        { role: 'assistant', content: 'It is 3°C.', toolCalls: [], reasoning: [] },
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
        { type: 'function', name: 'no_args', parameters: { type: 'object', properties: {} } },
      ],
      toolChoice: { name: 'get_weather' },
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      stop: ['END'],
      seed: 7,
      temperature: 0.5,
      topP: 0.9,
      frequencyPenalty: 0.1,
      presencePenalty: -0.1,
      reasoning: { mode: 'default', effort: 'low' },
      user: 'user-42',
    });
  });

  test('a minimal request: defaults, no stream, no usage chunk', () => {
    const { decoded, names, includeUsage } = decodeChatIngress(base);
    expect(includeUsage).toBe(false);
    expect(decoded.stream).toBe(false);
    expect(decoded.outputLimit).toEqual({ value: undefined, fallback: 4096 });
    expect(names.fields['text.outputLimit']).toBe('max_completion_tokens');
    expect(decoded.request).toStrictEqual({ messages: [{ role: 'user', content: 'Hi' }], tools: [], reasoning: { mode: 'default' } });
  });

  test.each<[string, Record<string, unknown>, Partial<CanonicalRequest> | Record<string, unknown>]>([
    ['max_tokens names its own field', { max_tokens: 100 }, {}],
    [
      'null optional fields are absent',
      { temperature: null, top_p: null, stop: null, n: null, store: null, reasoning_effort: null, logprobs: false, modalities: ['text'] },
      {},
    ],
    ['stop as a list', { stop: ['a', 'b'] }, { stop: ['a', 'b'] }],
    ['tool_choice strings', { tool_choice: 'none' }, { toolChoice: 'none' }],
    ['json_object format', { response_format: { type: 'json_object' } }, { responseFormat: { type: 'json_object' } }],
    ['text format', { response_format: { type: 'text' } }, { responseFormat: { type: 'text' } }],
    ['xhigh effort', { reasoning_effort: 'xhigh' }, { reasoning: { mode: 'default', effort: 'extra_high' } }],
    ['none effort', { reasoning_effort: 'none' }, { reasoning: { mode: 'default', effort: 'low' } }],
    ['safety_identifier is the end-user id', { safety_identifier: 'sid', user: 'old' }, { user: 'sid' }],
    [
      'an assistant refusal stays as its text',
      {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', refusal: 'I cannot.' },
        ],
      },
      {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'I cannot.', toolCalls: [], reasoning: [] },
        ],
      },
    ],
  ])('%s', (_name, extra, expected) => {
    const { decoded, names } = decodeChatIngress(body(extra));
    expect(decoded.request).toMatchObject(expected);
    if ('max_tokens' in extra) {
      expect(decoded.outputLimit).toEqual({ value: 100, fallback: 4096 });
      expect(names.fields['text.outputLimit']).toBe('max_tokens');
    }
  });
});

describe('decodeChatRequest: refusals name the field', () => {
  const manyTools = Array.from({ length: 65 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
  const bigSchema = { type: 'object', description: 'x'.repeat(33 * 1024) };
  test.each<[string, unknown, string]>([
    ['not an object', [1, 2], 'request body'],
    ['missing model', { messages: base.messages }, 'model'],
    ['missing messages', { model: 'x' }, 'messages'],
    ['empty messages', body({ messages: [] }), 'messages'],
    ['unknown field', body({ foo: 1 }), 'foo'],
    ['unknown role', body({ messages: [{ role: 'robot', content: 'x' }] }), 'messages[0].role'],
    ['legacy function role', body({ messages: [{ role: 'function', name: 'f', content: 'x' }] }), 'messages[0].role'],
    [
      'image part',
      body({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x' } }] },
        ],
      }),
      'messages[2].content[0].type',
    ],
    [
      'audio part',
      body({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'input_audio', input_audio: { data: '', format: 'wav' } },
            ],
          },
        ],
      }),
      'messages[0].content[1].type',
    ],
    [
      'file part',
      body({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] }),
      'messages[0].content[0].type',
    ],
    ['unknown message field', body({ messages: [{ role: 'user', content: 'x', cache_control: {} }] }), 'messages[0].cache_control'],
    ['tool message without tool_call_id', body({ messages: [{ role: 'tool', content: 'x' }] }), 'messages[0].tool_call_id'],
    [
      'custom tool call in history',
      body({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'x', input: '' } }] }] }),
      'messages[0].tool_calls[0].type',
    ],
    ['assistant audio', body({ messages: [{ role: 'assistant', content: 'x', audio: { id: 'a' } }] }), 'messages[0].audio'],
    ['more than 64 tools', body({ tools: manyTools }), 'tools'],
    ['custom tool', body({ tools: [{ type: 'custom', custom: { name: 'x' } }] }), 'tools[0].type'],
    ['bad tool name', body({ tools: [{ type: 'function', function: { name: 'has space' } }] }), 'tools[0].function.name'],
    [
      'tool_choice names an unknown tool',
      body({ tools: [{ type: 'function', function: { name: 'a' } }], tool_choice: { type: 'function', function: { name: 'b' } } }),
      'tool_choice.function.name',
    ],
    [
      'tool_choice allowed_tools',
      body({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }),
      'tool_choice.type',
    ],
    ['tool_choice bad string', body({ tool_choice: 'sometimes' }), 'tool_choice'],
    ['tool_choice required without tools', body({ tool_choice: 'required' }), 'tool_choice'],
    ['parallel_tool_calls not boolean', body({ parallel_tool_calls: 'yes' }), 'parallel_tool_calls'],
    ['response_format type', body({ response_format: { type: 'xml' } }), 'response_format.type'],
    [
      'schema over 32 KiB',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'big', schema: bigSchema } } }),
      'response_format.json_schema.schema',
    ],
    [
      'schema missing',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }),
      'response_format.json_schema.schema',
    ],
    ['both output limits', body({ max_tokens: 10, max_completion_tokens: 10 }), 'max_tokens'],
    ['five stop sequences', body({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop'],
    ['stop not strings', body({ stop: [1] }), 'stop[0]'],
    ['temperature above 2', body({ temperature: 2.5 }), 'temperature'],
    ['top_p above 1', body({ top_p: 1.5 }), 'top_p'],
    ['frequency_penalty below -2', body({ frequency_penalty: -3 }), 'frequency_penalty'],
    ['presence_penalty above 2', body({ presence_penalty: 2.1 }), 'presence_penalty'],
    ['reasoning_effort invalid', body({ reasoning_effort: 'maximum' }), 'reasoning_effort'],
    ['n of 2', body({ n: 2 }), 'n'],
    ['store true', body({ store: true }), 'store'],
    ['logprobs', body({ logprobs: true }), 'logprobs'],
    ['top_logprobs', body({ top_logprobs: 2 }), 'top_logprobs'],
    ['audio', body({ audio: { format: 'wav', voice: 'alloy' } }), 'audio'],
    ['audio modality', body({ modalities: ['text', 'audio'] }), 'modalities'],
    ['prediction', body({ prediction: { type: 'content', content: 'x' } }), 'prediction'],
    ['web_search_options', body({ web_search_options: {} }), 'web_search_options'],
    ['legacy functions', body({ functions: [{ name: 'f' }] }), 'functions'],
    ['legacy function_call', body({ function_call: 'auto' }), 'function_call'],
    ['metadata value not a string', body({ metadata: { a: 1 } }), 'metadata.a'],
    ['service_tier flex', body({ service_tier: 'flex' }), 'service_tier'],
    ['moderation', body({ moderation: { model: 'omni-moderation-latest' } }), 'moderation'],
    ['verbosity value', body({ verbosity: 'loud' }), 'verbosity'],
    ['logit_bias', body({ logit_bias: { '50256': -100 } }), 'logit_bias'],
    ['service_tier flex', body({ service_tier: 'flex' }), 'service_tier'],
    ['unknown stream_options field', body({ stream: true, stream_options: { chunked: true } }), 'stream_options.chunked'],
    ['stream not boolean', body({ stream: 'yes' }), 'stream'],
  ])('%s → 400 naming the field', (_name, raw, field) => {
    // Decoded, clamped and checked by the canonical rules, as the pipeline does.
    expectRefused(() => decodeForModel(raw, O4_MINI), field);
  });

  test('the canonical rules word their refusals in Chat terms', () => {
    expect(refusal(() => decodeForModel(body({ tool_choice: 'required' }), O4_MINI))).toMatchObject({
      message: "tool_choice 'required' needs at least one tool in tools",
      details: { field: 'tool_choice' },
    });
    const named = body({
      tools: [{ type: 'function', function: { name: 'a' } }],
      tool_choice: { type: 'function', function: { name: 'b' } },
    });
    expect(refusal(() => decodeForModel(named, O4_MINI)).message).toBe("tool_choice.function.name 'b' does not name a function in tools");
  });

  test('the refusal carries the field in details', () => {
    expect(refusal(() => decodeChatRequest(body({ n: 3 }))).details).toEqual({ field: 'n' });
  });

  test('an output limit of 0 is refused by the clamp, naming the field sent', () => {
    expectRefused(() => decodeForModel(body({ max_tokens: 0 }), O4_MINI), 'max_tokens');
    expectRefused(() => decodeForModel(body({ max_completion_tokens: 1.5 }), O4_MINI), 'max_completion_tokens');
  });
});

describe('canonical rules for a model', () => {
  test('reasoning effort is dropped for a model without an effort setting', () => {
    expect(decodeForModel(body({ reasoning_effort: 'high' }), GPT_4O_MINI).reasoning).toEqual({ mode: 'default' });
  });

  test('reasoning effort is kept for a model with one', () => {
    expect(decodeForModel(body({ reasoning_effort: 'high' }), O4_MINI).reasoning).toEqual({ mode: 'default', effort: 'high' });
  });

  test('the default output limit applies when none is sent', () => {
    expect(decodeForModel(base, O4_MINI).maxOutputTokens).toBe(4096);
  });
});

const textEvents: CanonicalEvent[] = [
  { type: 'reasoning-delta', text: 'thinking…' },
  { type: 'reasoning-end' },
  { type: 'text-delta', text: 'Hello' },
  { type: 'text-delta', text: ', world' },
  { type: 'finish', reason: 'stop', refusal: false, usage },
];

const toolEvents: CanonicalEvent[] = [
  { type: 'tool-call-start', index: 3, id: 'call_a', name: 'get_weather', kind: 'function' },
  { type: 'tool-call-delta', index: 3, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 3, argumentsDelta: '"Oslo"}' },
  { type: 'tool-call-end', index: 3 },
  { type: 'tool-call-start', index: 4, id: 'call_b', name: 'get_time', kind: 'function' },
  { type: 'tool-call-delta', index: 4, argumentsDelta: '{}' },
  { type: 'tool-call-end', index: 4 },
  { type: 'finish', reason: 'tool_calls', refusal: false, usage },
];

describe('encodeChatResponse', () => {
  test('a text answer: exact shape, usage with cached and reasoning tokens', () => {
    expect(encodeChatResponse(collectEvents(textEvents), meta)).toStrictEqual({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_760_000_000,
      model: 'openai/o4-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello, world', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 300,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 1000 },
        completion_tokens_details: { reasoning_tokens: 200 },
      },
    });
  });

  test('tool calls only: content is null', () => {
    const answer = encodeChatResponse(collectEvents(toolEvents), meta);
    expect(answer.choices[0]).toStrictEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  test.each<[string, CanonicalEvent[], string, string]>([
    [
      'refusal → content_filter with the message as content',
      [
        { type: 'text-delta', text: 'I can’t help with that.' },
        { type: 'finish', reason: 'stop', refusal: true, usage },
      ],
      'content_filter',
      'I can’t help with that.',
    ],
    [
      'limit consumed by reasoning → length, no text',
      [
        { type: 'reasoning-delta', text: '…' },
        { type: 'finish', reason: 'length', refusal: false, usage },
      ],
      'length',
      '',
    ],
  ])('%s', (_name, events, finishReason, content) => {
    const choice = encodeChatResponse(collectEvents(events), meta).choices[0]!;
    expect(choice.finish_reason).toBe(finishReason);
    expect(choice.message.content).toBe(content);
  });

  test('an estimated reasoning count passes through; none reported reads 0', () => {
    const estimated = { ...usage, reasoningTokens: 137 };
    const answer = encodeChatResponse(collectEvents([{ type: 'finish', reason: 'stop', refusal: false, usage: estimated }]), meta);
    expect(answer.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 137 });
    const none = encodeChatResponse(
      collectEvents([{ type: 'finish', reason: 'stop', refusal: false, usage: { ...usage, reasoningTokens: null } }]),
      meta,
    );
    expect(none.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 0 });
  });

  test('a generated id has the chatcmpl- prefix', () => {
    expect(encodeChatResponse(collectEvents(textEvents), { model: 'm', created: 1 }).id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
  });

  test('the openai SDK reads it', async () => {
    const client = clientAnswering(JSON.stringify(encodeChatResponse(collectEvents(toolEvents), meta)), 'application/json');
    const answer = await client.chat.completions.create({ model: 'o4-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(answer.choices[0]!.message.tool_calls).toHaveLength(2);
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(1000);
  });
});

function encodeAll(events: CanonicalEvent[], includeUsage: boolean): string {
  const encoder = new ChatStreamEncoder({ ...meta, includeUsage });
  return events.map((e) => encoder.encode(e)).join('');
}

describe('ChatStreamEncoder', () => {
  test('text: role chunk, content deltas, finish chunk, usage chunk, [DONE]', () => {
    const frames = sse(encodeAll(textEvents, true));
    expect(frames.every((f) => f.event === 'message')).toBe(true);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    const common = { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_760_000_000, model: 'openai/o4-mini' };
    expect(chunks).toStrictEqual([
      {
        ...common,
        choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }],
        usage: null,
      },
      { ...common, choices: [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }], usage: null },
      { ...common, choices: [{ index: 0, delta: { content: ', world' }, logprobs: null, finish_reason: null }], usage: null },
      { ...common, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null },
      {
        ...common,
        choices: [],
        usage: {
          prompt_tokens: 1200,
          completion_tokens: 300,
          total_tokens: 1500,
          prompt_tokens_details: { cached_tokens: 1000 },
          completion_tokens_details: { reasoning_tokens: 200 },
        },
      },
    ]);
  });

  test('without include_usage: no usage field, no usage chunk', () => {
    const chunks = sse(encodeAll(textEvents, false))
      .slice(0, -1)
      .map((f) => JSON.parse(f.data));
    expect(chunks).toHaveLength(4);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  test('tool calls: numbered from 0 in start order, id/type/name on the first delta only', () => {
    const deltas = sse(encodeAll(toolEvents, false))
      .slice(1, -2)
      .map((f) => JSON.parse(f.data).choices[0].delta);
    expect(deltas).toStrictEqual([
      { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] },
      { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
    ]);
  });

  test('refusal finishes with content_filter', () => {
    const chunks = sse(
      encodeAll(
        [
          { type: 'text-delta', text: 'No.' },
          { type: 'finish', reason: 'stop', refusal: true, usage },
        ],
        false,
      ),
    );
    expect(JSON.parse(chunks.at(-2)!.data).choices[0].finish_reason).toBe('content_filter');
  });

  test('a failure mid-stream: one error frame with the envelope fields, no [DONE], nothing after', () => {
    const encoder = new ChatStreamEncoder({ ...meta, includeUsage: true });
    const text =
      encoder.encode({ type: 'text-delta', text: 'Hel' }) + encoder.encodeError(new ProviderError('The provider failed.', 'openai', 500));
    const frames = sse(text);
    expect(frames).toHaveLength(3);
    expect(JSON.parse(frames[2]!.data)).toStrictEqual({
      error: { code: 'provider_error', message: 'The provider failed.', details: { vendor: 'openai', vendor_status: 500 } },
    });
    expect(text).not.toContain('[DONE]');
    expect(encoder.encode({ type: 'finish', reason: 'stop', refusal: false, usage })).toBe('');
    expect(encoder.encodeError(new ProviderError('again', 'openai'))).toBe('');
  });

  test('nothing is emitted after the finish', () => {
    const encoder = new ChatStreamEncoder({ ...meta, includeUsage: false });
    textEvents.forEach((e) => encoder.encode(e));
    expect(encoder.encode({ type: 'text-delta', text: 'late' })).toBe('');
  });

  test('the openai SDK accumulates the stream into the final completion', async () => {
    const client = clientAnswering(encodeAll([{ type: 'text-delta', text: 'Checking. ' }, ...toolEvents], true), 'text/event-stream');
    const stream = client.chat.completions.stream({
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'x' }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.content).toBe('Checking. ');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(final.usage?.completion_tokens_details?.reasoning_tokens).toBe(200);
  });

  test('the openai SDK raises the stream error frame as an APIError', async () => {
    const encoder = new ChatStreamEncoder({ ...meta, includeUsage: false });
    const payload =
      encoder.encode({ type: 'text-delta', text: 'Hel' }) + encoder.encodeError(new ProviderError('upstream timed out', 'openai'));
    const client = clientAnswering(payload, 'text/event-stream');
    const stream = await client.chat.completions.create({ model: 'o4-mini', messages: [{ role: 'user', content: 'x' }], stream: true });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toMatchObject({ code: 'provider_error', message: 'upstream timed out' });
    expect(seen.join('')).toBe('Hel');
  });
});
