import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { SANDBOX_REFUSAL } from '../../src/providers/sandbox';
import {
  expectChargedExactly,
  expectedCharge,
  requestId,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';
import { call } from '../support/tollgate';

/**
 * Cross-format translation over real HTTP with the official `openai` SDK: Chat Completions and
 * Responses requests served by Claude, by Gemini and by the sandbox; tools and tool results
 * across formats; each vendor's reasoning control as it reaches the vendor; stop reasons and
 * usage mapped back. Then an OpenAI-compatible vendor from a custom catalog.
 */

let anthropicFake: FakeVendor<FakeAnthropicReply>;
let geminiFake: FakeVendor<FakeGeminiReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  [anthropicFake, geminiFake] = await Promise.all([startFakeAnthropic(), startFakeGemini()]);
  h = await startTextHarness({
    ANTHROPIC_API_KEY: anthropicFake.apiKey!,
    ANTHROPIC_BASE_URL: anthropicFake.url,
    GEMINI_API_KEY: geminiFake.apiKey!,
    GEMINI_BASE_URL: geminiFake.url,
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([anthropicFake?.close(), geminiFake?.close()]);
});
beforeEach(() => {
  anthropicFake.script();
  geminiFake.script();
});

const weatherParameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const chatWeatherTool: OpenAI.Chat.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather by city', parameters: weatherParameters },
};
const tokens = (text: string) => countTokens(text);

