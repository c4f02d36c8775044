import type Anthropic from '@anthropic-ai/sdk';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { call } from '../support/tollgate';
import {
  expectChargedExactly,
  requestId,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * Golden tests of each vendor's usage rules, over real HTTP against the fakes: the vendor's raw
 * usage as it sends it, what Tollgate records, what each client format reports, and the exact
 * charge in micro-dollars, worked out by hand from the published prices: tokens × (USD per
 * million tokens) is micro-dollars.
 *
 * - OpenAI: `prompt_tokens` / `input_tokens` INCLUDE the cached tokens; `completion_tokens` /
 *   `output_tokens` include reasoning.
 * - Anthropic: `input_tokens` EXCLUDES cache reads and cache writes; writes are priced by entry
 *   lifetime (`cache_creation`: 5 minutes at 1.25x input, 1 hour at 2x).
 * - Gemini: `cachedContentTokenCount` is PART of `promptTokenCount`; `thoughtsTokenCount` is not
 *   in `candidatesTokenCount` and is billed as output.
 *
 * Each prompt is long enough that its hold covers the usage reported (so nothing is capped).
 */
jest.setTimeout(60_000);

let openaiFake: FakeVendor<FakeOpenAIReply>;
let anthropicFake: FakeVendor<FakeAnthropicReply>;
let geminiFake: FakeVendor<FakeGeminiReply>;
let h: TextHarness;
let a: TextAccount;

/** 12,000 bytes of prompt: its hold's bound (12,040 tokens) covers the 10,000–12,000 prompt tokens the fakes report. */
const LONG_PROMPT = 'Summarise the ledger, please. '.repeat(400);

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

const usageRecord = async (id: string) =>
  (
    await h.db.query(
      'select input_tokens, cached_input_tokens, cache_write_5m_input_tokens, cache_write_1h_input_tokens, output_tokens, reasoning_tokens, cost_micro::text, overage_micro::text from usage_records where request_id = $1',
      [id],
    )
  ).rows[0];

describe('OpenAI: prompt_tokens includes the cached tokens', () => {
  test('Chat Completions upstream, gpt-4o-mini ($0.15 in, $0.075 cached, $0.60 out)', async () => {
    // Raw: prompt_tokens 10,000 of which cached_tokens 6,000; completion_tokens 500 of which reasoning_tokens 200.
    openaiFake.script({ text: 'The ledger balances.', usage: { input: 10_000, cached: 6_000, output: 500, reasoning: 200 } });
    const id = requestId();
    const answer = await a.openai.chat.completions.create(
      { model: 'openai/gpt-4o-mini', max_tokens: 1_000, messages: [{ role: 'user', content: LONG_PROMPT }] },
      withId(id),
    );
    expect(answer.usage).toMatchObject({
      prompt_tokens: 10_000,
      completion_tokens: 500,
      prompt_tokens_details: { cached_tokens: 6_000 },
      completion_tokens_details: { reasoning_tokens: 200 },
    });
    // Uncached 10,000 − 6,000 = 4,000 × 0.15 = 600; cached 6,000 × 0.075 = 450; output 500 × 0.60 = 300 (reasoning is inside it).
    const expected = 600n + 450n + 300n;
    expect(expected).toBe(1_350n);
    await expectChargedExactly(h, a, id, expected);
    expect(await usageRecord(id)).toMatchObject({
      input_tokens: 10_000,
      cached_input_tokens: 6_000,
      cache_write_5m_input_tokens: 0,
      cache_write_1h_input_tokens: 0,
      output_tokens: 500,
      reasoning_tokens: 200,
      overage_micro: '0',
    });
  });

  test('Responses upstream, o4-mini ($1.10 in, $0.275 cached, $4.40 out)', async () => {
    // Raw: input_tokens 10,000 of which input_tokens_details.cached_tokens 8,000; output_tokens 1,000 of which reasoning 600.
    openaiFake.script({ text: 'Balanced.', usage: { input: 10_000, cached: 8_000, output: 1_000, reasoning: 600 } });
    const id = requestId();
    const answer = await a.openai.responses.create({ model: 'openai/o4-mini', max_output_tokens: 2_000, input: LONG_PROMPT }, withId(id));
    expect(openaiFake.lastRequest!.path).toBe('/v1/responses');
    expect(answer.usage).toMatchObject({
      input_tokens: 10_000,
      input_tokens_details: { cached_tokens: 8_000 },
      output_tokens: 1_000,
      output_tokens_details: { reasoning_tokens: 600 },
    });
    // Uncached 2,000 × 1.10 = 2,200; cached 8,000 × 0.275 = 2,200; output 1,000 × 4.40 = 4,400.
    await expectChargedExactly(h, a, id, 2_200n + 2_200n + 4_400n);
    expect(await usageRecord(id)).toMatchObject({
      input_tokens: 10_000,
      cached_input_tokens: 8_000,
      output_tokens: 1_000,
      reasoning_tokens: 600,
    });
  });
});

describe('Anthropic: input_tokens excludes cache reads and writes; writes priced by lifetime', () => {
  // Raw: input_tokens 1,000 (uncached only), cache_read_input_tokens 8,000, cache_creation_input_tokens
  // 3,000 = 2,000 for 5 minutes + 1,000 for 1 hour, output_tokens 400.
  const reply: FakeAnthropicReply = {
    text: 'Balanced.',
    usage: { input: 1_000, cacheRead: 8_000, cacheCreation: 3_000, cacheCreation1h: 1_000, output: 400 },
  };
  // claude-sonnet-4-5: $3 in, $0.30 cache read, $3.75 5-minute write (1.25x), $6 1-hour write (2x), $15 out.
  // 1,000 × 3 = 3,000; 8,000 × 0.30 = 2,400; 2,000 × 3.75 = 7,500; 1,000 × 6 = 6,000; 400 × 15 = 6,000.
  // (Writes at the plain input price, as before, would have been 20,400.)
  const expected = 3_000n + 2_400n + 7_500n + 6_000n + 6_000n;

  test('Messages, streamed (Anthropic SDK): the cache fields come back as Anthropic reports them', async () => {
    expect(expected).toBe(24_900n);
    anthropicFake.script(reply);
    const id = requestId();
    const stream = a.anthropic.messages.stream(
      { model: 'anthropic/claude-sonnet-4-5', max_tokens: 1_000, messages: [{ role: 'user', content: LONG_PROMPT }] },
      withId(id),
    );
    const final: Anthropic.Message = await stream.finalMessage();
    expect(final.usage).toMatchObject({
      input_tokens: 1_000,
      cache_read_input_tokens: 8_000,
      cache_creation_input_tokens: 3_000,
      output_tokens: 400,
    });
    await expectChargedExactly(h, a, id, expected);
    expect(await usageRecord(id)).toMatchObject({
      input_tokens: 12_000,
      cached_input_tokens: 8_000,
      cache_write_5m_input_tokens: 2_000,
      cache_write_1h_input_tokens: 1_000,
      output_tokens: 400,
    });
  });

  test("Messages, whole: cache_creation by lifetime in the message's usage", async () => {
    anthropicFake.script(reply);
    const id = requestId();
    const message = await a.anthropic.messages.create(
      { model: 'anthropic/claude-sonnet-4-5', max_tokens: 1_000, messages: [{ role: 'user', content: LONG_PROMPT }] },
      withId(id),
    );
    expect(anthropicFake.lastRequest!.body.stream).toBe(false);
    expect(message.usage).toMatchObject({
      input_tokens: 1_000,
      cache_read_input_tokens: 8_000,
      cache_creation_input_tokens: 3_000,
      cache_creation: { ephemeral_5m_input_tokens: 2_000, ephemeral_1h_input_tokens: 1_000 },
      output_tokens: 400,
    });
    await expectChargedExactly(h, a, id, expected);
  });

  test('Chat Completions served by Claude: prompt_tokens is the whole prompt (1,000 + 8,000 + 3,000)', async () => {
    anthropicFake.script(reply);
    const id = requestId();
    const answer = await a.openai.chat.completions.create(
      { model: 'anthropic/claude-sonnet-4-5', max_tokens: 1_000, messages: [{ role: 'user', content: LONG_PROMPT }] },
      withId(id),
    );
    expect(answer.usage).toMatchObject({ prompt_tokens: 12_000, prompt_tokens_details: { cached_tokens: 8_000 }, completion_tokens: 400 });
    await expectChargedExactly(h, a, id, expected);
  });

  test('writes reported without a breakdown are 5-minute ones, the default lifetime', async () => {
    // Raw: cache_creation_input_tokens 4,000 and no cache_creation breakdown (older answers, compatible servers); input 500, output 100.
    anthropicFake.script({ text: 'ok', usage: { input: 500, cacheCreation: 4_000, output: 100 } });
    const id = requestId();
    await a.anthropic.messages.create(
      { model: 'anthropic/claude-haiku-4-5', max_tokens: 500, messages: [{ role: 'user', content: LONG_PROMPT }] },
      withId(id),
    );
    // claude-haiku-4-5: $1 in, $1.25 5-minute write, $5 out: 500 × 1 + 4,000 × 1.25 + 100 × 5 = 500 + 5,000 + 500.
    await expectChargedExactly(h, a, id, 6_000n);
    expect(await usageRecord(id)).toMatchObject({
      input_tokens: 4_500,
      cache_write_5m_input_tokens: 4_000,
      cache_write_1h_input_tokens: 0,
    });
  });
});

describe('Gemini: cachedContentTokenCount is part of promptTokenCount; thoughts are billed as output', () => {
  test('gemini-2.5-flash ($0.30 in, $0.03 cached, $2.50 out), Chat Completions', async () => {
    // Raw: promptTokenCount 10,000 of which cachedContentTokenCount 4,000; candidatesTokenCount 300; thoughtsTokenCount 700 (not in candidates).
    geminiFake.script({ text: 'Balanced.', usage: { prompt: 10_000, cached: 4_000, candidates: 300, thoughts: 700 } });
    const id = requestId();
    const answer = await a.openai.chat.completions.create(
      { model: 'google/gemini-2.5-flash', max_tokens: 2_000, messages: [{ role: 'user', content: LONG_PROMPT }] },
      withId(id),
    );
    expect(answer.usage).toMatchObject({
      prompt_tokens: 10_000,
      prompt_tokens_details: { cached_tokens: 4_000 },
      completion_tokens: 1_000,
      completion_tokens_details: { reasoning_tokens: 700 },
    });
    // Uncached 6,000 × 0.30 = 1,800; cached 4,000 × 0.03 = 120; output 300 + 700 = 1,000 × 2.50 = 2,500.
    await expectChargedExactly(h, a, id, 1_800n + 120n + 2_500n);
    expect(await usageRecord(id)).toMatchObject({
      input_tokens: 10_000,
      cached_input_tokens: 4_000,
      output_tokens: 1_000,
      reasoning_tokens: 700,
    });
  });
});

test('GET /v1/models shows the cache-write prices per token', async () => {
  const models = await call(`${h.t.url}/v1/models`, { token: a.secret });
  const sonnet = models.body.data.find((m: { id: string }) => m.id === 'anthropic/claude-sonnet-4-5');
  expect(sonnet.pricing).toEqual({
    prompt: '0.000003',
    completion: '0.000015',
    input_cache_read: '0.0000003',
    input_cache_write_5m: '0.00000375',
    input_cache_write_1h: '0.000006',
  });
});
