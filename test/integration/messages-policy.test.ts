import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import {
  accountMoney,
  anthropicClient,
  requestId,
  sseFrames,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * The Messages field policy over real HTTP (docs/api.md, "Field policy: Messages"): what goes to
 * Anthropic, what Tollgate does for other vendors (context edits, hints), the prompt's usage in
 * message_start, Anthropic-shaped errors, and count_tokens.
 */

let anthropicFake: FakeVendor<FakeAnthropicReply>;
let openaiFake: FakeVendor<FakeOpenAIReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  [anthropicFake, openaiFake] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
  h = await startTextHarness({
    ANTHROPIC_API_KEY: anthropicFake.apiKey!,
    ANTHROPIC_BASE_URL: anthropicFake.url,
    OPENAI_API_KEY: openaiFake.apiKey!,
    OPENAI_BASE_URL: openaiFake.url,
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([anthropicFake?.close(), openaiFake?.close()]);
});
beforeEach(() => {
  anthropicFake.script();
  openaiFake.script();
});

const user = (content: string) => ({ role: 'user' as const, content });
const weather = {
  name: 'get_weather',
  description: 'Weather',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};

/** A raw POST with the key as x-api-key, as the Anthropic SDK sends it. */
async function post(path: string, body: unknown, headers: Record<string, string> = {}, key = a.secret) {
  const response = await fetch(`${h.t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}
const json = (answer: { text: string }) => JSON.parse(answer.text);

describe('passed to Anthropic', () => {
  test('context_management, top_k, service_tier, tool fields and the anthropic-beta and anthropic-version headers arrive as sent', async () => {
    const contextManagement = {
      edits: [
        { type: 'clear_thinking_20251015', keep: 'all' },
        { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 30000 } },
      ],
    };
    const answer = await post(
      '/v1/messages?beta=true',
      {
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 512,
        messages: [user('Hi')],
        tools: [{ ...weather, eager_input_streaming: true, defer_loading: true, cache_control: { type: 'ephemeral' } }],
        context_management: contextManagement,
        top_k: 5,
        service_tier: 'standard_only',
      },
      { 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14, interleaved-thinking-2025-05-14', 'anthropic-version': '2023-06-01' },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-service-dropped-hints')).toBeNull();
    const sent = anthropicFake.lastRequest!;
    expect(sent.body).toMatchObject({ context_management: contextManagement, top_k: 5, service_tier: 'standard_only' });
    expect(sent.body.tools).toEqual([
      { ...weather, eager_input_streaming: true, defer_loading: true, cache_control: { type: 'ephemeral' } },
    ]);
    // The client's betas, and the one context_management needs.
    expect(String(sent.headers['anthropic-beta']).split(',')).toEqual([
      'fine-grained-tool-streaming-2025-05-14',
      'interleaved-thinking-2025-05-14',
      'context-management-2025-06-27',
    ]);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
  });
});

describe("Anthropic's report of the context edits it applied reaches the client", () => {
  const appliedEdits = [
    { type: 'clear_tool_uses_20250919', cleared_tool_uses: 8, cleared_input_tokens: 50_000 },
    { type: 'clear_thinking_20251015', cleared_thinking_turns: 3, cleared_input_tokens: 15_000 },
  ];
  const contextManagement = {
    edits: [
      { type: 'clear_thinking_20251015' as const, keep: { type: 'thinking_turns' as const, value: 1 } },
      { type: 'clear_tool_uses_20250919' as const },
    ],
  };
  const body = (model: string, stream: boolean) => ({
    model,
    max_tokens: 200,
    stream,
    messages: [user('Hi')],
    context_management: contextManagement,
  });

  test('whole: the message carries context_management.applied_edits as Anthropic sent it', async () => {
    anthropicFake.script({ text: 'Done.', appliedEdits });
    const answer = await post('/v1/messages', body('anthropic/claude-sonnet-4-5', false));
    expect(answer.status).toBe(200);
    expect(json(answer).context_management).toEqual({ applied_edits: appliedEdits });
  });

  test("streamed: message_delta carries it, and the SDK's beta message stream shows it", async () => {
    anthropicFake.script({ text: 'Done.', appliedEdits });
    const raw = await post('/v1/messages', body('anthropic/claude-sonnet-4-5', true));
    const delta = sseFrames(raw.text).find((frame) => frame.event === 'message_delta')!;
    expect(JSON.parse(delta.data).context_management).toEqual({ applied_edits: appliedEdits });
    const { stream: _stream, ...params } = body('anthropic/claude-sonnet-4-5', true);
    const message = await a.anthropic.beta.messages.stream({ ...params, betas: ['context-management-2025-06-27'] }).finalMessage();
    expect(message.context_management).toEqual({ applied_edits: appliedEdits });
  });

  test('without a report, or served by another vendor, the answer has no context_management', async () => {
    anthropicFake.script({ text: 'Done.' });
    expect(json(await post('/v1/messages', body('anthropic/claude-sonnet-4-5', false)))).not.toHaveProperty('context_management');
    expect(json(await post('/v1/messages', body('sandbox/echo', false)))).not.toHaveProperty('context_management');
  });
});

describe('another vendor: context edits applied where exact, hints dropped and named', () => {
  test('hints are dropped and named in x-service-dropped-hints; deferred tools stay out until called', async () => {
    const answer = await post(
      '/v1/messages',
      {
        model: 'openai/gpt-4o-mini',
        max_tokens: 100,
        messages: [user('Hi')],
        tools: [
          { ...weather, eager_input_streaming: true },
          { name: 'later', input_schema: { type: 'object' }, defer_loading: true },
        ],
        top_k: 3,
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      },
      { 'anthropic-beta': 'context-management-2025-06-27' },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-service-dropped-hints')).toBe(
      'anthropic-beta=context-management-2025-06-27, top_k, tools[0].eager_input_streaming',
    );
    const sent = openaiFake.lastRequest!.body;
    expect(sent.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['get_weather']);
    expect(sent).not.toHaveProperty('top_k');
  });

  test('clear_tool_uses that would clear something is refused naming the edit; one that provably clears nothing is served', async () => {
    const loop = [
      user('Weather?'),
      ...['a', 'b', 'c', 'd'].flatMap((id) => [
        { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id, name: 'get_weather', input: { city: id } }] },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: id, content: 'Sunny' }] },
      ]),
    ];
    const body = (edit: Record<string, unknown>) => ({
      model: 'sandbox/echo',
      max_tokens: 100,
      tools: [weather],
      messages: loop,
      context_management: { edits: [{ type: 'clear_tool_uses_20250919', ...edit }] },
    });
    // Four uses, three kept by default: one to clear once 2 uses trigger it.
    const refused = await post('/v1/messages', body({ trigger: { type: 'tool_uses', value: 2 } }));
    expect(refused.status).toBe(400);
    expect(json(refused)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', code: 'bad_request', details: { field: 'context_management.edits[0]' } },
    });
    expect(json(refused).error.message).toContain('context_management.edits[0]');
    // Keep 4: nothing to clear. Default trigger (100,000 input tokens): this prompt cannot reach it.
    expect(
      (await post('/v1/messages', body({ trigger: { type: 'tool_uses', value: 2 }, keep: { type: 'tool_uses', value: 4 } }))).status,
    ).toBe(200);
    expect((await post('/v1/messages', body({}))).status).toBe(200);
  });
});

describe("message_start carries the prompt's input tokens", () => {
  test("Anthropic's own figure from its message_start, in Anthropic's split", async () => {
    anthropicFake.script({ text: 'Hello.', usage: { input: 30, cacheRead: 2000, cacheCreation: 100, output: 4 } });
    const stream = a.anthropic.messages.stream({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [user('Hi')] });
    let start: Anthropic.Usage | null = null;
    stream.on('streamEvent', (event) => {
      // A copy: the SDK updates the snapshot's usage in place as the stream goes.
      if (event.type === 'message_start') start = { ...event.message.usage };
    });
    const message = await stream.finalMessage();
    expect(start).toMatchObject({ input_tokens: 30, cache_read_input_tokens: 2000, cache_creation_input_tokens: 100, output_tokens: 0 });
    expect(message.usage).toMatchObject({
      input_tokens: 30,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 100,
      output_tokens: 4,
    });
  });

  test("a vendor that reports usage only at the end: Tollgate's count of the prompt, then the vendor's exact usage", async () => {
    openaiFake.script({ text: 'Hello.', usage: { input: 41, output: 3 } });
    const answer = await post('/v1/messages', {
      model: 'openai/gpt-4o-mini',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [user('Count this prompt')],
      stream: true,
    });
    const events = sseFrames(answer.text).map((frame) => JSON.parse(frame.data));
    expect(events[0].message.usage.input_tokens).toBe(countTokens('Be brief.') + countTokens('Count this prompt'));
    expect(events.find((e) => e.type === 'message_delta').usage).toMatchObject({ input_tokens: 41, output_tokens: 3 });
  });
});

describe("errors in Anthropic's shape, Tollgate's code and details inside", () => {
  test('the Anthropic SDK raises its class with error.type and a readable message', async () => {
    const error = (await a.anthropic.messages
      .create({ model: 'no-such-model', max_tokens: 5, messages: [user('x')] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'model_not_available' } });
    expect(error.message).toMatch(/^404 .*no-such-model/);
    expect(error.requestID ?? (error.error as { request_id?: string }).request_id).toBeTruthy();
  });

  test.each([
    [
      'a wrong key',
      { model: 'sandbox/echo', max_tokens: 5, messages: [user('x')] },
      'tgk_wrong',
      401,
      'authentication_error',
      'invalid_token',
    ],
    [
      'a bad field',
      { model: 'sandbox/echo', max_tokens: 5, messages: [user('x')], inference_geo: 'us' },
      null,
      400,
      'invalid_request_error',
      'bad_request',
    ],
  ])('%s', async (_name, body, key, status, type, code) => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const { max_tokens: _limit, ...countBody } = body;
      const answer = await post(path, path.endsWith('count_tokens') ? countBody : body, {}, key ?? a.secret);
      expect(answer.status).toBe(status);
      expect(json(answer)).toMatchObject({
        type: 'error',
        error: { type, code, message: expect.any(String), details: expect.any(Object) },
      });
    }
  });

  test('a balance that cannot cover the request is billing_error (402)', async () => {
    const poor = await textAccount(h.t, { fundsMicro: '1' });
    const error = (await anthropicClient(h.t.url, poor.secret)
      .messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 1000, messages: [user('x')] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(402);
    expect(error.error).toMatchObject({ error: { type: 'billing_error' } });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  test("Anthropic's own count, its prompt fields and headers forwarded; free; rate-limit headers; x-api-key", async () => {
    anthropicFake.script({ countTokens: 1234 });
    const before = await accountMoney(h.db, a.accountId);
    const id = requestId();
    const { data, response } = await a.anthropic.messages
      .countTokens(
        {
          model: 'claude-sonnet-4-5@20250929',
          system: 'Be brief.',
          messages: [user('How many?')],
          tools: [weather],
          thinking: { type: 'enabled', budget_tokens: 2048 },
        },
        withId(id),
      )
      .withResponse();
    expect(data).toEqual({ input_tokens: 1234 });
    expect(response.headers.get('x-service-model-routed-from')).toBe('claude-sonnet-4-5@20250929');
    expect(response.headers.get('x-ratelimit-remaining-requests')).not.toBeNull();
    const sent = anthropicFake.lastRequest!;
    expect(sent.path).toBe('/v1/messages/count_tokens');
    expect(sent.body).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      system: 'Be brief.',
      tools: [weather],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(sent.body).not.toHaveProperty('max_tokens');
    const after = await accountMoney(h.db, a.accountId);
    expect(after.balance).toBe(before.balance);
    const { rows } = await h.db.query('select count(*)::int as n from usage_records where request_id = $1', [id]);
    expect(rows[0].n).toBe(0);
  });

  test("the sandbox's own count equals the input tokens its answer reports; other vendors get Tollgate's tokenizer", async () => {
    const prompt = { messages: [user('Count me please')], system: 'You count.' };
    const counted = await a.anthropic.messages.countTokens({ model: 'sandbox/echo', ...prompt });
    const answered = await a.anthropic.messages.create({ model: 'sandbox/echo', max_tokens: 50, ...prompt });
    expect(counted.input_tokens).toBe(answered.usage.input_tokens);
    const byTokenizer = await a.anthropic.messages.countTokens({ model: 'openai/gpt-4o-mini', ...prompt });
    expect(byTokenizer.input_tokens).toBe(countTokens('You count.') + countTokens('Count me please'));
  });

  test('max_tokens is not a count_tokens field: 400 naming it', async () => {
    const answer = await post('/v1/messages/count_tokens', { model: 'sandbox/echo', max_tokens: 5, messages: [user('x')] });
    expect(answer.status).toBe(400);
    expect(json(answer).error.message).toContain('max_tokens');
  });
});

describe("thinking display 'omitted'", () => {
  test('thinking blocks keep their signature and lose their text, streamed or whole', async () => {
    const body = {
      model: 'sandbox/reasoner',
      max_tokens: 2000,
      thinking: { type: 'adaptive', display: 'omitted' },
      messages: [user('[sandbox:reason=20] Think')],
    };
    const whole = await a.anthropic.messages.create(body as Anthropic.MessageCreateParamsNonStreaming);
    expect(whole.content[0]).toMatchObject({ type: 'thinking', thinking: '', signature: expect.stringMatching(/^sandbox-signature-/) });
    const streamed = await a.anthropic.messages.stream(body as Anthropic.MessageStreamParams).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'thinking', thinking: '', signature: expect.stringMatching(/^sandbox-signature-/) });
  });
});