async function collectChat(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('Chat Completions served by Claude', () => {
  test('non-stream: system hoisted, reasoning_effort → thinking budget, usage with cache reads and estimated reasoning', async () => {
    const text = 'Claude answers over Chat.';
    anthropicFake.script({ thinking: 'Hmm.', text, usage: { input: 40, cacheRead: 1000, output: 70 } });
    const id = requestId();
    const { data, response } = await a.openai.chat.completions
      .create(
        {
          model: 'claude-sonnet-4-5',
          messages: [
            { role: 'system', content: 'Be kind.' },
            { role: 'user', content: 'Hello Claude' },
          ],
          reasoning_effort: 'high',
          max_completion_tokens: 20000,
          temperature: 0.7,
        },
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('x-service-model-routed-from')).toBe('claude-sonnet-4-5');
    expect(data.model).toBe('anthropic/claude-sonnet-4-5');
    expect(data.choices[0]!.message.content).toBe(text);
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({
      prompt_tokens: 1040,
      completion_tokens: 70,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 70 - tokens(text) },
    });
    const sent = anthropicFake.lastRequest!.body;
    expect(sent).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      system: 'Be kind.',
      max_tokens: 20000,
      thinking: { type: 'enabled', budget_tokens: 16384 },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello Claude' }] }],
    });
    expect(sent).not.toHaveProperty('temperature'); // Anthropic refuses temperature with thinking
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 1040, cachedInputTokens: 1000, outputTokens: 70 }),
    );
  });

  test('stream: tool_use becomes tool_calls; the tool result goes back as a tool_result block', async () => {
    anthropicFake.script({
      toolCalls: [{ id: 'toolu_9', name: 'get_weather', input: { city: 'Nairobi' } }],
      usage: { input: 90, output: 25 },
    });
    const first = requestId();
    const chunks = await collectChat(
      await a.openai.chat.completions.create(
        {
          model: 'anthropic/claude-haiku-4-5',
          messages: [{ role: 'user', content: 'Weather in Nairobi?' }],
          tools: [chatWeatherTool],
          tool_choice: 'required',
          stream: true,
          stream_options: { include_usage: true },
        },
        withId(first),
      ),
    );
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, id: 'toolu_9', type: 'function', function: { name: 'get_weather' } });
    expect(calls.map((c) => c.function?.arguments ?? '').join('')).toBe('{"city":"Nairobi"}');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 90, completion_tokens: 25 });
    expect(anthropicFake.lastRequest!.body).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: weatherParameters }],
      tool_choice: { type: 'any' },
    });
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 90, cachedInputTokens: 0, outputTokens: 25 }),
    );

    anthropicFake.script({ text: 'Sunny in Nairobi.', usage: { input: 130, output: 6 } });
    const second = requestId();
    const answer = await a.openai.chat.completions.create(
      {
        model: 'anthropic/claude-haiku-4-5',
        messages: [
          { role: 'user', content: 'Weather in Nairobi?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Nairobi"}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_9', content: '25°C, sunny' },
        ],
        tools: [chatWeatherTool],
      },
      withId(second),
    );
    expect(answer.choices[0]!.message.content).toBe('Sunny in Nairobi.');
    expect(anthropicFake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Nairobi?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { city: 'Nairobi' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: '25°C, sunny' }] },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 130, cachedInputTokens: 0, outputTokens: 6 }),
    );
  });

  test('read whole (non-streamed upstream): tool_use and a redacted thinking block map as they do in a stream', async () => {
    anthropicFake.script({
      redactedThinking: 'opaque',
      toolCalls: [{ id: 'toolu_w', name: 'get_weather', input: { city: 'Lima' } }],
      usage: { input: 70, output: 20 },
    });
    const id = requestId();
    const answer = await a.openai.chat.completions.create(
      { model: 'anthropic/claude-haiku-4-5', messages: [{ role: 'user', content: 'Weather in Lima?' }], tools: [chatWeatherTool] },
      withId(id),
    );
    expect(anthropicFake.lastRequest!.body.stream).toBe(false);
    expect(answer.choices[0]!.finish_reason).toBe('tool_calls');
    expect(answer.choices[0]!.message.tool_calls).toEqual([
      { id: 'toolu_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } },
    ]);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 70, cachedInputTokens: 0, outputTokens: 20 }),
    );
  });

  test('refusal → content_filter with text; thinking eating max_tokens → length with no text', async () => {
    anthropicFake.script({ stopReason: 'refusal', usage: { input: 10, output: 1 } });
    const id = requestId();
    const refused = await a.openai.chat.completions.create(
      { model: 'anthropic/claude-haiku-4-5', messages: [{ role: 'user', content: 'Bad' }] },
      withId(id),
    );
    expect(refused.choices[0]!.finish_reason).toBe('content_filter');
    expect(refused.choices[0]!.message.content?.length).toBeGreaterThan(0);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 10, cachedInputTokens: 0, outputTokens: 1 }),
    );

    anthropicFake.script({ thinking: 'So much to think about', text: '', stopReason: 'max_tokens', usage: { input: 10, output: 3000 } });
    const limited = requestId();
    const chunks = await collectChat(
      await a.openai.chat.completions.create(
        {
          model: 'anthropic/claude-haiku-4-5',
          messages: [{ role: 'user', content: 'Think' }],
          reasoning_effort: 'medium',
          max_tokens: 3000,
          stream: true,
          stream_options: { include_usage: true },
        },
        withId(limited),
      ),
    );
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage?.completion_tokens_details?.reasoning_tokens).toBe(3000);
    // medium is a 4,096 budget, lowered to leave 1,024 of the 3,000 for the answer.
    expect(anthropicFake.lastRequest!.body).toMatchObject({ max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1976 } });
    await expectChargedExactly(
      h,
      a,
      limited,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 10, cachedInputTokens: 0, outputTokens: 3000 }),
    );
  });
});

