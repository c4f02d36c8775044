import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { catalogTextModel, startRoutingHarness, type RoutingHarness } from '../support/routing';
import { ADMIN_TOKEN, graphql } from '../support/tollgate';
import {
  accountMoney,
  eventually,
  expectChargedExactly,
  expectNothingCharged,
  requestId,
  settledMoneyOf,
  textAccount,
  withId,
  type TextAccount,
} from '../support/text';

/**
 * Failover across a model's deployments over real HTTP: two OpenAI fakes (two accounts of one
 * model, east first) and two Anthropic fakes behind a catalog file; money read from PostgreSQL.
 */

const PRICING = { input: '1.00', output: '2.00' };
const ROUTED_MODELS = 20;
let nextModel = 0;
/** A routed model no earlier test has used (deployment health is per model). */
const freshModel = (): string => `acme/gpt-routed-${nextModel++}`;

function routingCatalog(
  east: FakeVendor<FakeOpenAIReply>,
  west: FakeVendor<FakeOpenAIReply>,
  claudeA: FakeAnthropic,
  claudeB: FakeAnthropic,
) {
  return {
    vendors: {
      openai_east: { protocol: 'openai', base_url: east.url, api_key_env: 'EAST_OPENAI_KEY' },
      openai_west: { protocol: 'openai', base_url: west.url },
      claude_a: { protocol: 'anthropic', base_url: claudeA.url },
      claude_b: { protocol: 'anthropic', base_url: claudeB.url },
    },
    models: [
      // One model per test: each has its own deployments' health.
      ...Array.from({ length: ROUTED_MODELS }, (_, i) =>
        catalogTextModel(`acme/gpt-routed-${i}`, 'openai_east', {
          pricing: PRICING,
          deployments: [
            { vendor: 'openai_east', priority: 0 },
            { vendor: 'openai_west', vendor_model_id: 'gpt-4o-mini-west', priority: 1 },
          ],
        }),
      ),
      // Two deployments sharing the traffic (one priority, equal weights).
      ...['acme/gpt-balanced', 'acme/gpt-sticky'].map((id) =>
        catalogTextModel(id, 'openai_east', { pricing: PRICING, deployments: [{ vendor: 'openai_east' }, { vendor: 'openai_west' }] }),
      ),
      catalogTextModel('acme/claude-routed', 'claude_a', {
        vendor_model_id: 'claude-sonnet-4-5',
        created: 1759104000,
        context_length: 200000,
        max_output_tokens: 8192,
        pricing: PRICING,
        deployments: [
          { vendor: 'claude_a', priority: 0 },
          { vendor: 'claude_b', priority: 1 },
        ],
      }),
    ],
  };
}

let east: FakeVendor<FakeOpenAIReply>;
let west: FakeVendor<FakeOpenAIReply>;
let claudeA: FakeAnthropic;
let claudeB: FakeAnthropic;
let h: RoutingHarness;
let a: TextAccount;

const COOLDOWN_MS = 1_500;

beforeAll(async () => {
  [east, west, claudeA, claudeB] = await Promise.all([
    startFakeOpenAI({ apiKey: 'sk-east' }),
    startFakeOpenAI({ apiKey: 'sk-west' }),
    startFakeAnthropic({ apiKey: 'sk-ant-a' }),
    startFakeAnthropic({ apiKey: 'sk-ant-b' }),
  ]);
  h = await startRoutingHarness(routingCatalog(east, west, claudeA, claudeB), {
    EAST_OPENAI_KEY: 'sk-east',
    OPENAI_WEST_API_KEY: 'sk-west',
    CLAUDE_A_API_KEY: 'sk-ant-a',
    CLAUDE_B_API_KEY: 'sk-ant-b',
    TOLLGATE_ROUTING_COOLDOWN_MS: String(COOLDOWN_MS),
    TOLLGATE_ROUTING_FIRST_BYTE_TIMEOUT_MS: '400',
  });
  a = await textAccount(h.t);
});

