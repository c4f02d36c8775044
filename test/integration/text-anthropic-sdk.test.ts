import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import {
  expectChargedExactly,
  expectedCharge,
  moneyOf,
  requestId,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * The official `@anthropic-ai/sdk` against Tollgate's Messages endpoint over real HTTP
 * (`x-api-key`, as the SDK sends it): served by the Anthropic fake, and across formats by
 * OpenAI (Chat and Responses upstreams) and Gemini. Every success is checked in the ledger.
 */

let anthropicFake: FakeVendor<FakeAnthropicReply>;
let openaiFake: FakeVendor<FakeOpenAIReply>;
let geminiFake: FakeVendor<FakeGeminiReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  [anthropicFake, openaiFake, geminiFake] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeGemini()]);
  h = await startTextHarness({
    ANTHROPIC_API_KEY: anthropicFake.apiKey!,
    ANTHROPIC_BASE_URL: anthropicFake.url,
    OPENAI_API_KEY: openaiFake.apiKey!,
    OPENAI_BASE_URL: openaiFake.url,
    GEMINI_API_KEY: geminiFake.apiKey!,
    GEMINI_BASE_URL: geminiFake.url,
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([anthropicFake?.close(), openaiFake?.close(), geminiFake?.close()]);
});
beforeEach(() => {
  anthropicFake.script();
  openaiFake.script();
  geminiFake.script();
});

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather by city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const tokens = (text: string) => countTokens(text);

