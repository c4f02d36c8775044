import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { call, createKey, provisionAccount } from '../support/tollgate';
import {
  expectChargedExactly,
  expectConsistent,
  expectedCharge,
  moneyOf,
  openaiClient,
  requestId,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * The official `openai` SDK against Tollgate over real HTTP: Chat Completions and Responses,
 * served by the OpenAI fake through its Chat upstream (gpt-4o-mini) and its Responses upstream
 * (o4-mini, an effort model). Every success is checked against the ledger to the micro-dollar.
 */

let fake: FakeVendor<FakeOpenAIReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  h = await startTextHarness({ OPENAI_API_KEY: fake.apiKey!, OPENAI_BASE_URL: fake.url });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await fake?.close();
});
beforeEach(() => fake.script());

const weatherTool: OpenAI.Chat.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('Chat Completions (Chat upstream, gpt-4o-mini)', () => {
  test('non-stream: routed id, service model, mapped usage, default output limit, exact charge', async () => {
    fake.script({ text: 'Bonjour!', usage: { input: 1200, cached: 1024, output: 9 } });
    const id = requestId();
    const { data, response } = await a.openai.chat.completions
      .create(
        {
          model: 'gpt-4o-mini-2024-07-18',
          messages: [
            { role: 'developer', content: 'Answer in French.' },
            { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
          ],
          temperature: 0.3,
          stop: ['END'],
        },
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('x-service-model-routed-from')).toBe('gpt-4o-mini-2024-07-18');
    expect(response.headers.get('x-service-max-output-clamped')).toBeNull();
    expect(data.model).toBe('openai/gpt-4o-mini');
    expect(data.object).toBe('chat.completion');
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Bonjour!' });
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({
      prompt_tokens: 1200,
      completion_tokens: 9,
      total_tokens: 1209,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });

    const sent = fake.lastRequest!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hello' },
      ],
      max_completion_tokens: 4096,
      temperature: 0.3,
      stop: ['END'],
    });
    expect(sent.body).not.toHaveProperty('max_tokens');
    await expectChargedExactly(
      h,
      a,
      id,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 1200, cachedInputTokens: 1024, outputTokens: 9 }),
    );
  });

  test('stream with include_usage: text deltas, finish chunk, usage in the last chunk, exact charge', async () => {
    fake.script({ text: 'Streaming answer in several pieces.', usage: { input: 40, cached: 0, output: 8 } });
    const id = requestId();
    const { data: stream, response } = await a.openai.chat.completions
      .create(
        {
          model: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: 'Stream please' }],
          stream: true,
          stream_options: { include_usage: true },
        },
        withId(id),
      )
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-service-model-routed-from')).toBeNull();
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Streaming answer in several pieces.');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.model === 'openai/gpt-4o-mini' && c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({
      prompt_tokens: 40,
      completion_tokens: 8,
      total_tokens: 48,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 40, cachedInputTokens: 0, outputTokens: 8 }));
  });

  test('stream helper (ChatCompletionStream) accumulates the same answer; no usage chunk without include_usage', async () => {
    fake.script({ text: 'Accumulated by the SDK.', usage: { input: 11, output: 6 } });
    const id = requestId();
    const stream = a.openai.chat.completions.stream(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
      withId(id),
    );
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Accumulated by the SDK.');
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.every((c) => !('usage' in c) || c.usage == null)).toBe(true);
    // Upstream is always asked for usage, whatever the client asked.
    expect(fake.lastRequest!.body.stream_options).toEqual({ include_usage: true });
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 11, cachedInputTokens: 0, outputTokens: 6 }));
  });

  test('tools: a streamed tool call, then the tool result round trip', async () => {
    fake.script({ toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }], usage: { input: 80, output: 15 } });
    const first = requestId();
    const stream = a.openai.chat.completions.stream(
      {
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [weatherTool],
        tool_choice: 'auto',
        parallel_tool_calls: false,
      },
      withId(first),
    );
    const completion = await stream.finalChatCompletion();
    const message = completion.choices[0]!.message;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.tool_calls).toEqual([
      { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(fake.lastRequest!.body).toMatchObject({ tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false });
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 80, cachedInputTokens: 0, outputTokens: 15 }),
    );

    fake.script({ text: 'It is sunny in Paris.', usage: { input: 120, output: 7 } });
    const second = requestId();
    const answer = await a.openai.chat.completions.create(
      {
        model: 'openai/gpt-4o-mini',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: message.content, tool_calls: message.tool_calls },
          { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
        ],
        tools: [weatherTool],
      },
      withId(second),
    );
    expect(answer.choices[0]!.message.content).toBe('It is sunny in Paris.');
    expect(fake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 120, cachedInputTokens: 0, outputTokens: 7 }),
    );
  });

  test('the assistant message of a non-stream answer can be sent back verbatim (the usual tool loop)', async () => {
    fake.script({ toolCalls: [{ id: 'call_v1', name: 'get_weather', arguments: '{"city":"Rome"}' }], usage: { input: 70, output: 14 } });
    const first = await a.openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [weatherTool],
    });
    const message = first.choices[0]!.message;
    expect(message.tool_calls).toHaveLength(1);
    fake.script({ text: 'Rainy in Rome.', usage: { input: 100, output: 5 } });
    const id = requestId();
    const second = await a.openai.chat.completions.create(
      {
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Weather in Rome?' }, message, { role: 'tool', tool_call_id: 'call_v1', content: 'rain' }],
        tools: [weatherTool],
      },
      withId(id),
    );
    expect(second.choices[0]!.message.content).toBe('Rainy in Rome.');
    expect(fake.lastRequest!.body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_v1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }],
    });
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 100, cachedInputTokens: 0, outputTokens: 5 }));
  });

  test('json_schema response_format reaches the vendor; the answer parses', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
    fake.script({ text: '{"answer":42}', usage: { input: 30, output: 5 } });
    const id = requestId();
    const completion = await a.openai.chat.completions.parse(
      {
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'The answer?' }],
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      },
      withId(id),
    );
    expect(completion.choices[0]!.message.parsed).toEqual({ answer: 42 });
    expect(fake.lastRequest!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } });
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 30, cachedInputTokens: 0, outputTokens: 5 }));
  });

  test('a refusal is finish_reason content_filter with the refusal text', async () => {
    fake.script({ refusal: "I'm sorry, I can't help with that.", usage: { input: 20, output: 9 } });
    const id = requestId();
    const completion = await a.openai.chat.completions.create(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Something bad' }] },
      withId(id),
    );
    expect(completion.choices[0]!.finish_reason).toBe('content_filter');
    expect(completion.choices[0]!.message.content).toBe("I'm sorry, I can't help with that.");
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 20, cachedInputTokens: 0, outputTokens: 9 }));
  });

  test('max_tokens above the model maximum is clamped, with the header and the upstream limit', async () => {
    const id = requestId();
    fake.script({ text: 'Short.', usage: { input: 10, output: 2 } });
    const { data, response } = await a.openai.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1_000_000 }, withId(id))
      .withResponse();
    expect(response.headers.get('x-service-max-output-clamped')).toBe('16384');
    expect(data.choices[0]!.message.content).toBe('Short.');
    expect(fake.lastRequest!.body.max_completion_tokens).toBe(16384);
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 10, cachedInputTokens: 0, outputTokens: 2 }));

    // Within the limit: passed through, no header.
    const { response: unclamped } = await a.openai.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 300 })
      .withResponse();
    expect(unclamped.headers.get('x-service-max-output-clamped')).toBeNull();
    expect(fake.lastRequest!.body.max_completion_tokens).toBe(300);
  });

  test('reasoning_effort is ignored by a model without an effort setting', async () => {
    fake.script({ text: 'Plain.', usage: { input: 8, output: 2 } });
    const completion = await a.openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      reasoning_effort: 'high',
    });
    expect(completion.choices[0]!.message.content).toBe('Plain.');
    expect(fake.lastRequest!.path).toBe('/v1/chat/completions');
    expect(fake.lastRequest!.body).not.toHaveProperty('reasoning_effort');
  });
});

