import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { catalogTextModel, startRoutingHarness, type RoutingHarness } from '../support/routing';
import {
  eventually,
  expectChargedExactly,
  expectNothingCharged,
  requestId,
  settledMoneyOf,
  textAccount,
  type TextAccount,
} from '../support/text';

/**
 * The operator-defined fallback model over real HTTP: a model routed over two OpenAI fakes
 * falls back to a Claude model (another fake, another price) once both deployments are cooled,
 * or when both fail during the request and the hold covers the fallback.
 */

const PRIMARY_PRICING = { input: '1.00', output: '2.00' };
const FALLBACK_PRICING = { input: '3.00', output: '9.00' };
const CHEAP_PRICING = { input: '0.50', output: '1.00' };
const FALLBACK = 'acme/claude-fallback';
const CHEAP_FALLBACK = 'acme/claude-cheap-fallback';
const MODELS = 6;
let nextModel = 0;
/** A model with a fallback no earlier test has used (deployment health is per model). */
const freshModel = (): string => `acme/gpt-with-fallback-${nextModel++}`;
/** Its twin whose fallback is cheaper than itself. */
const CHEAP_ROUTED = 'acme/gpt-with-cheap-fallback';

let east: FakeVendor<FakeOpenAIReply>;
let west: FakeVendor<FakeOpenAIReply>;
let claude: FakeAnthropic;
let h: RoutingHarness;
let a: TextAccount;

beforeAll(async () => {
  [east, west, claude] = await Promise.all([
    startFakeOpenAI({ apiKey: 'sk-east' }),
    startFakeOpenAI({ apiKey: 'sk-west' }),
    startFakeAnthropic({ apiKey: 'sk-ant' }),
  ]);
  const deployments = [
    { vendor: 'openai_east', priority: 0 },
    { vendor: 'openai_west', priority: 1 },
  ];
  const claudeModel = (id: string, pricing: object) =>
    catalogTextModel(id, 'claude_a', {
      vendor_model_id: 'claude-sonnet-4-5',
      created: 1759104000,
      context_length: 200000,
      max_output_tokens: 8192,
      pricing,
    });
  const catalog = {
    vendors: {
      openai_east: { protocol: 'openai', base_url: east.url },
      openai_west: { protocol: 'openai', base_url: west.url },
      claude_a: { protocol: 'anthropic', base_url: claude.url },
    },
    models: [
      ...Array.from({ length: MODELS }, (_, i) =>
        catalogTextModel(`acme/gpt-with-fallback-${i}`, 'openai_east', { pricing: PRIMARY_PRICING, fallback: FALLBACK, deployments }),
      ),
      catalogTextModel(CHEAP_ROUTED, 'openai_east', { pricing: PRIMARY_PRICING, fallback: CHEAP_FALLBACK, deployments }),
      claudeModel(FALLBACK, FALLBACK_PRICING),
      claudeModel(CHEAP_FALLBACK, CHEAP_PRICING),
    ],
  };
  h = await startRoutingHarness(catalog, {
    OPENAI_EAST_API_KEY: 'sk-east',
    OPENAI_WEST_API_KEY: 'sk-west',
    CLAUDE_A_API_KEY: 'sk-ant',
    TOLLGATE_ROUTING_COOLDOWN_MS: '30000',
  });
  a = await textAccount(h.t);
});

afterAll(async () => {
  await h?.stop();
  await Promise.all([east?.close(), west?.close(), claude?.close()]);
});

beforeEach(() => {
  for (const fake of [east, west, claude]) {
    fake.script();
    fake.requests.length = 0;
  }
});