describe('Chat Completions served by Gemini', () => {
  test('non-stream via models/… id: effort → thinkingBudget, json_schema → responseJsonSchema, thoughts and cache in usage', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    geminiFake.script({ thoughts: 'Counting.', text: '{"n":3}', usage: { prompt: 300, cached: 256, candidates: 4, thoughts: 40 } });
    const id = requestId();
    const { data, response } = await a.openai.chat.completions
      .create(
        {
          model: 'models/gemini-2.5-flash',
          messages: [
            { role: 'developer', content: 'JSON only.' },
            { role: 'user', content: 'How many?' },
          ],
          reasoning_effort: 'low',
          response_format: { type: 'json_schema', json_schema: { name: 'count', schema } },
          stop: ['###'],
        },
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('x-service-model-routed-from')).toBe('models/gemini-2.5-flash');
    expect(data.model).toBe('google/gemini-2.5-flash');
    expect(JSON.parse(data.choices[0]!.message.content!)).toEqual({ n: 3 });
    expect(data.usage).toMatchObject({
      prompt_tokens: 300,
      completion_tokens: 44,
      prompt_tokens_details: { cached_tokens: 256 },
      completion_tokens_details: { reasoning_tokens: 40 },
    });
    const sent = geminiFake.lastRequest!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent'); // read whole: not streamed upstream either
    expect(sent.headers['x-goog-api-key']).toBe(geminiFake.apiKey);
    expect(sent.body).toMatchObject({
      systemInstruction: { parts: [{ text: 'JSON only.' }] },
      contents: [{ role: 'user', parts: [{ text: 'How many?' }] }],
      generationConfig: {
        maxOutputTokens: 4096,
        stopSequences: ['###'],
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
      },
    });
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 300, cachedInputTokens: 256, outputTokens: 44 }),
    );
  });

  test('stream: functionCall → tool_calls; the tool result goes back as a functionResponse named after the call', async () => {
    geminiFake.script({ functionCalls: [{ name: 'get_weather', args: { city: 'Accra' } }], usage: { prompt: 50, candidates: 10 } });
    const first = requestId();
    const completion = await a.openai.chat.completions
      .stream(
        {
          model: 'google/gemini-2.5-pro',
          messages: [{ role: 'user', content: 'Weather in Accra?' }],
          tools: [chatWeatherTool],
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
        },
        withId(first),
      )
      .finalChatCompletion();
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    const call = completion.choices[0]!.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Accra"}' });
    expect(call.id).toMatch(/^call_/);
    expect(geminiFake.lastRequest!.body).toMatchObject({
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather by city', parametersJsonSchema: weatherParameters }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    });
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('google/gemini-2.5-pro', { inputTokens: 50, cachedInputTokens: 0, outputTokens: 10 }),
    );

    geminiFake.script({ text: 'Hot in Accra.', usage: { prompt: 80, candidates: 5 } });
    const second = requestId();
    const answer = await a.openai.chat.completions.create(
      {
        model: 'google/gemini-2.5-pro',
        messages: [
          { role: 'user', content: 'Weather in Accra?' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: '{"celsius":33}' },
        ],
        tools: [chatWeatherTool],
      },
      withId(second),
    );
    expect(answer.choices[0]!.message.content).toBe('Hot in Accra.');
    expect(geminiFake.lastRequest!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Accra?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Accra' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { celsius: 33 } } }] },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('google/gemini-2.5-pro', { inputTokens: 80, cachedInputTokens: 0, outputTokens: 5 }),
    );
  });

  test('SAFETY → content_filter with a message; thoughts eating the limit → length with no text', async () => {
    geminiFake.script({ finishReason: 'SAFETY', usage: { prompt: 9, candidates: 0 } });
    const id = requestId();
    const refused = await a.openai.chat.completions.create(
      { model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'Bad' }] },
      withId(id),
    );
    expect(refused.choices[0]!.finish_reason).toBe('content_filter');
    expect(refused.choices[0]!.message.content?.length).toBeGreaterThan(0);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 9, cachedInputTokens: 0, outputTokens: 0 }),
    );

    geminiFake.script({
      thoughts: 'Deep thoughts',
      text: '',
      finishReason: 'MAX_TOKENS',
      usage: { prompt: 9, candidates: 0, thoughts: 256 },
    });
    const limited = requestId();
    const completion = await a.openai.chat.completions.create(
      {
        model: 'google/gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Think' }],
        max_completion_tokens: 256,
        reasoning_effort: 'high',
      },
      withId(limited),
    );
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.choices[0]!.message.content ?? '').toBe('');
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(256);
    expect(geminiFake.lastRequest!.body.generationConfig).toMatchObject({ maxOutputTokens: 256, thinkingConfig: { thinkingBudget: 256 } });
    await expectChargedExactly(
      h,
      a,
      limited,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 9, cachedInputTokens: 0, outputTokens: 256 }),
    );
  });
});