afterAll(async () => {
  await h?.stop();
  await Promise.all([east?.close(), west?.close(), claudeA?.close(), claudeB?.close()]);
});

beforeEach(() => {
  for (const fake of [east, west, claudeA, claudeB]) {
    fake.script();
    fake.requests.length = 0;
  }
});

const ask = (model: string, id: string, stream = false) =>
  a.openai.chat.completions
    .create({ model, messages: [{ role: 'user', content: `Hi ${id}` }], max_tokens: 50, stream: stream as false }, withId(id))
    .withResponse();

const accountMoneyOf = () => accountMoney(h.db, a.accountId);

/** The deployment the request's usage record names. */
async function servedBy(id: string): Promise<string | null> {
  const { rows } = await h.db.query<{ deployment: string | null }>('select deployment from usage_records where request_id = $1', [id]);
  return rows[0]?.deployment ?? null;
}

/** Input 12 at $1/M and output (the fake's text / 4, rounded up) at $2/M: what one answer from either deployment costs. */
const chargeOf = (output: number) => BigInt(Math.round(12 * 1 + output * 2));

describe('failover before the first byte', () => {
  test.each([
    ['a 503', { status: 503 }],
    ['a 429', { status: 429 }],
    ['a 500', { status: 500 }],
  ])('%s from the first deployment moves the request to the second, charged once at the model price', async (_name, failure) => {
    east.script(failure);
    west.script({ text: 'From the west.', usage: { input: 12, output: 4 } });
    const id = requestId();
    const model = freshModel();
    const { data } = await ask(model, id);
    expect(data.choices[0]!.message.content).toBe('From the west.');
    expect(east.requests).toHaveLength(1);
    expect(west.requests).toHaveLength(1);
    // The deployment's own model name went upstream.
    expect(west.lastRequest!.body.model).toBe('gpt-4o-mini-west');
    await expectChargedExactly(h, a, id, chargeOf(4));
    expect(await servedBy(id)).toBe('openai_west');
    // The access log names the deployment that served and the attempts it took.
    await eventually(() => h.logLines.some((line) => line.request_id === id));
    expect(h.logLines.find((line) => line.request_id === id)).toMatchObject({ status: 200, model, deployment: 'openai_west', attempts: 2 });
  });

  test('a first deployment that sends nothing in time is abandoned for the second (streamed)', async () => {
    east.script({ headersDelayMs: 2_000 });
    west.script({ text: 'Fast west.', usage: { input: 12, output: 3 } });
    const id = requestId();
    const stream = await a.openai.chat.completions.create(
      { model: freshModel(), messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50, stream: true },
      withId(id),
    );
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Fast west.');
    // The stalled attempt was abandoned after the first-byte timeout and its request aborted.
    expect(await eventually(() => east.lastRequest?.aborted === true)).toBe(true);
    await expectChargedExactly(h, a, id, chargeOf(3));
  });

  test('Anthropic 529 "overloaded" moves a Messages request to the other deployment', async () => {
    claudeA.script({ status: 529 });
    claudeB.script({ text: 'Claude B here.', usage: { input: 12, output: 5 } });
    const id = requestId();
    const message = await a.anthropic.messages.create(
      { model: 'acme/claude-routed', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] },
      withId(id),
    );
    expect(message.content).toEqual(
      [{ type: 'text', text: 'Claude B here.', citations: null }].map(({ type, text }) => expect.objectContaining({ type, text })),
    );
    expect(claudeA.requests).toHaveLength(1);
    expect(claudeB.requests).toHaveLength(1);
    await expectChargedExactly(h, a, id, chargeOf(5));
  });

  test('a 4xx the request causes is not retried: one upstream call, nothing charged', async () => {
    east.script({ status: 400, errorMessage: 'Invalid value for messages.' });
    const id = requestId();
    await expect(ask(freshModel(), id)).rejects.toMatchObject({ status: 502 });
    expect(east.requests).toHaveLength(1);
    expect(west.requests).toHaveLength(0);
    await expectNothingCharged(h, a, id);
  });

  test('when every deployment fails, the client gets the last failure and nothing is charged', async () => {
    east.script({ status: 503 });
    west.script({ status: 500, errorMessage: 'west is down' });
    const id = requestId();
    await expect(ask(freshModel(), id)).rejects.toMatchObject({ status: 502 });
    expect(east.requests).toHaveLength(1);
    expect(west.requests).toHaveLength(1);
    await expectNothingCharged(h, a, id);
  });
});