describe('Chat Completions on an effort model (o4-mini, Responses upstream)', () => {
  test('reasoning_effort maps to the Responses effort; reasoning tokens come back in completion_tokens_details', async () => {
    fake.script({ reasoning: 'Thinking.', text: 'Forty-two.', usage: { input: 50, cached: 20, output: 300, reasoning: 256 } });
    const id = requestId();
    const completion = await a.openai.chat.completions.create(
      { model: 'o4-mini', messages: [{ role: 'user', content: 'Answer?' }], reasoning_effort: 'minimal', temperature: 0.5 },
      withId(id),
    );
    expect(completion.model).toBe('openai/o4-mini');
    expect(completion.choices[0]!.message.content).toBe('Forty-two.');
    expect(completion.usage).toMatchObject({
      prompt_tokens: 50,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 256 },
    });
    const sent = fake.lastRequest!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.body).toMatchObject({
      model: 'o4-mini',
      store: false,
      stream: false,
      max_output_tokens: 4096,
      reasoning: { effort: 'low' },
    }); // read whole: a non-streamed upstream call
    expect(sent.body).not.toHaveProperty('temperature');
    await expectChargedExactly(h, a, id, expectedCharge('openai/o4-mini', { inputTokens: 50, cachedInputTokens: 20, outputTokens: 300 }));
  });

  test('an output limit eaten by reasoning ends with finish_reason length and no text', async () => {
    fake.script({ text: '', finishReason: 'length', usage: { input: 25, output: 64, reasoning: 64 } });
    const id = requestId();
    const completion = await a.openai.chat.completions.create(
      { model: 'openai/o4-mini', messages: [{ role: 'user', content: 'Think hard' }], max_completion_tokens: 64, reasoning_effort: 'high' },
      withId(id),
    );
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.choices[0]!.message.content ?? '').toBe('');
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(64);
    expect(fake.lastRequest!.body).toMatchObject({ max_output_tokens: 64, reasoning: { effort: 'high' } });
    await expectChargedExactly(h, a, id, expectedCharge('openai/o4-mini', { inputTokens: 25, cachedInputTokens: 0, outputTokens: 64 }));
  });
});