describe('Responses served by Claude and Gemini', () => {
  test('Claude: streamed reasoning item then message; effort → thinking budget; usage in Responses fields', async () => {
    const text = 'Responses from Claude.';
    anthropicFake.script({ thinking: 'Reasoning first.', signature: 'sig-r', text, usage: { input: 60, cacheRead: 500, output: 80 } });
    const id = requestId();
    const stream = a.openai.responses.stream(
      { model: 'anthropic/claude-sonnet-4-5', input: 'Go', reasoning: { effort: 'medium' }, max_output_tokens: 9000 },
      withId(id),
    );
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.reasoning_summary_text.delta');
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(final.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Reasoning first.' }] });
    expect(final.usage).toMatchObject({
      input_tokens: 560,
      input_tokens_details: { cached_tokens: 500 },
      output_tokens: 80,
      output_tokens_details: { reasoning_tokens: 80 - tokens(text) },
    });
    expect(anthropicFake.lastRequest!.body).toMatchObject({ max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 4096 } });
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 560, cachedInputTokens: 500, outputTokens: 80 }),
    );
  });

  test('Claude: function call item, then function_call_output round trip', async () => {
    anthropicFake.script({
      toolCalls: [{ id: 'toolu_r', name: 'get_weather', input: { city: 'Quito' } }],
      usage: { input: 70, output: 20 },
    });
    const first = requestId();
    const response = await a.openai.responses.create(
      {
        model: 'anthropic/claude-haiku-4-5',
        input: 'Weather in Quito?',
        tools: [{ type: 'function', name: 'get_weather', parameters: weatherParameters, strict: false }],
      },
      withId(first),
    );
    const call = response.output.find((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call')!;
    expect(call).toMatchObject({ call_id: 'toolu_r', name: 'get_weather', arguments: '{"city":"Quito"}' });
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 70, cachedInputTokens: 0, outputTokens: 20 }),
    );

    anthropicFake.script({ text: 'Mild in Quito.', usage: { input: 100, output: 5 } });
    const second = requestId();
    const answer = await a.openai.responses.create(
      {
        model: 'anthropic/claude-haiku-4-5',
        input: [{ role: 'user', content: 'Weather in Quito?' }, call, { type: 'function_call_output', call_id: 'toolu_r', output: '18°C' }],
        tools: [{ type: 'function', name: 'get_weather', parameters: weatherParameters, strict: false }],
      },
      withId(second),
    );
    expect(answer.output_text).toBe('Mild in Quito.');
    expect(anthropicFake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Quito?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_r', name: 'get_weather', input: { city: 'Quito' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_r', content: '18°C' }] },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 100, cachedInputTokens: 0, outputTokens: 5 }),
    );
  });

  test('Claude: its MCP calls show as mcp_call items (a failed one with its error), whole and streamed; approvals are refused by name', async () => {
    const mcpTool: OpenAI.Responses.Tool.Mcp = {
      type: 'mcp',
      server_label: 'docs',
      server_url: 'https://mcp.example.com/sse',
      require_approval: 'never',
    };
    const calls = [
      { id: 'mcptoolu_a', name: 'search', server: 'docs', input: { q: 'a' }, result: 'found a' },
      { id: 'mcptoolu_b', name: 'fetch', server: 'docs', input: {}, result: 'timeout', isError: true },
    ];
    const expected = [
      {
        type: 'mcp_call',
        id: 'mcptoolu_a',
        server_label: 'docs',
        name: 'search',
        arguments: '{"q":"a"}',
        output: 'found a',
        error: null,
        approval_request_id: null,
        status: 'completed',
      },
      {
        type: 'mcp_call',
        id: 'mcptoolu_b',
        server_label: 'docs',
        name: 'fetch',
        arguments: '{}',
        output: null,
        error: 'timeout',
        approval_request_id: null,
        status: 'failed',
      },
    ];
    anthropicFake.script({ mcpCalls: calls, text: 'Found a.', usage: { input: 90, output: 12 } });
    const whole = requestId();
    const response = await a.openai.responses.create(
      { model: 'anthropic/claude-haiku-4-5', input: 'Search a', tools: [mcpTool] },
      withId(whole),
    );
    expect(response.output.filter((item) => item.type === 'mcp_call')).toEqual(expected);
    expect(response.output_text).toBe('Found a.');
    expect(anthropicFake.lastRequest!.body.mcp_servers).toEqual([{ type: 'url', url: 'https://mcp.example.com/sse', name: 'docs' }]);
    await expectChargedExactly(
      h,
      a,
      whole,
      expectedCharge('anthropic/claude-haiku-4-5', { inputTokens: 90, cachedInputTokens: 0, outputTokens: 12 }),
    );

    const streamed = await a.openai.responses
      .stream({ model: 'anthropic/claude-haiku-4-5', input: 'Search a', tools: [mcpTool] })
      .finalResponse();
    expect(streamed.output.filter((item) => item.type === 'mcp_call')).toEqual(expected);

    const before = anthropicFake.requests.length;
    const refused = await a.openai.responses
      .create({ model: 'anthropic/claude-haiku-4-5', input: 'Search a', tools: [{ ...mcpTool, require_approval: 'always' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as { status?: number }).status).toBe(400);
    expect((refused as Error).message).toMatch(/tools: MCP server 'docs' asks for approvals.*set require_approval to 'never'/);
    expect((refused as { error?: { details?: unknown } }).error?.details).toEqual({ field: 'tools', model: 'anthropic/claude-haiku-4-5' });
    expect(anthropicFake.requests.length).toBe(before);

    // A Messages client declares MCP servers in `mcp_servers`: a vendor without them is refused naming that field.
    const geminiBefore = geminiFake.requests.length;
    const r = await call(`${h.t.url}/v1/messages`, {
      token: a.secret,
      body: {
        model: 'google/gemini-2.5-flash',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Search a' }],
        mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'docs' }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^mcp_servers: MCP server 'docs' cannot be used with model 'google\/gemini-2.5-flash'/);
    expect(geminiFake.requests.length).toBe(geminiBefore);
  });

  test('Claude: output items sent back as input keep the signed thinking block before the tool call', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      { type: 'function', name: 'get_weather', parameters: weatherParameters, strict: false },
    ];
    anthropicFake.script({
      thinking: 'Use the tool.',
      signature: 'sig-rt',
      toolCalls: [{ id: 'toolu_rt', name: 'get_weather', input: { city: 'Lagos' } }],
      usage: { input: 80, output: 30 },
    });
    const first = await a.openai.responses.create({
      model: 'anthropic/claude-sonnet-4-5',
      input: [{ role: 'user', content: 'Weather in Lagos?' }],
      tools,
      reasoning: { effort: 'low' },
      include: ['reasoning.encrypted_content'],
      max_output_tokens: 4000,
    });
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(first.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: 'sig-rt' });
    expect(anthropicFake.lastRequest!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });

    anthropicFake.script({ text: 'Hot in Lagos.', usage: { input: 120, output: 5 } });
    const id = requestId();
    const second = await a.openai.responses.create(
      {
        model: 'anthropic/claude-sonnet-4-5',
        input: [
          { role: 'user', content: 'Weather in Lagos?' },
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: 'toolu_rt', output: '31°C' },
        ],
        tools,
        reasoning: { effort: 'low' },
        include: ['reasoning.encrypted_content'],
        max_output_tokens: 4000,
      },
      withId(id),
    );
    expect(second.output_text).toBe('Hot in Lagos.');
    expect(anthropicFake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Lagos?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Use the tool.', signature: 'sig-rt' },
          { type: 'tool_use', id: 'toolu_rt', name: 'get_weather', input: { city: 'Lagos' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_rt', content: '31°C' }] },
    ]);
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('anthropic/claude-sonnet-4-5', { inputTokens: 120, cachedInputTokens: 0, outputTokens: 5 }),
    );
  });

  test('Gemini: effort xhigh → the family maximum budget; text.format json_object; incomplete on MAX_TOKENS', async () => {
    geminiFake.script({ text: '{"ok":true}', usage: { prompt: 20, candidates: 5, thoughts: 30 } });
    const id = requestId();
    const response = await a.openai.responses.create(
      {
        model: 'google/gemini-2.5-pro',
        input: 'JSON please',
        reasoning: { effort: 'xhigh' as OpenAI.ReasoningEffort },
        text: { format: { type: 'json_object' } },
        max_output_tokens: 40000,
      },
      withId(id),
    );
    expect(response.output_text).toBe('{"ok":true}');
    expect(response.usage).toMatchObject({ input_tokens: 20, output_tokens: 35, output_tokens_details: { reasoning_tokens: 30 } });
    expect(geminiFake.lastRequest!.body.generationConfig).toMatchObject({
      maxOutputTokens: 40000,
      responseMimeType: 'application/json',
      thinkingConfig: { thinkingBudget: 32768, includeThoughts: true },
    });
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('google/gemini-2.5-pro', { inputTokens: 20, cachedInputTokens: 0, outputTokens: 35 }),
    );

    geminiFake.script({ text: 'Cut sh', finishReason: 'MAX_TOKENS', usage: { prompt: 20, candidates: 2 } });
    const limited = requestId();
    const incomplete = await a.openai.responses.create(
      { model: 'google/gemini-2.5-flash', input: 'Long story', max_output_tokens: 2 },
      withId(limited),
    );
    expect(incomplete.status).toBe('incomplete');
    expect(incomplete.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    await expectChargedExactly(
      h,
      a,
      limited,
      expectedCharge('google/gemini-2.5-flash', { inputTokens: 20, cachedInputTokens: 0, outputTokens: 2 }),
    );
  });
});

