import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import {
  eventually,
  expectChargedExactly,
  expectConsistent,
  expectedCharge,
  expectNothingCharged,
  requestId,
  settledMoneyOf,
  sseFrames,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';
import { call, createKey } from '../support/tollgate';

/**
 * Vendor failures, cut streams and dropped clients, over real HTTP with the official SDKs:
 * the right envelope or stream error event per format, nothing charged for what was not
 * delivered, and no hold, reservation or concurrency slot left behind.
 */

let openaiFake: FakeVendor<FakeOpenAIReply>;
let anthropicFake: FakeVendor<FakeAnthropicReply>;
let geminiFake: FakeVendor<FakeGeminiReply>;
let h: TextHarness;
let a: TextAccount;

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  [openaiFake, anthropicFake, geminiFake] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  h = await startTextHarness({
    OPENAI_API_KEY: openaiFake.apiKey!,
    OPENAI_BASE_URL: openaiFake.url,
    ANTHROPIC_API_KEY: anthropicFake.apiKey!,
    ANTHROPIC_BASE_URL: anthropicFake.url,
    GEMINI_API_KEY: geminiFake.apiKey!,
    GEMINI_BASE_URL: geminiFake.url,
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([openaiFake?.close(), anthropicFake?.close(), geminiFake?.close()]);
});
beforeEach(() => {
  openaiFake.script();
  anthropicFake.script();
  geminiFake.script();
});
afterEach(async () => {
  await expectConsistent(h, a);
  expect(await eventually(async () => (await h.t.tollgate.services.admission.slotsInUse(a.accountId)) === 0)).toBe(true);
});

/** A prompt of a known, non-trivial size (its tokens are charged when a stream is cut). */
const PROMPT = 'Tell me a long story about a lighthouse keeper who counts the waves every night. '.repeat(4).trim();
const LONG_TEXT = 'Once upon a time there was a lighthouse keeper who counted every wave that reached the rocks below. '.repeat(3).trim();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('vendor HTTP errors: 502 envelope, nothing charged, hold released', () => {
  test('Chat (OpenAI 500), non-stream and stream', async () => {
    openaiFake.script({ status: 500, errorMessage: 'The server had an error while processing your request.' });
    const id = requestId();
    const error = (await rejection(
      a.openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }, withId(id)),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ code: 'provider_error', details: { vendor: 'openai', vendor_status: 500 } });
    expect((error.error as { message: string }).message).toContain('The server had an error');
    expect(openaiFake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${openaiFake.apiKey}`);
    expect((error.error as { message: string }).message).not.toContain(openaiFake.apiKey!);
    await expectNothingCharged(h, a, id);

    // A stream that fails before its first byte is an ordinary 502 answer, not a stream.
    const streamId = requestId();
    const streamed = (await rejection(
      a.openai.chat.completions.create(
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true },
        withId(streamId),
      ),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(streamed.status).toBe(502);
    await expectNothingCharged(h, a, streamId);
  });

  test('Responses (OpenAI Responses upstream 500 and 429)', async () => {
    openaiFake.script({ status: 500 });
    const id = requestId();
    const error = (await rejection(a.openai.responses.create({ model: 'openai/o4-mini', input: 'Hi' }, withId(id)))) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(502);
    expect(openaiFake.lastRequest!.path).toBe('/v1/responses');
    await expectNothingCharged(h, a, id);

    openaiFake.script({ status: 429, errorMessage: 'Rate limit reached for o4-mini' });
    const limited = requestId();
    const rateLimited = (await rejection(
      a.openai.responses.create({ model: 'openai/o4-mini', input: 'Hi', stream: true }, withId(limited)),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(rateLimited.status).toBe(502);
    expect(rateLimited.error).toMatchObject({ details: { vendor_status: 429 } });
    await expectNothingCharged(h, a, limited);
  });

  test('Messages (Anthropic 529 overloaded, Gemini 500)', async () => {
    anthropicFake.script({ status: 529, errorMessage: 'Overloaded' });
    const id = requestId();
    const error = (await rejection(
      a.anthropic.messages.create(
        { model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] },
        withId(id),
      ),
    )) as InstanceType<typeof Anthropic.APIError>;
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ error: { code: 'provider_error', details: { vendor: 'anthropic', vendor_status: 529 } } });
    await expectNothingCharged(h, a, id);

    geminiFake.script({ status: 500, errorMessage: 'Internal error encountered.' });
    const geminiId = requestId();
    const geminiError = (await rejection(
      a.anthropic.messages.create(
        { model: 'google/gemini-2.5-flash', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], stream: true },
        withId(geminiId),
      ),
    )) as InstanceType<typeof Anthropic.APIError>;
    expect(geminiError.status).toBe(502);
    await expectNothingCharged(h, a, geminiId);
  });

  test('a stream cut before its first event is a 502 answer, nothing charged', async () => {
    anthropicFake.script({ text: LONG_TEXT, cutAfterChunks: 1, usage: { input: 50, output: 100 } });
    const id = requestId();
    const error = (await rejection(
      a.openai.chat.completions.create(
        { model: 'anthropic/claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }], stream: true },
        withId(id),
      ),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    await expectNothingCharged(h, a, id);
  });

  test('sandbox [sandbox:fail] → 502 with no charge, in every format', async () => {
    const chatId = requestId();
    const chat = (await rejection(
      a.openai.chat.completions.create(
        { model: 'sandbox/echo', messages: [{ role: 'user', content: '[sandbox:fail] hi' }], stream: true },
        withId(chatId),
      ),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(chat.status).toBe(502);
    expect(chat.error).toMatchObject({ code: 'provider_error', details: { vendor: 'sandbox', vendor_status: 500 } });
    await expectNothingCharged(h, a, chatId);
    const respId = requestId();
    expect(
      (
        (await rejection(
          a.openai.responses.create({ model: 'sandbox/reasoner', input: '[sandbox:fail]' }, withId(respId)),
        )) as InstanceType<typeof OpenAI.APIError>
      ).status,
    ).toBe(502);
    await expectNothingCharged(h, a, respId);
    const msgId = requestId();
    expect(
      (
        (await rejection(
          a.anthropic.messages.create(
            { model: 'sandbox/echo', max_tokens: 50, messages: [{ role: 'user', content: '[sandbox:fail]' }] },
            withId(msgId),
          ),
        )) as InstanceType<typeof Anthropic.APIError>
      ).status,
    ).toBe(502);
    await expectNothingCharged(h, a, msgId);
  });
});

describe('a non-streamed answer that fails mid-way delivered nothing: 502, nothing charged', () => {
  test('Chat (OpenAI answer cut half-way), Messages (Anthropic overloaded mid-stream), Responses (Gemini without finish)', async () => {
    openaiFake.script({ text: LONG_TEXT, chunkSize: 10, cutAfterChunks: 6, usage: { input: 2000, output: 600 } });
    const chatId = requestId();
    const chat = (await rejection(
      a.openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] }, withId(chatId)),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(chat.status).toBe(502);
    expect(chat.error).toMatchObject({ code: 'provider_error', details: { vendor: 'openai' } });
    await expectNothingCharged(h, a, chatId);

    anthropicFake.script({ text: LONG_TEXT, midStreamError: 'Overloaded', usage: { input: 2000, output: 600 } });
    const msgId = requestId();
    const msg = (await rejection(
      a.anthropic.messages.create(
        { model: 'anthropic/claude-haiku-4-5', max_tokens: 1000, messages: [{ role: 'user', content: PROMPT }] },
        withId(msgId),
      ),
    )) as InstanceType<typeof Anthropic.APIError>;
    expect(msg.status).toBe(502);
    await expectNothingCharged(h, a, msgId);

    geminiFake.script({ text: LONG_TEXT, chunkSize: 20, omitEnd: true, usage: { prompt: 1000, candidates: 300 } });
    const respId = requestId();
    const resp = (await rejection(
      a.openai.responses.create({ model: 'google/gemini-2.5-flash', input: PROMPT }, withId(respId)),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(resp.status).toBe(502);
    await expectNothingCharged(h, a, respId);
  });

  test('a client leaving a non-streamed request mid-generation aborts the vendor call and is not charged', async () => {
    openaiFake.script({ text: LONG_TEXT, chunkSize: 5, chunkDelayMs: 30, usage: { input: 2000, output: 600 } });
    const id = requestId();
    const controller = new AbortController();
    const before = openaiFake.requests.length;
    const pending = a.openai.chat.completions.create(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] },
      { ...withId(id), signal: controller.signal },
    );
    expect(await eventually(() => openaiFake.requests.length > before)).toBe(true);
    const upstream = openaiFake.lastRequest!;
    // The vendor is generating (it answers the whole text after 30 ms a chunk): leave now.
    controller.abort();
    expect(await rejection(pending)).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(await eventually(() => upstream.aborted)).toBe(true);
    await expectNothingCharged(h, a, id);
  });
});

describe('a vendor that cannot be reached', () => {
  let down: TextHarness;
  let account: TextAccount;
  beforeAll(async () => {
    const port = await closedPort();
    down = await startTextHarness({
      OPENAI_API_KEY: 'sk-unused',
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      ANTHROPIC_API_KEY: 'sk-ant-unused',
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    });
    account = await textAccount(down.t);
  });
  afterAll(async () => down?.stop());

  test('connection refused → 502 naming the vendor, hold released, for Chat, Responses and Messages', async () => {
    for (const run of [
      (id: string) =>
        account.openai.chat.completions.create(
          { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true },
          withId(id),
        ),
      (id: string) => account.openai.responses.create({ model: 'openai/o4-mini', input: 'Hi' }, withId(id)),
      (id: string) =>
        account.anthropic.messages.create(
          { model: 'anthropic/claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
          withId(id),
        ),
    ]) {
      const id = requestId();
      const error = (await rejection(run(id))) as { status: number; error: unknown };
      expect(error.status).toBe(502);
      expect(JSON.stringify(error.error)).toMatch(/Could not connect to (openai|anthropic) \(ECONNREFUSED\)/);
      await expectNothingCharged(down, account, id);
    }
    expect(await down.t.tollgate.services.admission.slotsInUse(account.accountId)).toBe(0);
  });
});

describe('vendor timeouts (TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS, TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS)', () => {
  let slow: FakeVendor<FakeOpenAIReply>;
  let th: TextHarness;
  let account: TextAccount;
  beforeAll(async () => {
    slow = await startFakeOpenAI();
    th = await startTextHarness({
      OPENAI_API_KEY: slow.apiKey!,
      OPENAI_BASE_URL: slow.url,
      TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS: '300',
      TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS: '300',
    });
    account = await textAccount(th.t);
  });
  afterAll(async () => {
    await th?.stop();
    await slow?.close();
  });

  test('no headers in time → 502, the vendor call abandoned, nothing charged', async () => {
    slow.script({ text: 'Too slow.', headersDelayMs: 1500 });
    const id = requestId();
    const error = (await rejection(
      account.openai.chat.completions.create(
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true },
        withId(id),
      ),
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect((error.error as { message: string }).message).toMatch(/did not answer within/);
    const upstream = slow.lastRequest!;
    expect(await eventually(() => upstream.aborted)).toBe(true);
    await expectNothingCharged(th, account, id);
  });

  test('a silent vendor body → 502 before the first byte, nothing charged', async () => {
    slow.script({ text: 'Dribbling answer.', chunkDelayMs: 1500 });
    const id = requestId();
    const error = (await rejection(
      account.anthropic.messages.create(
        { model: 'openai/gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] },
        withId(id),
      ),
    )) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(502);
    await expectNothingCharged(th, account, id);
  });
});

describe('streams cut mid-way: the format’s error event, only what was delivered is charged', () => {
  /** What a cut stream is charged: the prompt as counted, and the output the client received. */
  const partialCharge = (model: string, delivered: string) =>
    expectedCharge(model, { inputTokens: countTokens(PROMPT), cachedInputTokens: 0, outputTokens: countTokens(delivered) });

  test('Chat (Chat upstream cut): a final data: {"error":…} chunk and no [DONE]', async () => {
    const fullUsage = { input: 2000, output: 600 };
    openaiFake.script({ text: LONG_TEXT, chunkSize: 10, cutAfterChunks: 6, usage: fullUsage });
    const id = requestId();
    const stream = await a.openai.chat.completions.create(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } },
      withId(id),
    );
    let delivered = '';
    const error = await (async () => {
      try {
        for await (const chunk of stream) delivered += chunk.choices[0]?.delta.content ?? '';
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'provider_error', details: { vendor: 'openai' } });
    expect(delivered).toBe(LONG_TEXT.slice(0, 50)); // 5 text chunks of 10 characters after the role chunk

    const money = await settledMoneyOf(h.db, id);
    const expected = partialCharge('openai/gpt-4o-mini', delivered);
    expect(money.usage).toHaveLength(1);
    expect(money.usage[0]).toMatchObject({ status: 'partial', input_tokens: countTokens(PROMPT), output_tokens: countTokens(delivered) });
    expect(money.charges).toEqual([-expected]);
    expect(expected).toBeGreaterThan(0n);
    expect(expected).toBeLessThan(
      expectedCharge('openai/gpt-4o-mini', { inputTokens: fullUsage.input, cachedInputTokens: 0, outputTokens: fullUsage.output }),
    );

    // On the wire: text chunks, then exactly one error chunk, and no [DONE].
    openaiFake.script({ text: LONG_TEXT, chunkSize: 10, cutAfterChunks: 3, usage: fullUsage });
    const raw = await fetch(`${h.t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], stream: true }),
    });
    expect(raw.status).toBe(200);
    const frames = sseFrames(await raw.text());
    expect(frames.every((f) => f.event === null)).toBe(true);
    expect(frames.some((f) => f.data === '[DONE]')).toBe(false);
    const last = JSON.parse(frames.at(-1)!.data);
    expect(last).toEqual({ error: { code: 'provider_error', message: expect.any(String), details: { vendor: 'openai' } } });
    expect(frames.slice(0, -1).every((f) => JSON.parse(f.data).object === 'chat.completion.chunk')).toBe(true);
  });

  /** A streamed Responses answer's events as sent (the openai SDK throws at the error event instead of yielding it). */
  async function responsesEvents(body: Record<string, unknown>, id: string): Promise<OpenAI.Responses.ResponseStreamEvent[]> {
    const raw = await fetch(`${h.t.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify(body),
    });
    expect(raw.status).toBe(200);
    return sseFrames(await raw.text()).map((frame) => JSON.parse(frame.data) as OpenAI.Responses.ResponseStreamEvent);
  }

  test('Responses through the openai SDK: the stream error reaches the caller as an APIError with its code, after what was delivered', async () => {
    openaiFake.script({ text: LONG_TEXT, chunkSize: 10, cutAfterChunks: 8, usage: { input: 3000, output: 900 } });
    const stream = await a.openai.responses.create({ model: 'openai/o4-mini', input: PROMPT, stream: true });
    let text = '';
    const failure = await (async () => {
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure).toMatchObject({ code: 'provider_error', type: 'server_error' });
    expect(text.length).toBeGreaterThan(0);
    expect(LONG_TEXT.startsWith(text)).toBe(true);
  });

  test('Responses (Responses upstream cut): an error event, then response.failed with what was delivered', async () => {
    openaiFake.script({
      reasoning: 'Some reasoning first.',
      text: LONG_TEXT,
      chunkSize: 10,
      cutAfterChunks: 12,
      usage: { input: 3000, output: 900, reasoning: 300 },
    });
    const id = requestId();
    const events = await responsesEvents({ model: 'openai/o4-mini', input: PROMPT, stream: true }, id);
    const types = events.map((e) => e.type);
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect(types).not.toContain('response.completed');
    const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent;
    expect(failed.response.status).toBe('failed');
    expect(failed.response.error).toMatchObject({ code: 'provider_error' });
    const errorEvent = events.at(-2) as OpenAI.Responses.ResponseErrorEvent & { error: { type: string; code: string } };
    expect(errorEvent.code).toBe('provider_error');
    // Open Responses' place for it, which the openai SDK reads first.
    expect(errorEvent.error).toMatchObject({ type: 'server_error', code: 'provider_error' });
    const reasoning = events.flatMap((e) => (e.type === 'response.reasoning_summary_text.delta' ? [e.delta] : [])).join('');
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(reasoning).toBe('Some reasoning first.');
    expect(text.length).toBeGreaterThan(0);
    expect(LONG_TEXT.startsWith(text)).toBe(true);
    expect(failed.response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);

    const money = await settledMoneyOf(h.db, id);
    const expected = expectedCharge('openai/o4-mini', {
      inputTokens: countTokens(PROMPT),
      cachedInputTokens: 0,
      outputTokens: countTokens(text) + countTokens(reasoning),
    });
    expect(money.usage[0]).toMatchObject({ status: 'partial', reasoning_tokens: countTokens(reasoning) });
    expect(money.charges).toEqual([-expected]);
    expect(expected).toBeLessThan(expectedCharge('openai/o4-mini', { inputTokens: 3000, cachedInputTokens: 0, outputTokens: 900 }));
  });

  test('Responses with an MCP call before the cut: the call is delivered output too', async () => {
    const call = {
      id: 'mcp_c1',
      type: 'mcp_call',
      server_label: 'docs',
      name: 'search',
      arguments: '{"q":"limits"}',
      output: 'Limits are per key.',
      error: null,
      approval_request_id: null,
      status: 'completed',
    };
    // The call's item takes 7 events (see the fake); the cut falls inside the text after it.
    openaiFake.script({ mcpItems: [call], text: LONG_TEXT, chunkSize: 10, cutAfterChunks: 15, usage: { input: 3000, output: 900 } });
    const id = requestId();
    const events = await responsesEvents(
      {
        model: 'openai/gpt-4o-mini',
        input: PROMPT,
        stream: true,
        tools: [{ type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse', require_approval: 'never' }],
      },
      id,
    );
    expect(events.at(-1)!.type).toBe('response.failed');
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text.length).toBeGreaterThan(0);
    expect((events.at(-1) as OpenAI.Responses.ResponseFailedEvent).response.output.map((item) => item.type)).toEqual([
      'mcp_call',
      'message',
    ]);

    const money = await settledMoneyOf(h.db, id);
    const outputTokens = countTokens(text) + countTokens(call.name + call.arguments);
    expect(money.usage[0]).toMatchObject({ status: 'partial', output_tokens: outputTokens });
    // The prompt as counted includes the tool's declaration here: take the recorded count.
    const inputTokens = Number(money.usage[0]!.input_tokens);
    expect(inputTokens).toBeGreaterThan(countTokens(PROMPT));
    expect(money.charges).toEqual([-expectedCharge('openai/gpt-4o-mini', { inputTokens, cachedInputTokens: 0, outputTokens })]);
  });

  test('Messages (Anthropic cut and Anthropic mid-stream error): event: error, partial charge', async () => {
    anthropicFake.script({ text: LONG_TEXT, chunkSize: 10, cutAfterChunks: 7, usage: { input: 4000, output: 800 } });
    const id = requestId();
    const stream = await a.anthropic.messages.create(
      { model: 'anthropic/claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: PROMPT }], stream: true },
      withId(id),
    );
    let delivered = '';
    const error = await (async () => {
      try {
        for await (const event of stream)
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') delivered += event.delta.text;
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(delivered.length).toBeGreaterThan(0);
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage[0]).toMatchObject({ status: 'partial', output_tokens: countTokens(delivered) });
    expect(money.charges).toEqual([-partialCharge('anthropic/claude-sonnet-4-5', delivered)]);

    // Anthropic's own mid-stream error event (overloaded) ends the answer the same way.
    anthropicFake.script({ text: 'Partial answer before overload.', midStreamError: 'Overloaded', usage: { input: 4000, output: 800 } });
    const overloaded = requestId();
    const raw = await fetch(`${h.t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.secret, 'content-type': 'application/json', 'x-request-id': overloaded },
      body: JSON.stringify({
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 1000,
        messages: [{ role: 'user', content: PROMPT }],
        stream: true,
      }),
    });
    const frames = sseFrames(await raw.text());
    expect(frames.every((f) => f.event !== null)).toBe(true);
    expect(frames.at(-1)!.event).toBe('error');
    // As the non-streamed error body does, it names the request (x-request-id).
    expect(JSON.parse(frames.at(-1)!.data)).toEqual({
      type: 'error',
      error: {
        type: 'api_error',
        message: expect.stringContaining('Overloaded'),
        code: 'provider_error',
        details: { vendor: 'anthropic' },
      },
      request_id: overloaded,
    });
    expect(frames.map((f) => f.event)).not.toContain('message_stop');
    const overloadedMoney = await settledMoneyOf(h.db, overloaded);
    expect(overloadedMoney.usage[0]).toMatchObject({ status: 'partial', output_tokens: countTokens('Partial answer before overload.') });
    expect(overloadedMoney.charges).toEqual([-partialCharge('anthropic/claude-sonnet-4-5', 'Partial answer before overload.')]);
  });

  test('Gemini stream without its finish chunk, and [sandbox:cut]', async () => {
    geminiFake.script({ text: LONG_TEXT, chunkSize: 20, omitEnd: true, usage: { prompt: 1000, candidates: 300 } });
    const id = requestId();
    const stream = await a.openai.chat.completions.create(
      { model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: PROMPT }], stream: true },
      withId(id),
    );
    let delivered = '';
    const error = await (async () => {
      try {
        for await (const chunk of stream) delivered += chunk.choices[0]?.delta.content ?? '';
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(delivered).toBe(LONG_TEXT);
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage[0]).toMatchObject({ status: 'partial' });
    expect(money.charges).toEqual([-partialCharge('google/gemini-2.5-flash', delivered)]);

    const cutId = requestId();
    const cut = a.anthropic.messages.stream(
      { model: 'sandbox/echo', max_tokens: 100, messages: [{ role: 'user', content: `[sandbox:cut] ${PROMPT}` }] },
      withId(cutId),
    );
    const cutError = await rejection(cut.finalMessage());
    expect(cutError).toBeInstanceOf(Anthropic.APIError);
    const cutMoney = await settledMoneyOf(h.db, cutId);
    expect(cutMoney.usage[0]).toMatchObject({ status: 'partial' });
    expect(cutMoney.charges).toHaveLength(1);
    expect(cutMoney.charges[0]).toBeLessThan(0n);
  });
});