describe('Responses', () => {
  test('non-stream on o4-mini: effort xhigh → high upstream, usage fields of the Responses family, exact charge', async () => {
    fake.script({ reasoning: 'Let me see.', text: 'Done.', usage: { input: 70, cached: 64, output: 120, reasoning: 100 } });
    const id = requestId();
    const { data: response, response: http } = await a.openai.responses
      .create(
        {
          model: 'o4-mini-2025-04-16',
          instructions: 'Be exact.',
          input: 'What is 6*7?',
          reasoning: { effort: 'xhigh' as OpenAI.ReasoningEffort },
          store: false,
        },
        withId(id),
      )
      .withResponse();
    expect(http.headers.get('x-service-model-routed-from')).toBe('o4-mini-2025-04-16');
    expect(response.model).toBe('openai/o4-mini');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Done.');
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.usage).toMatchObject({
      input_tokens: 70,
      input_tokens_details: { cached_tokens: 64 },
      output_tokens: 120,
      output_tokens_details: { reasoning_tokens: 100 },
      total_tokens: 190,
    });
    expect(fake.lastRequest!.body).toMatchObject({
      model: 'o4-mini',
      input: [
        { type: 'message', role: 'system', content: 'Be exact.' },
        { type: 'message', role: 'user', content: 'What is 6*7?' },
      ],
      reasoning: { effort: 'high' },
      max_output_tokens: 4096,
    });
    await expectChargedExactly(h, a, id, expectedCharge('openai/o4-mini', { inputTokens: 70, cachedInputTokens: 64, outputTokens: 120 }));
  });

  test('stream events through the ResponseStream helper on gpt-4o-mini (Chat upstream)', async () => {
    fake.script({ text: 'Hello over Responses.', usage: { input: 33, cached: 0, output: 5 } });
    const id = requestId();
    const stream = a.openai.responses.stream(
      { model: 'openai/gpt-4o-mini', input: [{ role: 'user', content: 'Hi' }], max_output_tokens: 200 },
      withId(id),
    );
    const types: string[] = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const final = await stream.finalResponse();
    const outputText = final.output
      .flatMap((item) => (item.type === 'message' ? item.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])) : []))
      .join('');
    expect(deltas).toBe('Hello over Responses.');
    expect(types[0]).toBe('response.created');
    expect(types[1]).toBe('response.in_progress');
    expect(types.at(-1)).toBe('response.completed');
    for (const expected of [
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ])
      expect(types).toContain(expected);
    expect(outputText).toBe('Hello over Responses.');
    expect(final.status).toBe('completed');
    expect(final.model).toBe('openai/gpt-4o-mini');
    expect(final.usage).toMatchObject({
      input_tokens: 33,
      output_tokens: 5,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(fake.lastRequest!.path).toBe('/v1/chat/completions');
    expect(fake.lastRequest!.body.max_completion_tokens).toBe(200);
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 33, cachedInputTokens: 0, outputTokens: 5 }));
  });

  test('function tools: a streamed call, then function_call_output sent back', async () => {
    const tool: OpenAI.Responses.FunctionTool = {
      type: 'function',
      name: 'lookup',
      description: 'Look up',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
      strict: true,
    };
    fake.script({
      toolCalls: [{ id: 'call_r1', name: 'lookup', arguments: '{"q":"tollgate"}' }],
      usage: { input: 60, output: 12, reasoning: 0 },
    });
    const first = requestId();
    const stream = a.openai.responses.stream(
      { model: 'openai/o4-mini', input: 'Look up tollgate', tools: [tool], tool_choice: { type: 'function', name: 'lookup' } },
      withId(first),
    );
    const argDeltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
    const final = await stream.finalResponse();
    const calls = final.output.filter((item) => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ call_id: 'call_r1', name: 'lookup', arguments: '{"q":"tollgate"}' });
    expect(argDeltas.join('')).toBe('{"q":"tollgate"}');
    expect(fake.lastRequest!.body).toMatchObject({
      tools: [{ type: 'function', name: 'lookup', parameters: tool.parameters, strict: true }],
      tool_choice: { type: 'function', name: 'lookup' },
    });
    await expectChargedExactly(h, a, first, expectedCharge('openai/o4-mini', { inputTokens: 60, cachedInputTokens: 0, outputTokens: 12 }));

    fake.script({ text: 'Tollgate is a gateway.', usage: { input: 90, output: 30, reasoning: 20 } });
    const second = requestId();
    const answer = await a.openai.responses.create(
      {
        model: 'openai/o4-mini',
        input: [
          { role: 'user', content: 'Look up tollgate' },
          { type: 'function_call', call_id: 'call_r1', name: 'lookup', arguments: '{"q":"tollgate"}' },
          { type: 'function_call_output', call_id: 'call_r1', output: 'A gateway.' },
        ],
        tools: [tool],
      },
      withId(second),
    );
    expect(answer.output_text).toBe('Tollgate is a gateway.');
    expect(fake.lastRequest!.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Look up tollgate' },
      { type: 'function_call', call_id: 'call_r1', name: 'lookup', arguments: '{"q":"tollgate"}' },
      { type: 'function_call_output', call_id: 'call_r1', output: 'A gateway.' },
    ]);
    await expectChargedExactly(h, a, second, expectedCharge('openai/o4-mini', { inputTokens: 90, cachedInputTokens: 0, outputTokens: 30 }));
  });

  test('MCP approvals, stateless: the approval request comes out, the answer goes back with the earlier items, the call comes out; exact charges', async () => {
    const mcpTool: OpenAI.Responses.Tool.Mcp = {
      type: 'mcp',
      server_label: 'docs',
      server_url: 'https://mcp.example.com/sse',
      require_approval: 'always',
    };
    const listing = {
      id: 'mcpl_a1',
      type: 'mcp_list_tools',
      server_label: 'docs',
      tools: [
        {
          name: 'search',
          input_schema: { type: 'object', properties: { q: { type: 'string' } } },
          description: 'Search the docs',
          annotations: null,
        },
      ],
      error: null,
    };
    const ask = { id: 'mcpr_a1', type: 'mcp_approval_request', server_label: 'docs', name: 'search', arguments: '{"q":"limits"}' };
    fake.script({ mcpItems: [listing, ask], text: '', usage: { input: 50, output: 12 } });
    const first = requestId();
    const asked = await a.openai.responses.create(
      { model: 'openai/gpt-4o-mini', input: 'Search the docs for limits', tools: [mcpTool] },
      withId(first),
    );
    expect(asked.status).toBe('completed');
    expect(asked.output_text).toBe('');
    expect(asked.output).toEqual([listing, ask]);
    expect(asked.tools).toEqual([
      { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse', allowed_tools: null, require_approval: 'always' },
    ]);
    expect(fake.lastRequest!.path).toBe('/v1/responses');
    expect(fake.lastRequest!.body.tools).toEqual([
      { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse', require_approval: 'always' },
    ]);
    await expectChargedExactly(
      h,
      a,
      first,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 50, cachedInputTokens: 0, outputTokens: 12 }),
    );

    const call = {
      id: 'mcp_a1',
      type: 'mcp_call',
      server_label: 'docs',
      name: 'search',
      arguments: '{"q":"limits"}',
      output: 'Limits are per key.',
      error: null,
      approval_request_id: 'mcpr_a1',
      status: 'completed',
    };
    fake.script({ mcpItems: [call], text: 'Limits are per key.', usage: { input: 140, output: 20 } });
    const second = requestId();
    const stream = a.openai.responses.stream(
      {
        model: 'openai/gpt-4o-mini',
        input: [
          { role: 'user', content: 'Search the docs for limits' },
          ...(asked.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'mcp_approval_response', approval_request_id: 'mcpr_a1', approve: true },
        ],
        tools: [mcpTool],
      },
      withId(second),
    );
    const added: string[] = [];
    stream.on('response.output_item.added', (e) => added.push(e.item.type));
    const final = await stream.finalResponse();
    expect(added).toEqual(['mcp_call', 'message']);
    expect(final.output.map((item) => item.type)).toEqual(['mcp_call', 'message']);
    expect(final.output[0]).toEqual(call);
    expect(final.output[1]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'Limits are per key.' }] });
    expect(fake.lastRequest!.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Search the docs for limits' },
      // The items as the client sent them back: what OpenAI's own client would send.
      listing,
      ask,
      { type: 'mcp_approval_response', id: null, approval_request_id: 'mcpr_a1', approve: true, reason: null },
    ]);
    await expectChargedExactly(
      h,
      a,
      second,
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 140, cachedInputTokens: 0, outputTokens: 20 }),
    );
  });

  test('text.format json_schema reaches the vendor and is echoed; output_parsed through the SDK', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    fake.script({ text: '{"city":"Paris"}', usage: { input: 22, output: 6 } });
    const id = requestId();
    const response = await a.openai.responses.parse(
      {
        model: 'openai/gpt-4o-mini',
        input: 'Capital of France as JSON',
        text: { format: { type: 'json_schema', name: 'capital', schema, strict: true } },
      },
      withId(id),
    );
    expect(response.output_parsed).toEqual({ city: 'Paris' });
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'capital' });
    expect(fake.lastRequest!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'capital', schema, strict: true } });
    await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 22, cachedInputTokens: 0, outputTokens: 6 }));
  });

  test('max_output_tokens above the model maximum is clamped with the header', async () => {
    fake.script({ text: 'Ok.', usage: { input: 9, output: 40, reasoning: 38 } });
    const id = requestId();
    const { data, response } = await a.openai.responses
      .create({ model: 'openai/o4-mini', input: 'Hi', max_output_tokens: 250_000 }, withId(id))
      .withResponse();
    expect(response.headers.get('x-service-max-output-clamped')).toBe('100000');
    expect(data.max_output_tokens).toBe(100000); // the limit used, as the header says
    expect(data.output_text).toBe('Ok.');
    expect(fake.lastRequest!.body.max_output_tokens).toBe(100000);
    await expectChargedExactly(h, a, id, expectedCharge('openai/o4-mini', { inputTokens: 9, cachedInputTokens: 0, outputTokens: 40 }));
  });

  test('an output limit eaten by reasoning is incomplete (max_output_tokens) with no text', async () => {
    fake.script({ text: '', finishReason: 'length', usage: { input: 15, output: 32, reasoning: 32 } });
    const id = requestId();
    const response = await a.openai.responses.create({ model: 'openai/o4-mini', input: 'Think', max_output_tokens: 32 }, withId(id));
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output_text).toBe('');
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(32);
    await expectChargedExactly(h, a, id, expectedCharge('openai/o4-mini', { inputTokens: 15, cachedInputTokens: 0, outputTokens: 32 }));
  });
});