describe('a client that went away', () => {
  test('stops the retries: the next deployment is never called, nothing is charged', async () => {
    east.script({ headersDelayMs: 300, status: 503 });
    const id = requestId();
    const controller = new AbortController();
    const asked = a.openai.chat.completions.create(
      { model: freshModel(), messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50 },
      { ...withId(id), signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 100);
    await expect(asked).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 600));
    expect(east.requests).toHaveLength(1);
    expect(west.requests).toHaveLength(0);
    await expectNothingCharged(h, a, id);
  });
});

describe('1,000 requests, one deployment failing half of its own', () => {
  test('no client sees an error, and each request is charged once', async () => {
    // The west fails every other request it gets, in every way that leaves the client nothing: error
    // statuses, a slow failure, and an answer broken off half-way (a whole answer is sent only complete).
    const failures: FakeOpenAIReply[] = [
      { status: 503 },
      { status: 429 },
      { status: 500 },
      { status: 529 },
      { headersDelayMs: 200, status: 502 },
      { cutAfterChunks: 1 },
    ];
    west.script(
      ...Array.from({ length: 3_000 }, (_, i): FakeOpenAIReply =>
        i % 2 === 0 ? { text: 'west ok' } : failures[(i >> 1) % failures.length]!,
      ),
    );
    east.script({ text: 'east ok' });
    const ids = Array.from({ length: 1_000 }, () => requestId());
    let errors = 0;
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        try {
          const { data } = await ask('acme/gpt-balanced', id);
          if (!/ok$/.test(data.choices[0]!.message.content ?? '')) errors++;
        } catch {
          errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(errors).toBe(0);
    // Both deployments served, and the west failed some: failover did the work.
    expect(west.requests.length).toBeGreaterThan(0);
    expect(east.requests.length).toBeGreaterThan(500);
    await eventually(
      async () =>
        (await h.db.query('select count(*)::int as n from usage_records where request_id = any($1)', [ids])).rows[0].n === ids.length,
      10_000,
    );
    const { rows } = await h.db.query<{ status: string; n: number; charges: number }>(
      `select u.status, count(*)::int as n, count(l.id)::int as charges
         from usage_records u left join ledger_entries l on l.hold_id = u.hold_id and l.kind = 'charge'
        where u.request_id = any($1) group by u.status`,
      [ids],
    );
    expect(rows).toEqual([{ status: 'ok', n: 1_000, charges: 1_000 }]);
    await eventually(async () => (await accountMoneyOf()).activeHolds === 0);
    const money = await accountMoneyOf();
    expect(money.balance).toBe(money.ledgerSum);
  }, 120_000);
});

describe('prompt-cache affinity', () => {
  test('turns of one conversation stay on the deployment that served its last turn, and move only when it fails', async () => {
    const system = { role: 'system' as const, content: 'You are a patient tutor with a long, cacheable prompt.' };
    const turn = (n: number) =>
      a.openai.chat.completions.create({
        model: 'acme/gpt-sticky',
        messages: [
          system,
          { role: 'user', content: 'Teach me fractions.' },
          ...Array.from({ length: n }, (_, i) => ({ role: i % 2 ? ('user' as const) : ('assistant' as const), content: `turn ${i}` })),
        ],
        max_tokens: 50,
      });
    east.script({ text: 'east' });
    west.script({ text: 'west' });
    const first = (await turn(0)).choices[0]!.message.content;
    const served: string[] = [];
    for (let n = 1; n <= 12; n++) served.push((await turn(n)).choices[0]!.message.content!);
    expect(served).toEqual(Array(12).fill(first));
    // Its deployment fails: the conversation moves, and stays where it moved.
    const [warm, other] = first === 'east' ? [east, west] : [west, east];
    warm.script({ status: 503 });
    const moved: string[] = [];
    for (let n = 13; n <= 18; n++) moved.push((await turn(n)).choices[0]!.message.content!);
    expect(new Set(moved)).toEqual(new Set([other === east ? 'east' : 'west']));

    // Another conversation, named by its session header alone, sticks the same way.
    east.script({ text: 'east' });
    west.script({ text: 'west' });
    const session = (n: number) =>
      a.openai.chat.completions.create(
        { model: 'acme/gpt-sticky', messages: [{ role: 'user', content: `question ${n}` }], max_tokens: 50 },
        { headers: { 'x-session-id': 'conv-42' } },
      );
    const bySession = new Set<string>();
    for (let n = 0; n < 10; n++) bySession.add((await session(n)).choices[0]!.message.content!);
    expect(bySession.size).toBe(1);
  });
});

describe('after the first byte', () => {
  test('a stream cut mid-way is not retried: the client gets the stream error, charged for what it saw', async () => {
    east.script({ text: 'This answer breaks off somewhere in the middle.', chunkSize: 5, cutAfterChunks: 3 });
    const id = requestId();
    const stream = await a.openai.chat.completions.create(
      { model: freshModel(), messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50, stream: true },
      withId(id),
    );
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toThrow();
    expect(text.length).toBeGreaterThan(0);
    expect(west.requests).toHaveLength(0);
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage.map((u) => u.status)).toEqual(['partial']);
  });
});