describe('client disconnects: the upstream call is aborted, the hold closed, the slot freed', () => {
  test('Chat stream aborted by the SDK mid-way (OpenAI)', async () => {
    openaiFake.script({ text: LONG_TEXT, chunkSize: 5, chunkDelayMs: 40, usage: { input: 2000, output: 600 } });
    const id = requestId();
    const controller = new AbortController();
    const stream = await a.openai.chat.completions.create(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }], stream: true },
      { ...withId(id), signal: controller.signal },
    );
    let delivered = '';
    try {
      for await (const chunk of stream) {
        delivered += chunk.choices[0]?.delta.content ?? '';
        if (delivered.length >= 10) controller.abort();
      }
    } catch (error) {
      expect(error).toBeInstanceOf(OpenAI.APIUserAbortError);
    }
    expect(delivered.length).toBeLessThan(LONG_TEXT.length);
    const upstream = openaiFake.lastRequest!;
    expect(await eventually(() => upstream.aborted)).toBe(true);
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage).toHaveLength(1);
    expect(money.usage[0]).toMatchObject({ status: 'partial' });
    // At least what the client read, never the full answer.
    expect(money.usage[0]!.output_tokens).toBeGreaterThanOrEqual(countTokens(delivered));
    expect(money.usage[0]!.output_tokens).toBeLessThan(countTokens(LONG_TEXT));
    expect(money.charges).toHaveLength(1);
    expect(-money.charges[0]!).toBeLessThan(
      expectedCharge('openai/gpt-4o-mini', { inputTokens: 2000, cachedInputTokens: 0, outputTokens: 600 }),
    );
    expect(await eventually(async () => (await h.t.tollgate.services.admission.slotsInUse(a.accountId)) === 0)).toBe(true);
  });

  test('Messages stream aborted mid-way (Anthropic), and a Responses request abandoned before the first byte (Gemini)', async () => {
    anthropicFake.script({ text: LONG_TEXT, chunkSize: 5, chunkDelayMs: 40, usage: { input: 2000, output: 600 } });
    const id = requestId();
    const stream = a.anthropic.messages.stream(
      { model: 'anthropic/claude-haiku-4-5', max_tokens: 1000, messages: [{ role: 'user', content: PROMPT }] },
      withId(id),
    );
    let delivered = '';
    stream.on('text', (delta) => {
      delivered += delta;
      if (delivered.length >= 10) stream.abort();
    });
    const error = await rejection(stream.finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIUserAbortError);
    const upstream = anthropicFake.lastRequest!;
    expect(await eventually(() => upstream.aborted)).toBe(true);
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage).toHaveLength(1);
    expect(money.usage[0]).toMatchObject({ status: 'partial' });
    expect(money.usage[0]!.output_tokens).toBeGreaterThanOrEqual(countTokens(delivered));
    expect(money.usage[0]!.output_tokens).toBeLessThan(countTokens(LONG_TEXT));

    // Gone while Tollgate still waits for the vendor's headers: nothing was delivered, nothing charged.
    geminiFake.script({ text: 'Too late.', headersDelayMs: 1500 });
    const early = requestId();
    const controller = new AbortController();
    const before = geminiFake.requests.length;
    const pending = a.openai.responses.create(
      { model: 'google/gemini-2.5-flash', input: 'Hi', stream: true },
      { ...withId(early), signal: controller.signal },
    );
    expect(await eventually(() => geminiFake.requests.length > before)).toBe(true);
    const geminiUpstream = geminiFake.lastRequest!;
    controller.abort();
    expect(await rejection(pending)).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(await eventually(() => geminiUpstream.aborted)).toBe(true);
    await expectNothingCharged(h, a, early);
  });

  test('a client gone before its request reached the pipeline is neither served nor charged, and frees its slot', async () => {
    // Its own account: a slot leaked here must not show up in the other tests' checks.
    const b = await textAccount(h.t);
    // Raw sockets: the request is written whole, then the connection is destroyed at once, so
    // it closes while authentication (a fresh key: a database lookup) and admission still run.
    const port = Number(new URL(h.t.url).port);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const key = await createKey(h.t.url, b.sessionToken);
      const id = requestId();
      ids.push(id);
      const body = JSON.stringify({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: `[sandbox:delay=200] ${LONG_TEXT}` }],
        stream: true,
      });
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${id}\r\n\r\n`;
      socket.write(head + body, () => socket.destroy());
      await once(socket, 'close');
    }
    // Depending on timing it is stopped at admission (no hold at all) or in the pipeline (its
    // hold released, a failed usage record). Either way nothing is served or charged. The
    // server has processed it once a request sent after it on the same account has finished
    // and the slow sandbox answer (200 ms per word) would have had time to start.
    const after = await createKey(h.t.url, b.sessionToken);
    expect((await call(`${h.t.url}/v1/models`, { token: after.secret })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    for (const id of ids) {
      const money = await settledMoneyOf(h.db, id, 0);
      expect(money.charges).toEqual([]);
      expect(money.usage.map((u) => [u.status, u.cost_micro]).every(([status, cost]) => status === 'failed' && cost === '0')).toBe(true);
    }
    await expectConsistent(h, b);
    // The concurrency slot taken by admission must be freed too (spec 8: concurrent-request limit).
    expect(await eventually(async () => (await h.t.tollgate.services.admission.slotsInUse(b.accountId)) === 0, 1_000)).toBe(true);
  });

  test('a sandbox stream dropped by the client settles what was delivered and frees the slot', async () => {
    const id = requestId();
    const controller = new AbortController();
    const stream = await a.openai.chat.completions.create(
      { model: 'sandbox/echo', messages: [{ role: 'user', content: `[sandbox:delay=30] ${LONG_TEXT}` }], stream: true },
      { ...withId(id), signal: controller.signal },
    );
    let deltas = 0;
    try {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content && ++deltas === 3) controller.abort();
    } catch (error) {
      expect(error).toBeInstanceOf(OpenAI.APIUserAbortError);
    }
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage).toHaveLength(1);
    expect(money.usage[0]).toMatchObject({ status: 'partial' });
    expect(money.usage[0]!.output_tokens).toBeLessThan(countTokens(LONG_TEXT));
  });
});

test('after all faults the successful path still charges exactly (no leaked state)', async () => {
  openaiFake.script({ text: 'Still fine.', usage: { input: 10, output: 3 } });
  const id = requestId();
  await a.openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }, withId(id));
  await expectChargedExactly(h, a, id, expectedCharge('openai/gpt-4o-mini', { inputTokens: 10, cachedInputTokens: 0, outputTokens: 3 }));
});