describe('refusals of bad input: 4xx envelopes naming the field, nothing reserved or charged', () => {
  async function refused(run: (id: string) => Promise<unknown>): Promise<{ error: InstanceType<typeof OpenAI.APIError>; id: string }> {
    const id = requestId();
    const before = fake.requests.length;
    const error = await run(id).then(
      () => {
        throw new Error('expected a refusal');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(fake.requests.length).toBe(before); // the vendor was never called
    const money = await moneyOf(h.db, id);
    expect(money).toEqual({ usage: [], charges: [] });
    return { error: error as InstanceType<typeof OpenAI.APIError>, id };
  }
  /** The Tollgate error envelope's `error` object, as the SDK keeps it. */
  const envelope = (error: InstanceType<typeof OpenAI.APIError>) =>
    error.error as { code: string; message: string; details: Record<string, unknown> };
  const chat = (body: Record<string, unknown>) => (id: string) =>
    a.openai.chat.completions.create(
      {
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hi' }],
        ...body,
      } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      withId(id),
    );

  test.each([
    ['max_tokens', 0],
    ['max_tokens', -5],
    ['max_tokens', 1.5],
    ['max_completion_tokens', 0],
    ['max_completion_tokens', -1],
    ['max_completion_tokens', 2.5],
  ])('chat %s = %p → 400 naming the field', async (field, value) => {
    const { error } = await refused(chat({ [field]: value }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('bad_request');
    expect(envelope(error).message).toContain(field);
  });

  test.each([0, -3, 1.5])('responses max_output_tokens = %p → 400 naming the field', async (value) => {
    const { error } = await refused((id) =>
      a.openai.responses.create({ model: 'openai/gpt-4o-mini', input: 'Hi', max_output_tokens: value }, withId(id)),
    );
    expect(error.status).toBe(400);
    expect(envelope(error).message).toContain('max_output_tokens');
  });

  test('both max_tokens and max_completion_tokens → 400', async () => {
    const { error } = await refused(chat({ max_tokens: 10, max_completion_tokens: 10 }));
    expect(error.status).toBe(400);
    expect(envelope(error).message).toMatch(/max_tokens/);
    expect(envelope(error).message).toMatch(/max_completion_tokens/);
  });

  test('n = 2 → 400 naming n', async () => {
    const { error } = await refused(chat({ n: 2 }));
    expect(error.status).toBe(400);
    expect(envelope(error).message).toMatch(/^n /);
  });

  test('an image content part → 400 naming the part', async () => {
    const { error } = await refused((id) =>
      a.openai.chat.completions.create(
        {
          model: 'openai/gpt-4o-mini',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
              ],
            },
          ],
        },
        withId(id),
      ),
    );
    expect(error.status).toBe(400);
    expect(envelope(error).message).toContain('messages[0].content[1].type');
    const responses = await refused((id) =>
      a.openai.responses.create(
        {
          model: 'openai/gpt-4o-mini',
          input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' }] }],
        },
        withId(id),
      ),
    );
    expect(responses.error.status).toBe(400);
    expect(envelope(responses.error).message).toContain('input[0].content[0].type');
  });

  test('unknown model → 404 model_not_available naming the sent id', async () => {
    const { error } = await refused((id) =>
      a.openai.chat.completions.create({ model: 'gpt-7-ultra', messages: [{ role: 'user', content: 'Hi' }] }, withId(id)),
    );
    expect(error.status).toBe(404);
    expect(error.code).toBe('model_not_available');
    expect(envelope(error).message).toContain('gpt-7-ultra');
  });

  test('a plan key asking for a model outside its plan → 404 for the id sent; inside its plan it is served', async () => {
    const account = await provisionAccount(h.t.url, { fundsMicro: '1000000', plan: 'starter' });
    const planKey = await createKey(h.t.url, account.sessionToken, { name: 'plan', kind: 'plan' });
    const client = openaiClient(h.t.url, planKey.secret);
    const { error } = await refused((id) =>
      client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'Hi' }] }, withId(id)),
    );
    expect(error.status).toBe(404);
    expect(error.code).toBe('model_not_available');
    expect(envelope(error).message).toContain('gpt-4.1');
    fake.script({ text: 'Plan answer.', usage: { input: 5, output: 3 } });
    const ok = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    expect(ok.choices[0]!.message.content).toBe('Plan answer.');
  });

  test('store: true and stateless violations are refused on /responses', async () => {
    const { error } = await refused((id) =>
      a.openai.responses.create({ model: 'openai/gpt-4o-mini', input: 'Hi', previous_response_id: 'resp_123' }, withId(id)),
    );
    expect(error.status).toBe(400);
    expect(envelope(error).message).toContain('previous_response_id');
    const raw = await call(`${h.t.url}/v1/chat/completions`, {
      token: a.secret,
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], store: true },
    });
    expect(raw.status).toBe(400);
    expect(raw.body.error).toMatchObject({ code: 'bad_request' });
    expect(raw.body.error.message).toContain('store');
  });

  test.each([
    ['/v1/chat/completions', '{"model": "openai/gpt-4o-mini", "messages": [', null],
    ['/v1/chat/completions', JSON.stringify({ model: 'openai/gpt-4o-mini', messages: 'Hi' }), 'messages'],
    [
      '/v1/chat/completions',
      JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: '100' }),
      'max_tokens',
    ],
    ['/v1/responses', JSON.stringify({ model: 'openai/gpt-4o-mini', input: 'Hi', tools: [{ type: 'web_search' }] }), 'tools[0].type'],
    [
      '/v1/messages',
      JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], top_k: -5 }),
      'top_k',
    ],
    ['/v1/messages', '[]', null],
  ])('malformed or mistyped body on %s → 400 envelope (%#)', async (path, rawBody, field) => {
    const before = fake.requests.length;
    const response = await call(`${h.t.url}${path}`, { token: a.secret, rawBody, headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bad_request');
    if (field) expect(response.body.error.message).toContain(field);
    expect(fake.requests.length).toBe(before);
  });

  afterAll(async () => expectConsistent(h, a));
});