describe('Messages served by Claude', () => {
  test('non-stream, Vertex-style id: routed header, service model, cache usage fields, exact charge', async () => {
    anthropicFake.script({ text: 'Hello from Claude.', usage: { input: 30, cacheRead: 2000, cacheCreation: 100, output: 12 } });
    const id = requestId();
    const { data: message, response } = await a.anthropic.messages
      // `temperature` is part of the Messages API; this SDK version's types just do not list it.
      .create(
        {
          model: 'claude-sonnet-4-5@20250929',
          max_tokens: 1024,
          system: 'Be brief.',
          messages: [{ role: 'user', content: 'Hi' }],
          temperature: 0.4,
        } as Anthropic.MessageCreateParamsNonStreaming,
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('x-service-model-routed-from')).toBe('claude-sonnet-4-5@20250929');
    expect(message.model).toBe('anthropic/claude-sonnet-4-5');
    expect(message.type).toBe('message');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Claude.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({
      input_tokens: 30,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 100,
      output_tokens: 12,
      output_tokens_details: { thinking_tokens: 0 },
    });

    const sent = anthropicFake.lastRequest!;
    expect(sent.headers['x-api-key']).toBe(anthropicFake.apiKey);
    expect(sent.body).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 1024,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      temperature: 0.4,
      stream: false,
    }); // read whole: a non-streamed upstream call
    expect(sent.body).not.toHaveProperty('thinking');
    // Canonical input is the whole prompt: uncached + cache reads (cached price) + cache writes (without a breakdown by lifetime: the 5-minute price).
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-sonnet-4-5', {
        inputTokens: 2130,
        cachedInputTokens: 2000,
        cacheWrite5mInputTokens: 100,
        outputTokens: 12,
      }),
    );
  });

  test('stream with thinking budget: upstream budget, thinking + signature + text blocks, estimated thinking tokens', async () => {
    const thinking = 'The user wants a short proof. Let me reason carefully.';
    const text = 'Here is the proof.';
    anthropicFake.script({ thinking, signature: 'sig-123', text, usage: { input: 50, output: 90 } });
    const id = requestId();
    const stream = a.anthropic.messages.stream(
      {
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 8000,
        thinking: { type: 'enabled', budget_tokens: 3000 },
        messages: [{ role: 'user', content: 'Prove it' }],
      },
      withId(id),
    );
    const thinkingDeltas: string[] = [];
    stream.on('thinking', (delta) => thinkingDeltas.push(delta));
    const message = await stream.finalMessage();
    expect(thinkingDeltas.join('')).toBe(thinking);
    expect(message.model).toBe('anthropic/claude-sonnet-4-5');
    expect(message.content).toEqual([
      { type: 'thinking', thinking, signature: 'sig-123' },
      { type: 'text', text },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    // Anthropic reports no thinking count: the estimate is billed output minus the visible answer.
    expect(message.usage).toMatchObject({
      input_tokens: 50,
      output_tokens: 90,
      output_tokens_details: { thinking_tokens: 90 - tokens(text) },
    });
    expect(anthropicFake.lastRequest!.body).toMatchObject({
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 3000 },
      stream: true,
    });
    const money = await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 50, cachedInputTokens: 0, outputTokens: 90 }),
    );
    expect(money.usage[0]).toMatchObject({ output_tokens: 90, reasoning_tokens: 90 - tokens(text) });
  });

  test('a thinking turn with its signature and a tool result go back to Claude intact', async () => {
    anthropicFake.script({
      thinking: 'Need the weather tool.',
      signature: 'sig-abc',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }],
      usage: { input: 100, output: 40 },
    });
    const first = requestId();
    const stream = a.anthropic.messages.stream(
      {
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      },
      withId(first),
    );
    const jsonDeltas: string[] = [];
    stream.on('inputJson', (delta) => jsonDeltas.push(delta));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Need the weather tool.', signature: 'sig-abc' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(JSON.parse(jsonDeltas.join(''))).toEqual({ city: 'Oslo' });
    expect(anthropicFake.lastRequest!.body.tools).toEqual([weatherTool]);
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 100, cachedInputTokens: 0, outputTokens: 40 }),
    );

    anthropicFake.script({ text: 'Cold in Oslo.', usage: { input: 160, output: 6 } });
    const second = requestId();
    const answer = await a.anthropic.messages.create(
      {
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: message.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '-5°C' }] },
        ],
      },
      withId(second),
    );
    expect(answer.content).toEqual([{ type: 'text', text: 'Cold in Oslo.' }]);
    expect(anthropicFake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need the weather tool.', signature: 'sig-abc' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '-5°C' }] },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 160, cachedInputTokens: 0, outputTokens: 6 }),
    );
  });

  test('mcp_servers: the calls Claude made show as mcp_tool_use and mcp_tool_result blocks, and go back intact in the next turn', async () => {
    const mcpServers: Anthropic.Beta.BetaRequestMCPServerURLDefinition[] = [
      { type: 'url', url: 'https://mcp.example.com/sse', name: 'docs', authorization_token: 'tok' },
    ];
    anthropicFake.script({
      mcpCalls: [{ id: 'mcptoolu_1', name: 'search', server: 'docs', input: { q: 'limits' }, result: 'Limits are per key.' }],
      text: 'They are per key.',
      usage: { input: 300, output: 25 },
    });
    const first = requestId();
    const stream = a.anthropic.beta.messages.stream(
      {
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 2048,
        mcp_servers: mcpServers,
        betas: ['mcp-client-2025-04-04'],
        messages: [{ role: 'user', content: 'How do limits work?' }],
      },
      withId(first),
    );
    const started: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_start') started.push(event.content_block.type);
    });
    const message = await stream.finalMessage();
    expect(started).toEqual(['mcp_tool_use', 'mcp_tool_result', 'text']);
    expect(message.content).toEqual([
      { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 'docs', input: { q: 'limits' } },
      { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'Limits are per key.' }] },
      { type: 'text', text: 'They are per key.' },
    ]);
    expect(anthropicFake.lastRequest!.headers['anthropic-beta']).toBe('mcp-client-2025-04-04');
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 300, cachedInputTokens: 0, outputTokens: 25 }),
    );

    anthropicFake.script({ text: 'Yes, monthly.', usage: { input: 420, output: 4 } });
    const second = requestId();
    const answer = await a.anthropic.beta.messages.create(
      {
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 2048,
        mcp_servers: mcpServers,
        betas: ['mcp-client-2025-04-04'],
        messages: [
          { role: 'user', content: 'How do limits work?' },
          { role: 'assistant', content: message.content as Anthropic.Beta.BetaContentBlockParam[] },
          { role: 'user', content: 'Monthly?' },
        ],
      },
      withId(second),
    );
    expect(answer.content).toEqual([{ type: 'text', text: 'Yes, monthly.' }]);
    expect(anthropicFake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'How do limits work?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 'docs', input: { q: 'limits' } },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', content: 'Limits are per key.' },
          { type: 'text', text: 'They are per key.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Monthly?' }] },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 420, cachedInputTokens: 0, outputTokens: 4 }),
    );
  });

  test('a refusal is stop_reason refusal with a short message', async () => {
    anthropicFake.script({ stopReason: 'refusal', usage: { input: 15, output: 3 } });
    const id = requestId();
    const message = await a.anthropic.messages.create(
      { model: 'anthropic/claude-haiku-4-5', max_tokens: 500, messages: [{ role: 'user', content: 'Something bad' }] },
      withId(id),
    );
    expect(message.stop_reason).toBe('refusal');
    expect(message.content).toHaveLength(1);
    expect(message.content[0]!.type).toBe('text');
    expect((message.content[0] as Anthropic.TextBlock).text.length).toBeGreaterThan(0);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 15, cachedInputTokens: 0, outputTokens: 3 }),
    );
  });

  test('a max_tokens eaten by thinking ends with stop_reason max_tokens and no text', async () => {
    anthropicFake.script({
      thinking: 'Long thoughts that never end',
      text: '',
      stopReason: 'max_tokens',
      usage: { input: 20, output: 2048 },
    });
    const id = requestId();
    const message = await a.anthropic.messages
      .stream(
        {
          model: 'anthropic/claude-haiku-4-5',
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [{ role: 'user', content: 'Think' }],
        },
        withId(id),
      )
      .finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content.filter((block) => block.type === 'text')).toEqual([]);
    expect(message.usage.output_tokens).toBe(2048);
    expect(message.usage.output_tokens_details?.thinking_tokens).toBe(2048);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 20, cachedInputTokens: 0, outputTokens: 2048 }),
    );
  });

  test('max_tokens above the model maximum is clamped (header, upstream) and the headroom is checked on the clamped value', async () => {
    anthropicFake.script({ text: 'Fine.', usage: { input: 10, output: 2 } });
    const id = requestId();
    const { response, data: stream } = await a.anthropic.messages
      .create(
        {
          model: 'anthropic/claude-sonnet-4-5',
          max_tokens: 100_000,
          thinking: { type: 'enabled', budget_tokens: 8000 },
          messages: [{ role: 'user', content: 'Hi' }],
          stream: true,
        },
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('x-service-max-output-clamped')).toBe('64000');
    for await (const _event of stream) void _event;
    expect(anthropicFake.lastRequest!.body).toMatchObject({ max_tokens: 64000, thinking: { type: 'enabled', budget_tokens: 8000 } });
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 10, cachedInputTokens: 0, outputTokens: 2 }),
    );

    // 100,000 is lowered to 64,000, which leaves less than 1,024 above a 63,500 budget.
    const before = anthropicFake.requests.length;
    const refusedId = requestId();
    const error = await a.anthropic.messages
      .create(
        {
          model: 'anthropic/claude-sonnet-4-5',
          max_tokens: 100_000,
          thinking: { type: 'enabled', budget_tokens: 63_500 },
          messages: [{ role: 'user', content: 'Hi' }],
          stream: true,
        },
        withId(refusedId),
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect(JSON.stringify((error as InstanceType<typeof Anthropic.APIError>).error)).toContain('max_tokens');
    expect(anthropicFake.requests.length).toBe(before);
    expect(await moneyOf(h.db, refusedId)).toEqual({ usage: [], charges: [] });
  });

  test('a matched stop sequence is stop_reason stop_sequence with the sequence', async () => {
    anthropicFake.script({ text: 'One, two', stopReason: 'stop_sequence', stopSequence: 'three', usage: { input: 12, output: 4 } });
    const id = requestId();
    const message = await a.anthropic.messages.create(
      { model: 'anthropic/claude-haiku-4-5', max_tokens: 100, stop_sequences: ['three'], messages: [{ role: 'user', content: 'Count' }] },
      withId(id),
    );
    expect(message.stop_reason).toBe('stop_sequence');
    expect(message.stop_sequence).toBe('three');
    expect(anthropicFake.lastRequest!.body.stop_sequences).toEqual(['three']);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 12, cachedInputTokens: 0, outputTokens: 4 }),
    );
  });

  test.each([
    [{ max_tokens: undefined }, 'max_tokens'],
    [{ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 512 } }, 'thinking.budget_tokens'],
    [{ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1500 } }, 'max_tokens'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: -1 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [
      {
        max_tokens: 500,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }],
      },
      'messages[0].content[0].type',
    ],
  ])('%j → 400 naming %s, nothing sent or reserved', async (body, field) => {
    const before = anthropicFake.requests.length;
    const id = requestId();
    const error = await a.anthropic.messages
      .create(
        {
          model: 'anthropic/claude-sonnet-4-5',
          messages: [{ role: 'user', content: 'Hi' }],
          ...body,
        } as unknown as Anthropic.MessageCreateParamsNonStreaming,
        withId(id),
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const envelope = (error as InstanceType<typeof Anthropic.APIError>).error as { error: { code: string; message: string } };
    expect(envelope.error.code).toBe('bad_request');
    expect(envelope.error.message).toContain(field);
    expect(anthropicFake.requests.length).toBe(before);
    expect(await moneyOf(h.db, id)).toEqual({ usage: [], charges: [] });
  });

  test('an unknown model is 404 model_not_available naming the id sent', async () => {
    const error = await a.anthropic.messages
      .create({ model: 'claude-opus-9', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    const envelope = (error as InstanceType<typeof Anthropic.APIError>).error as { error: { code: string; message: string } };
    expect(envelope.error).toMatchObject({ code: 'model_not_available' });
    expect(envelope.error.message).toContain('claude-opus-9');
  });
});

describe('Messages served by other vendors (cross-format)', () => {
  test('mcp_servers by gpt-4o-mini: OpenAI Responses without approvals; its calls come back as mcp_tool_use/mcp_tool_result pairs, streamed and whole', async () => {
    const call = {
      id: 'mcp_o1',
      type: 'mcp_call',
      server_label: 'docs',
      name: 'search',
      arguments: '{"q":"z"}',
      output: 'found z',
      error: null,
      approval_request_id: null,
      status: 'completed',
    };
    const listing = { id: 'mcpl_o1', type: 'mcp_list_tools', server_label: 'docs', tools: [{ name: 'search', input_schema: {} }] };
    const expected = [
      { type: 'mcp_tool_use', id: 'mcp_o1', name: 'search', server_name: 'docs', input: { q: 'z' } },
      { type: 'mcp_tool_result', tool_use_id: 'mcp_o1', is_error: false, content: [{ type: 'text', text: 'found z' }] },
      { type: 'text', text: 'Found z.' },
    ];
    const params = {
      model: 'openai/gpt-4o-mini',
      max_tokens: 500,
      mcp_servers: [{ type: 'url' as const, url: 'https://mcp.example.com/sse', name: 'docs' }],
      betas: ['mcp-client-2025-04-04'],
      messages: [{ role: 'user' as const, content: 'Search z' }],
    };
    openaiFake.script({ mcpItems: [listing, call], text: 'Found z.', usage: { input: 60, output: 7 } });
    const id = requestId();
    const whole = await a.anthropic.beta.messages.create(params, withId(id));
    expect(whole.content).toEqual(expected);
    expect(openaiFake.lastRequest!.path).toBe('/v1/responses');
    expect(openaiFake.lastRequest!.body.tools).toEqual([
      { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse', require_approval: 'never' },
    ]);
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 60, cachedInputTokens: 0, outputTokens: 7 }));

    const streamed = await a.anthropic.beta.messages.stream(params).finalMessage();
    expect(streamed.content).toEqual(expected);
  });

  test('by gpt-4o-mini (Chat upstream): system, tools and tool results translated; usage in Messages fields', async () => {
    openaiFake.script({
      toolCalls: [{ id: 'call_x', name: 'get_weather', arguments: '{"city":"Lima"}' }],
      usage: { input: 1500, cached: 1280, output: 18 },
    });
    const first = requestId();
    const message = await a.anthropic.messages.create(
      {
        model: 'openai/gpt-4o-mini',
        max_tokens: 700,
        system: 'You are terse.',
        tools: [weatherTool],
        tool_choice: { type: 'tool', name: 'get_weather' },
        messages: [{ role: 'user', content: 'Weather in Lima?' }],
      },
      withId(first),
    );
    expect(message.model).toBe('openai/gpt-4o-mini');
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_x', name: 'get_weather', input: { city: 'Lima' } }]);
    // Messages counts input without cache reads.
    expect(message.usage).toMatchObject({
      input_tokens: 220,
      cache_read_input_tokens: 1280,
      output_tokens: 18,
      output_tokens_details: { thinking_tokens: 0 },
    });
    expect(openaiFake.lastRequest!.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_completion_tokens: 700,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather in Lima?' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: weatherTool.input_schema } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 1500, cachedInputTokens: 1280, outputTokens: 18 }),
    );

    openaiFake.script({ text: 'Warm in Lima.', usage: { input: 1600, output: 5 } });
    const second = requestId();
    const stream = a.anthropic.messages.stream(
      {
        model: 'openai/gpt-4o-mini',
        max_tokens: 700,
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Lima?' },
          { role: 'assistant', content: message.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_x', content: '24°C' }] },
        ],
      },
      withId(second),
    );
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Warm in Lima.' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 1600, output_tokens: 5 });
    expect(openaiFake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Lima?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_x', content: '24°C' },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 1600, cachedInputTokens: 0, outputTokens: 5 }),
    );
  });

  test('by o4-mini (Responses upstream): thinking budget → reasoning effort; reasoning tokens → thinking_tokens', async () => {
    openaiFake.script({ reasoning: 'Considering.', text: 'Yes.', usage: { input: 40, output: 200, reasoning: 180 } });
    const id = requestId();
    const message = await a.anthropic.messages
      .stream(
        {
          model: 'openai/o4-mini',
          max_tokens: 10000,
          thinking: { type: 'enabled', budget_tokens: 6000 },
          messages: [{ role: 'user', content: 'Is it?' }],
        },
        withId(id),
      )
      .finalMessage();
    expect(openaiFake.lastRequest!.path).toBe('/v1/responses');
    expect(openaiFake.lastRequest!.body).toMatchObject({ model: 'o4-mini', max_output_tokens: 10000, reasoning: { effort: 'medium' } });
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: 'Considering.' });
    expect(message.usage).toMatchObject({ output_tokens: 200, output_tokens_details: { thinking_tokens: 180 } });
    await expectChargedExactly(h, a, id, expectedCharge('openai/o4-mini', { inputTokens: 40, cachedInputTokens: 0, outputTokens: 200 }));

    openaiFake.script({ text: 'Low.', usage: { input: 10, output: 20, reasoning: 16 } });
    await a.anthropic.messages.create({
      model: 'openai/o4-mini',
      max_tokens: 5000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Quick' }],
    });
    expect(openaiFake.lastRequest!.body.reasoning).toEqual({ effort: 'low' });
    openaiFake.script({ text: 'Max.', usage: { input: 10, output: 20, reasoning: 16 } });
    await a.anthropic.messages.create({
      model: 'openai/o4-mini',
      max_tokens: 5000,
      output_config: { effort: 'max' },
      messages: [{ role: 'user', content: 'Hard' }],
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(openaiFake.lastRequest!.body.reasoning).toEqual({ effort: 'high' });
  });

  test('by Gemini: thinking budget → thinkingConfig.thinkingBudget; thoughts and cached tokens mapped back', async () => {
    geminiFake.script({
      thoughts: 'Pondering the question.',
      text: 'Gemini says hi.',
      usage: { prompt: 900, cached: 512, candidates: 7, thoughts: 150 },
    });
    const id = requestId();
    const message = await a.anthropic.messages
      .stream(
        {
          model: 'models/gemini-2.5-flash',
          max_tokens: 9000,
          thinking: { type: 'enabled', budget_tokens: 5000 },
          system: 'Be nice.',
          messages: [{ role: 'user', content: 'Hi' }],
        },
        withId(id),
      )
      .finalMessage();
    expect(message.model).toBe('google/gemini-2.5-flash');
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(message.content[1]).toMatchObject({ type: 'text', text: 'Gemini says hi.' });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({
      input_tokens: 388,
      cache_read_input_tokens: 512,
      output_tokens: 157,
      output_tokens_details: { thinking_tokens: 150 },
    });
    const sent = geminiFake.lastRequest!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: 'Be nice.' }] });
    expect(sent.body.generationConfig).toMatchObject({
      maxOutputTokens: 9000,
      thinkingConfig: { thinkingBudget: 5000, includeThoughts: true },
    });
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 900, cachedInputTokens: 512, outputTokens: 157 }),
    );
  });

  test('by Gemini: a safety block is stop_reason refusal; MAX_TOKENS with thoughts only is max_tokens and no text', async () => {
    geminiFake.script({ finishReason: 'SAFETY', usage: { prompt: 12, candidates: 0 } });
    const id = requestId();
    const refused = await a.anthropic.messages.create(
      { model: 'google/gemini-2.5-flash', max_tokens: 300, messages: [{ role: 'user', content: 'Bad' }] },
      withId(id),
    );
    expect(refused.stop_reason).toBe('refusal');
    expect(refused.content).toHaveLength(1);
    expect(refused.content[0]!.type).toBe('text');
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 12, cachedInputTokens: 0, outputTokens: 0 }),
    );

    geminiFake.script({
      thoughts: 'Thinking a lot',
      text: '',
      finishReason: 'MAX_TOKENS',
      usage: { prompt: 12, candidates: 0, thoughts: 2100 },
    });
    const limited = requestId();
    const message = await a.anthropic.messages.create(
      {
        model: 'google/gemini-2.5-flash',
        max_tokens: 2100,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'Think' }],
      },
      withId(limited),
    );
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content.filter((block) => block.type === 'text')).toEqual([]);
    expect(message.usage).toMatchObject({ output_tokens: 2100, output_tokens_details: { thinking_tokens: 2100 } });
    expect(geminiFake.lastRequest!.body.generationConfig).toMatchObject({
      maxOutputTokens: 2100,
      thinkingConfig: { thinkingBudget: 1024 },
    });
    await expectChargedExactly(
      h,
      a,
      limited,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 12, cachedInputTokens: 0, outputTokens: 2100 }),
    );
  });
});