describe('sandbox through the SDKs', () => {
  test('Chat, Responses and Messages echo deterministically and are charged exactly what they report', async () => {
    const chatId = requestId();
    const chat = await a.openai.chat.completions.create(
      { model: 'sandbox/echo', messages: [{ role: 'user', content: 'Echo this [sandbox:cached=2]' }] },
      withId(chatId),
    );
    expect(chat.choices[0]!.message.content).toBe('Echo this');
    expect(chat.usage!.prompt_tokens_details?.cached_tokens).toBe(2);
    await expectChargedExactly(
      h,
      a,
      chatId,
      expectedCharge('sandbox/echo', {
        inputTokens: chat.usage!.prompt_tokens,
        cachedInputTokens: 2,
        outputTokens: chat.usage!.completion_tokens,
      }),
    );

    const respId = requestId();
    const response = await a.openai.responses.create(
      { model: 'sandbox/reasoner', input: 'Reason please', reasoning: { effort: 'low' } },
      withId(respId),
    );
    expect(response.output_text).toBe('Reason please');
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(16);
    await expectChargedExactly(
      h,
      a,
      respId,
      expectedCharge('sandbox/reasoner', {
        inputTokens: response.usage!.input_tokens,
        cachedInputTokens: 0,
        outputTokens: response.usage!.output_tokens,
      }),
    );

    const msgId = requestId();
    const message = await a.anthropic.messages.create(
      { model: 'sandbox/echo', max_tokens: 100, messages: [{ role: 'user', content: 'Hidden [sandbox:hidden-reasoning=20]' }] },
      withId(msgId),
    );
    expect(message.content).toEqual([{ type: 'text', text: 'Hidden' }]);
    // Not reported by the vendor: estimated as billed output minus the visible answer.
    expect(message.usage.output_tokens_details?.thinking_tokens).toBe(message.usage.output_tokens - tokens('Hidden'));
    expect(message.usage.output_tokens_details?.thinking_tokens).toBe(20);
    await expectChargedExactly(
      h,
      a,
      msgId,
      expectedCharge('sandbox/echo', {
        inputTokens: message.usage.input_tokens,
        cachedInputTokens: 0,
        outputTokens: message.usage.output_tokens,
      }),
    );
  });

  test('sandbox tools over Messages and refusal over Chat', async () => {
    const message = await a.anthropic.messages.create({
      model: 'sandbox/echo',
      max_tokens: 200,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [{ role: 'user', content: 'Use it [sandbox:tool=get_weather]' }],
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { city: 'sandbox' } })]);
    const refusal = await a.openai.chat.completions.create({
      model: 'sandbox/echo',
      messages: [{ role: 'user', content: '[sandbox:refuse] do it' }],
    });
    expect(refusal.choices[0]!.finish_reason).toBe('content_filter');
    expect(refusal.choices[0]!.message.content).toBe(SANDBOX_REFUSAL);
  });
});

