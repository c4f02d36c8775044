import { textHarnessOnFakes } from '../support/vendor-fakes';
import { sseFrames } from '../support/text';

/**
 * The hint rule over real HTTP, the same in the three formats (docs/api.md, "Field policy"): a
 * hint the serving vendor takes reaches it and is not named; one it cannot take is dropped, not
 * refused, and named in `x-service-dropped-hints` as the client named it, whole or streamed.
 */

const on = textHarnessOnFakes();

const DROPPED = 'x-service-dropped-hints';
const weather = { type: 'object', properties: { city: { type: 'string' } } };

/** A raw POST (the key as a bearer token, which all three formats take). */
async function post(path: string, body: Record<string, unknown>) {
  const response = await fetch(`${on.h.t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${on.a.secret}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, dropped: response.headers.get(DROPPED), text: await response.text() };
}

const geminiConfig = () => on.gemini.lastRequest!.body.generationConfig as Record<string, unknown>;

describe('Chat Completions', () => {
  test('hints OpenAI takes reach it, and none is named', async () => {
    const { data, response } = await on.a.openai.chat.completions
      .create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: 0.3,
        seed: 7,
        verbosity: 'low',
        presence_penalty: 0.5,
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBeTruthy();
    expect(response.headers.get(DROPPED)).toBeNull();
    expect(on.openai.lastRequest!.body).toMatchObject({ temperature: 0.3, seed: 7, verbosity: 'low', presence_penalty: 0.5 });
  });

  test('served by Gemini: sampling reaches it; seed, verbosity and parallel tool calls are dropped and named', async () => {
    const { response } = await on.a.openai.chat.completions
      .create({
        model: 'google/gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather } }],
        temperature: 0.3,
        seed: 7,
        verbosity: 'low',
        parallel_tool_calls: false,
      })
      .withResponse();
    expect(response.headers.get(DROPPED)).toBe('seed, verbosity, parallel_tool_calls');
    expect(geminiConfig().temperature).toBe(0.3);
    expect(JSON.stringify(on.gemini.lastRequest!.body)).not.toMatch(/seed|verbosity|parallel/);
  });

  test('streamed, served by Claude while it thinks: temperature is dropped and named before the first chunk', async () => {
    on.anthropic.script({ thinking: 'Hmm.', text: 'Thought through.' });
    const answer = await post('/v1/chat/completions', {
      model: 'anthropic/claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Hi' }],
      reasoning_effort: 'high',
      max_completion_tokens: 20000,
      temperature: 0.7,
      stream: true,
    });
    expect(answer.status).toBe(200);
    expect(answer.dropped).toBe('temperature');
    expect(sseFrames(answer.text).at(-1)!.data).toBe('[DONE]');
    expect(on.anthropic.lastRequest!.body.thinking).toBeDefined();
    expect(on.anthropic.lastRequest!.body).not.toHaveProperty('temperature');
  });

  test('cache breakpoints (LiteLLM and OpenRouter style) reach Claude on the same blocks, and are named where they are dropped', async () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'Hi' },
          ],
        },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: weather }, cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
    };
    const claude = await post('/v1/chat/completions', { model: 'anthropic/claude-sonnet-4-5', ...body });
    expect(claude.status).toBe(200);
    expect(claude.dropped).toBeNull();
    const sent = on.anthropic.lastRequest!.body as {
      messages: Array<{ content: Array<Record<string, unknown>> }>;
      tools: Array<Record<string, unknown>>;
    };
    expect(sent.messages[0]!.content[0]).toMatchObject({ text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } });
    expect(sent.tools[0]).toMatchObject({ name: 'get_weather', cache_control: { type: 'ephemeral', ttl: '1h' } });

    const openai = await post('/v1/chat/completions', { model: 'openai/gpt-4o-mini', ...body });
    expect(openai.status).toBe(200);
    expect(openai.dropped).toBe('messages[0].content[0].cache_control, tools[0].cache_control');
    expect(JSON.stringify(on.openai.lastRequest!.body)).not.toMatch(/cache_control/);
  });

  test('a request without tools names no parallel_tool_calls, wherever it goes', async () => {
    const answer = await post('/v1/chat/completions', {
      model: 'google/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
      parallel_tool_calls: false,
    });
    expect(answer.status).toBe(200);
    expect(answer.dropped).toBeNull();
  });
});

describe('Responses', () => {
  test('served by an OpenAI reasoning model: text.verbosity reaches it, temperature is dropped and named', async () => {
    const { response } = await on.a.openai.responses
      .create({ model: 'openai/o4-mini', input: 'Hi', temperature: 0.5, text: { verbosity: 'low' } })
      .withResponse();
    expect(response.headers.get(DROPPED)).toBe('temperature');
    expect(on.openai.lastRequest!.path).toBe('/v1/responses');
    expect(on.openai.lastRequest!.body.text).toEqual({ verbosity: 'low' });
    expect(on.openai.lastRequest!.body).not.toHaveProperty('temperature');
  });

  test('streamed, served by Claude: temperature reaches it, text.verbosity and the penalties are dropped and named', async () => {
    const answer = await post('/v1/responses', {
      model: 'anthropic/claude-sonnet-4-5',
      input: 'Hi',
      temperature: 0.4,
      frequency_penalty: 0.1,
      text: { verbosity: 'high' },
      stream: true,
    });
    expect(answer.status).toBe(200);
    expect(answer.dropped).toBe('frequency_penalty, text.verbosity');
    expect(JSON.parse(sseFrames(answer.text).at(-1)!.data)).toMatchObject({ type: 'response.completed' });
    expect(on.anthropic.lastRequest!.body.temperature).toBe(0.4);
  });
});

describe('Messages', () => {
  // Sampling fields older Claude models take, which the SDK's types no longer list.
  const sampling: Record<string, number> = { temperature: 0.4, top_k: 5 };

  test('served by Claude: temperature and top_k reach it, and none is named', async () => {
    const { data, response } = await on.a.anthropic.messages
      .create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...sampling })
      .withResponse();
    expect(data.type).toBe('message');
    expect(response.headers.get(DROPPED)).toBeNull();
    expect(on.anthropic.lastRequest!.body).toMatchObject({ temperature: 0.4, top_k: 5 });
  });

  test('served by Claude while it thinks: top_k and temperature are dropped and named', async () => {
    const { response } = await on.a.anthropic.messages
      .create({
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'Hi' }],
        ...sampling,
      })
      .withResponse();
    expect(response.headers.get(DROPPED)).toBe('temperature, top_k');
    expect(on.anthropic.lastRequest!.body).not.toHaveProperty('temperature');
    expect(on.anthropic.lastRequest!.body).not.toHaveProperty('top_k');
  });

  test('streamed, served by Gemini: temperature reaches it; top_k, the parallel-call switch and a beta are named as sent', async () => {
    const answer = await fetch(`${on.h.t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': on.a.secret, 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14' },
      body: JSON.stringify({
        model: 'google/gemini-2.5-flash',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [{ name: 'get_weather', input_schema: weather }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        temperature: 0.2,
        top_k: 3,
      }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get(DROPPED)).toBe(
      'anthropic-beta=fine-grained-tool-streaming-2025-05-14, top_k, tool_choice.disable_parallel_tool_use',
    );
    expect(sseFrames(await answer.text()).at(-1)!.event).toBe('message_stop');
    expect(geminiConfig()).toMatchObject({ temperature: 0.2 });
    expect(geminiConfig()).not.toHaveProperty('topK');
  });
});

test('the sandbox takes no hint: each one sent is named, in every format', async () => {
  const chat = await post('/v1/chat/completions', {
    model: 'sandbox/echo',
    messages: [{ role: 'user', content: 'Hi' }],
    temperature: 0.2,
    seed: 1,
  });
  const responses = await post('/v1/responses', { model: 'sandbox/echo', input: 'Hi', top_p: 0.9, text: { verbosity: 'low' } });
  const messages = await post('/v1/messages', {
    model: 'sandbox/echo',
    max_tokens: 50,
    messages: [{ role: 'user', content: 'Hi' }],
    top_k: 2,
  });
  expect([chat, responses, messages].map((answer) => [answer.status, answer.dropped])).toEqual([
    [200, 'temperature, seed'],
    [200, 'top_p, text.verbosity'],
    [200, 'top_k'],
  ]);
});