describe('health', () => {
  test('a deployment failing in a row is cooled: no traffic until its probe succeeds', async () => {
    const model = freshModel();
    east.script({ status: 503 });
    for (let i = 0; i < 3; i++) await ask(model, requestId());
    expect(east.requests).toHaveLength(3);
    // Cooled: the next requests go straight to the west.
    for (let i = 0; i < 5; i++) await ask(model, requestId());
    expect(east.requests).toHaveLength(3);
    expect(west.requests).toHaveLength(8);
    // After the cooldown one request probes the east; it succeeds, and the east takes traffic again.
    east.script({ text: 'East is back.' });
    await new Promise((r) => setTimeout(r, COOLDOWN_MS + 100));
    const { data } = await ask(model, requestId());
    expect(data.choices[0]!.message.content).toBe('East is back.');
    await ask(model, requestId());
    expect(east.requests).toHaveLength(5);
    expect(west.requests).toHaveLength(8);
  });

  test("the operator sees each deployment's health (GraphQL) and the failovers and cooldowns (/metrics)", async () => {
    const model = freshModel();
    east.script({ status: 503, errorMessage: 'east is overloaded' });
    for (let i = 0; i < 3; i++) await ask(model, requestId());
    const listed = await graphql(
      h.t.url,
      '{ deployments { model deployment protocol vendorModelId priority configured state consecutiveFailures cooledUntilMs lastError } }',
      {},
      ADMIN_TOKEN,
    );
    expect(listed.errors).toBeUndefined();
    const mine = listed.data.deployments.filter((d: { model: string }) => d.model === model);
    expect(mine).toEqual([
      expect.objectContaining({
        deployment: 'openai_east',
        protocol: 'openai',
        vendorModelId: 'gpt-4o-mini',
        priority: 0,
        configured: true,
        state: 'cooled',
        consecutiveFailures: 3,
        lastError: expect.stringContaining('east is overloaded'),
      }),
      expect.objectContaining({
        deployment: 'openai_west',
        vendorModelId: 'gpt-4o-mini-west',
        priority: 1,
        state: 'closed',
        cooledUntilMs: null,
      }),
    ]);
    expect(mine[0].cooledUntilMs).toBeGreaterThan(Date.now());
    // Not for a session: operator only.
    expect((await graphql(h.t.url, '{ deployments { model } }', {}, a.sessionToken)).errors?.[0]?.extensions.code).toBeDefined();

    const text = await (await fetch(`${h.t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    const labels = `model="${model}",deployment="openai_east"`;
    expect(text).toContain(`tollgate_routing_failovers_total{${labels}} 3`);
    expect(text).toContain(`tollgate_routing_cooldowns_total{${labels}} 1`);
    expect(text).toContain(`tollgate_routing_attempts_total{${labels},outcome="failed"} 3`);
    expect(text).toContain(`tollgate_routing_attempts_total{model="${model}",deployment="openai_west",outcome="served"} 3`);
    expect(text).toContain(`tollgate_routing_deployment_state{${labels}} 2`);
  });

  test('when every deployment is cooled: 503 with Retry-After, no upstream call, nothing charged', async () => {
    const model = freshModel();
    east.script({ status: 503 });
    west.script({ status: 502 });
    for (let i = 0; i < 3; i++) await expect(ask(model, requestId())).rejects.toMatchObject({ status: 502 });
    const [eastCalls, westCalls] = [east.requests.length, west.requests.length];
    const id = requestId();
    const refused = await fetch(`${h.t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20 }),
    });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('deployments_unavailable');
    expect([east.requests.length, west.requests.length]).toEqual([eastCalls, westCalls]);
    await expectNothingCharged(h, a, id);
  });

  test('a 429 cools the deployment for its Retry-After, at once', async () => {
    const model = freshModel();
    east.script({ status: 429, retryAfter: '1' }, { text: 'ok' });
    await ask(model, requestId());
    await ask(model, requestId());
    expect(east.requests).toHaveLength(1);
    expect(west.requests).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 1_100));
    await ask(model, requestId());
    expect(east.requests).toHaveLength(2);
  });

  /** A chat request over plain HTTP (no SDK: its own retries would hide the answer). */
  const post = (model: string, id: string) =>
    fetch(`${h.t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20 }),
    });

  test('every deployment answering 429: the client gets 429 upstream_rate_limited with the soonest vendor Retry-After, then no upstream call while they cool; nothing charged', async () => {
    const model = freshModel();
    east.script({ status: 429, retryAfter: '7', errorMessage: 'east: slow down' });
    west.script({ status: 429, retryAfter: '3', errorMessage: 'west: slow down' });
    const id = requestId();
    const limited = await post(model, id);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    const body = (await limited.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error).toMatchObject({ code: 'upstream_rate_limited', details: { model, retry_after_seconds: 3 } });
    expect([east.requests.length, west.requests.length]).toEqual([1, 1]);
    await expectNothingCharged(h, a, id);

    // Both cool for their Retry-After: the next request calls neither, and is told the same soonest end.
    const again = requestId();
    const refused = await post(model, again);
    expect(refused.status).toBe(429);
    const seconds = Number(refused.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(3);
    expect(((await refused.json()) as { error: { code: string; details: { retry_after_seconds: number } } }).error).toMatchObject({
      code: 'upstream_rate_limited',
      details: { retry_after_seconds: seconds },
    });
    expect([east.requests.length, west.requests.length]).toEqual([1, 1]);
    await expectNothingCharged(h, a, again);
  });

  test('a 429 on one deployment and a 5xx on the other is a failure, not a rate limit: 502, nothing charged', async () => {
    const model = freshModel();
    east.script({ status: 429, retryAfter: '5' });
    west.script({ status: 500, errorMessage: 'west broke' });
    const id = requestId();
    const failed = await post(model, id);
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('provider_error');
    await expectNothingCharged(h, a, id);
  });
});