/** A chat request over plain HTTP (no SDK: its retries would hide the answers). */
const post = (model: string, id: string, secret = a.secret) =>
  fetch(`${h.t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50 }),
  });

/** Fails both deployments until both are cooled (3 failures in a row each); the fallback, tried after each, fails too. */
async function coolBoth(model: string): Promise<void> {
  east.script({ status: 503 });
  west.script({ status: 502 });
  claude.script({ status: 500 });
  for (let i = 0; i < 3; i++) expect((await post(model, requestId())).status).toBe(502);
  expect([east.requests.length, west.requests.length, claude.requests.length]).toEqual([3, 3, 3]);
  for (const fake of [east, west, claude]) {
    fake.script();
    fake.requests.length = 0;
  }
}

test('while its deployments are healthy, the model serves itself: no fallback, no routed-from header', async () => {
  const model = freshModel();
  east.script({ text: 'From the east.', usage: { input: 12, output: 4 } });
  const id = requestId();
  const res = await post(model, id);
  expect(res.status).toBe(200);
  expect(res.headers.get('x-service-model-routed-from')).toBeNull();
  expect(claude.requests).toHaveLength(0);
  // 12 in at $1/M, 4 out at $2/M.
  const money = await expectChargedExactly(h, a, id, 20n);
  expect(money.usage[0]!.model).toBe(model);
});

test('every deployment cooled: the fallback serves, answered with x-service-model-routed-from, charged once at its own price, named in usage and access log', async () => {
  const model = freshModel();
  await coolBoth(model);
  claude.script({ text: 'Claude stands in.', usage: { input: 12, output: 4 } });
  const id = requestId();
  const res = await post(model, id);
  expect(res.status).toBe(200);
  expect(res.headers.get('x-service-model-routed-from')).toBe(model);
  const body = (await res.json()) as { model: string; choices: { message: { content: string } }[] };
  expect(body.choices[0]!.message.content).toBe('Claude stands in.');
  expect(body.model).toBe(FALLBACK);
  expect([east.requests.length, west.requests.length, claude.requests.length]).toEqual([0, 0, 1]);
  // 12 in at $3/M, 4 out at $9/M: the serving model's price, not the one asked for (20).
  const money = await expectChargedExactly(h, a, id, 72n);
  expect(money.usage[0]!.model).toBe(FALLBACK);
  await eventually(() => h.logLines.some((line) => line.request_id === id));
  expect(h.logLines.find((line) => line.request_id === id)).toMatchObject({ status: 200, model: FALLBACK });
});

test('the fallback failing too: its error, nothing charged, one upstream call', async () => {
  const model = freshModel();
  await coolBoth(model);
  claude.script({ status: 500, errorMessage: 'claude broke' });
  const id = requestId();
  const res = await post(model, id);
  expect(res.status).toBe(502);
  expect(claude.requests).toHaveLength(1);
  expect([east.requests.length, west.requests.length]).toEqual([0, 0]);
  await expectNothingCharged(h, a, id);
  const money = await settledMoneyOf(h.db, id);
  expect(money.usage[0]!.model).toBe(FALLBACK);
});

describe('every deployment failing during the request', () => {
  test('both answering 503: the dearer fallback serves on the same hold, grown from the lease, charged once at its own price', async () => {
    const model = freshModel();
    east.script({ status: 503 });
    west.script({ status: 503 });
    claude.script({ text: 'Claude steps in.', usage: { input: 12, output: 4 } });
    const id = requestId();
    const res = await post(model, id);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-model-routed-from')).toBe(model);
    const body = (await res.json()) as { model: string; choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content).toBe('Claude steps in.');
    expect(body.model).toBe(FALLBACK);
    expect([east.requests.length, west.requests.length, claude.requests.length]).toEqual([1, 1, 1]);
    // 12 in at $3/M, 4 out at $9/M: one charge, at the serving model's price; one usage record.
    const money = await expectChargedExactly(h, a, id, 72n);
    expect(money.usage[0]!.model).toBe(FALLBACK);
    await eventually(() => h.logLines.some((line) => line.request_id === id));
    expect(h.logLines.find((line) => line.request_id === id)).toMatchObject({ status: 200, model: FALLBACK });
  });

  test('streamed, a cheaper fallback fits the hold as it is: its stream, charged at its price', async () => {
    east.script({ status: 500 });
    west.script({ status: 429, retryAfter: '1' });
    claude.script({ text: 'Cheap Claude.', usage: { input: 12, output: 4 } });
    const id = requestId();
    const res = await fetch(`${h.t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: CHEAP_ROUTED, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-model-routed-from')).toBe(CHEAP_ROUTED);
    const text = await res.text();
    expect(text).toContain('Cheap Claude.'.slice(0, 5));
    expect(text).toContain(`"model":"${CHEAP_FALLBACK}"`);
    // 12 in at $0.50/M (6), 4 out at $1/M (4).
    const money = await expectChargedExactly(h, a, id, 10n);
    expect(money.usage[0]!.model).toBe(CHEAP_FALLBACK);
  });

  test("a dearer fallback the hold cannot cover: the model's own answer (502), the fallback not called, nothing charged", async () => {
    // Enough for this request at the model's price (about 110 micro-dollars), not at the fallback's (about 500).
    const poor = await textAccount(h.t, { fundsMicro: '300' });
    const model = freshModel();
    east.script({ status: 503 });
    west.script({ status: 500, errorMessage: 'west is down' });
    const id = requestId();
    const res = await post(model, id, poor.secret);
    expect(res.status).toBe(502);
    expect(res.headers.get('x-service-model-routed-from')).toBeNull();
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('west is down');
    expect([east.requests.length, west.requests.length, claude.requests.length]).toEqual([1, 1, 0]);
    const money = await expectNothingCharged(h, poor, id);
    expect(money.usage[0]!.model).toBe(model);
  });
});
