import type Anthropic from '@anthropic-ai/sdk';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import type { FakeVendor } from '../fakes/openai';
import { call } from '../support/tollgate';
import {
  expectedCharge,
  requestId,
  settledMoneyOf,
  sseFrames,
  startTextHarness,
  textAccount,
  textModel,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';
import { textCostParts } from '../../src/domain/billing/pricing';

/**
 * `usage.cost` on every answer: in the body and in the last stream chunk or event of the three
 * text formats, equal to what the request's usage record and ledger row charged, with its parts.
 */
let anthropicFake: FakeVendor<FakeAnthropicReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  anthropicFake = await startFakeAnthropic();
  h = await startTextHarness({ ANTHROPIC_API_KEY: anthropicFake.apiKey!, ANTHROPIC_BASE_URL: anthropicFake.url });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await anthropicFake?.close();
});

interface WireCost {
  cost: number;
  cost_micro: string;
  cost_details: Record<string, number>;
}

/** The cost an answer showed is what was charged: the usage record and the ledger row agree to the micro-dollar. */
async function expectCharged(id: string, shown: WireCost): Promise<void> {
  const money = await settledMoneyOf(h.db, id);
  expect(money.usage).toHaveLength(1);
  expect(shown.cost_micro).toBe(money.usage[0]!.cost_micro);
  expect(money.charges).toEqual(BigInt(shown.cost_micro) > 0n ? [-BigInt(shown.cost_micro)] : []);
  expect(shown.cost).toBe(Number(shown.cost_micro) / 1e6);
  // The parts add up to the cost before its one rounding (to the nearest micro-dollar).
  const parts = Object.values(shown.cost_details).reduce((sum, part) => sum + part, 0);
  expect(Math.abs(parts - shown.cost)).toBeLessThanOrEqual(0.0000005 + 1e-12);
}

const sandboxBody = (content: string) => ({ model: 'sandbox/echo', messages: [{ role: 'user', content }] });

test("Chat Completions: the body's usage, and the usage chunk of a stream, carry the cost", async () => {
  const id = requestId();
  const { data } = await a.openai.chat.completions.create(sandboxBody('what does it cost') as never, withId(id)).withResponse();
  const usage = data.usage as unknown as WireCost;
  expect(Object.keys(usage.cost_details).sort()).toEqual(['cache_write', 'cached_input', 'input', 'output']);
  expect(BigInt(usage.cost_micro)).toBeGreaterThan(0n);
  await expectCharged(id, usage);

  const streamId = requestId();
  const stream = await a.openai.chat.completions.create(
    { ...sandboxBody('and streamed'), stream: true, stream_options: { include_usage: true } } as never,
    withId(streamId),
  );
  const chunks = [];
  for await (const chunk of stream as unknown as AsyncIterable<{ usage?: WireCost | null }>) chunks.push(chunk);
  const last = chunks.at(-1)!;
  expect(last.usage?.cost_micro).toMatch(/^\d+$/);
  await expectCharged(streamId, last.usage!);
});

test("Responses: the response's usage and the response.completed event carry the cost", async () => {
  const id = requestId();
  const response = await a.openai.responses.create({ model: 'sandbox/echo', input: 'price please' }, withId(id));
  await expectCharged(id, response.usage as unknown as WireCost);

  const streamId = requestId();
  const raw = await call(`${h.t.url}/v1/responses`, {
    token: a.secret,
    headers: { 'x-request-id': streamId },
    body: { model: 'sandbox/echo', input: 'streamed price', stream: true },
  });
  const frames = sseFrames(raw.body as unknown as string).filter((f) => f.data !== '[DONE]');
  const completed = JSON.parse(frames.at(-1)!.data);
  expect(completed.type).toBe('response.completed');
  await expectCharged(streamId, completed.response.usage);
});

test("Messages: cache reads and writes priced apart in the body; the stream's message_delta carries the cost", async () => {
  anthropicFake.script({ text: 'Cached hello.', usage: { input: 30, cacheRead: 2000, cacheCreation: 100, output: 12 } });
  const id = requestId();
  const message = await a.anthropic.messages.create(
    { model: 'anthropic/claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] },
    withId(id),
  );
  const usage = message.usage as unknown as WireCost;
  const usageCounts = { inputTokens: 2130, cachedInputTokens: 2000, cacheWrite5mInputTokens: 100, outputTokens: 12 };
  expect(usage.cost_micro).toBe(expectedCharge('anthropic/claude-sonnet-4-5', usageCounts).toString());
  const parts = textCostParts(textModel('anthropic/claude-sonnet-4-5').pricing!, usageCounts);
  expect(usage.cost_details).toEqual({
    input: Number(parts.input) / 1e12,
    cached_input: Number(parts.cachedInput) / 1e12,
    cache_write: Number(parts.cacheWrite) / 1e12,
    output: Number(parts.output) / 1e12,
  });
  expect(usage.cost_details.cached_input).toBeGreaterThan(0);
  expect(usage.cost_details.cache_write).toBeGreaterThan(0);
  await expectCharged(id, usage);

  anthropicFake.script({ text: 'Streamed hello.', usage: { input: 40, output: 7 } });
  const streamId = requestId();
  const stream = a.anthropic.messages.stream(
    { model: 'anthropic/claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] },
    withId(streamId),
  );
  const deltas: Anthropic.MessageDeltaEvent[] = [];
  for await (const event of stream) if (event.type === 'message_delta') deltas.push(event);
  expect(deltas).toHaveLength(1);
  await expectCharged(streamId, deltas[0]!.usage as unknown as WireCost);
});

test('a failed request shows no cost and is charged nothing', async () => {
  const res = await call(`${h.t.url}/v1/chat/completions`, { token: a.secret, body: sandboxBody('[sandbox:fail] no answer') });
  expect(res.status).toBe(502);
  expect(JSON.stringify(res.body)).not.toContain('cost');
});