describe('an OpenAI-compatible vendor from a custom catalog', () => {
  let vllm: FakeVendor<FakeOpenAIReply>;
  let v: TextHarness;
  let account: TextAccount;
  let dir: string;

  beforeAll(async () => {
    vllm = await startFakeOpenAI({ apiKey: null });
    dir = mkdtempSync(join(tmpdir(), 'tollgate-catalog-'));
    const file = join(dir, 'catalog.json');
    writeFileSync(
      file,
      JSON.stringify({
        models: [
          {
            kind: 'text',
            id: 'vllm/llama-3.1-8b',
            vendor: 'vllm',
            protocol: 'openai-compatible',
            vendor_model_id: 'meta-llama/Llama-3.1-8B-Instruct',
            aliases: ['meta-llama/Llama-3.1-8B-Instruct'],
            created: 1721692800,
            context_length: 131072,
            max_output_tokens: 8192,
            effort: 'none',
            pricing: { input: '0.05', cached_input: '0.01', output: '0.08' },
          },
        ],
      }),
    );
    v = await startTextHarness({ TOLLGATE_CATALOG: file, VLLM_BASE_URL: vllm.url });
    account = await textAccount(v.t);
  });
  afterAll(async () => {
    await v?.stop();
    await vllm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('is listed, served through Chat with max_tokens and no Authorization, and charged at the catalog price', async () => {
    const models = await account.openai.models.list();
    expect(models.data.map((m) => m.id)).toContain('vllm/llama-3.1-8b');

    vllm.script({ text: 'Hello from vLLM.', usage: { input: 4000, cached: 1000, output: 300 } });
    const id = requestId();
    const { data, response } = await account.openai.chat.completions
      .create(
        { model: 'meta-llama/Llama-3.1-8B-Instruct', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20000, temperature: 0.1 },
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('x-service-model-routed-from')).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect(response.headers.get('x-service-max-output-clamped')).toBe('8192');
    expect(data.model).toBe('vllm/llama-3.1-8b');
    expect(data.choices[0]!.message.content).toBe('Hello from vLLM.');
    const sent = vllm.lastRequest!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBeUndefined();
    // A non-streamed client request is a non-streamed upstream call (Chat Completions upstreams).
    expect(sent.body).toMatchObject({ model: 'meta-llama/Llama-3.1-8B-Instruct', max_tokens: 8192, temperature: 0.1, stream: false });
    expect(sent.body).not.toHaveProperty('stream_options');
    expect(sent.body).not.toHaveProperty('max_completion_tokens');
    // $0.05/M × 3000 + $0.01/M × 1000 + $0.08/M × 300 = 150 + 10 + 24 micro-dollars.
    const money = await expectChargedExactly(v, account, id, 184n);
    expect(money.usage[0]).toMatchObject({ model: 'vllm/llama-3.1-8b', input_tokens: 4000, cached_input_tokens: 1000, output_tokens: 300 });
  });

  test('Messages and Responses requests are served by it too, with reasoning_content shown as thinking', async () => {
    vllm.script({ reasoning: 'vLLM thinks.', text: 'Answer.', usage: { input: 100, output: 50 } });
    const message = await account.anthropic.messages
      .stream({ model: 'vllm/llama-3.1-8b', max_tokens: 500, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(message.content[1]).toMatchObject({ text: 'Answer.' });
    expect(vllm.lastRequest!.body.max_tokens).toBe(500);

    vllm.script({ text: 'Responses via vLLM.', usage: { input: 10, output: 5 } });
    const response = await account.openai.responses.create({ model: 'vllm/llama-3.1-8b', input: 'Hi' });
    expect(response.output_text).toBe('Responses via vLLM.');
    expect(response.model).toBe('vllm/llama-3.1-8b');
  });
});
