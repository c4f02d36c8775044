import OpenAI from 'openai';
import { Client } from 'pg';
import { parsePrometheusText, sumOf, type Sample } from '../support/prometheus';
import {
  eventually,
  settledMoneyOf,
  startTextHarness,
  textAccount,
  withId,
  requestId,
  type TextAccount,
  type TextHarness,
} from '../support/text';
import { ADMIN_TOKEN, call, createKey, provisionAccount, startTestTollgate } from '../support/tollgate';

/**
 * GET /metrics over real HTTP: who may read it, and the values after known requests (parsed
 * from the Prometheus text format, compared with what the answers and the money tables say).
 */

let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  h = await startTextHarness();
  a = await textAccount(h.t);
});

afterAll(async () => {
  await h.stop();
});

async function scrape(): Promise<Sample[]> {
  const response = await fetch(`${h.t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text()).samples;
}

/** Waits until `read(after) - read(before)` reaches `expected` (a request is counted when its response closes). */
async function expectDelta(before: Sample[], read: (samples: Sample[]) => number, expected: number): Promise<Sample[]> {
  let after = await scrape();
  await eventually(async () => {
    after = await scrape();
    return read(after) - read(before) >= expected;
  });
  expect(read(after) - read(before)).toBe(expected);
  return after;
}

test('GET /metrics answers the operator token only', async () => {
  const none = await call(`${h.t.url}/metrics`);
  expect(none.status).toBe(401);
  expect(none.body.error.code).toBe('invalid_token');
  expect((await call(`${h.t.url}/metrics`, { token: a.secret })).status).toBe(401);
  expect((await call(`${h.t.url}/metrics`, { token: a.sessionToken })).status).toBe(401);
  const samples = await scrape();
  // The event-loop delay and process metrics come with every scrape.
  expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds')).toBe(true);
  expect(samples.some((s) => s.name === 'process_cpu_seconds_total')).toBe(true);
});

test('requests, gateway and vendor time, tokens and spend after known requests', async () => {
  const before = await scrape();
  const ids = [requestId(), requestId()];
  const prompt = 'metrics-secret-prompt please count these words';
  // The vendor takes its time (a pause before each delta), so its share of each request is large.
  const clientStarted = performance.now();
  for (const id of ids) {
    const completion = await a.openai.chat.completions.create(
      { model: 'sandbox/echo', messages: [{ role: 'user', content: `[sandbox:cached=2] [sandbox:delay=100] ${prompt}` }] },
      withId(id),
    );
    expect(completion.model).toBe('sandbox/echo');
  }
  const clientSeconds = (performance.now() - clientStarted) / 1000;
  const keyRead = await call(`${h.t.url}/v1/keys/${a.keyId}`, { token: a.sessionToken });
  expect(keyRead.status).toBe(200);
  const usage = (await Promise.all(ids.map((id) => settledMoneyOf(h.db, id)))).flatMap((m) => m.usage);
  expect(usage).toHaveLength(2);
  const total = (field: 'input_tokens' | 'cached_input_tokens' | 'output_tokens') => usage.reduce((sum, row) => sum + row[field], 0);

  const chat = { endpoint: '/v1/chat/completions', method: 'POST', status: '200', model: 'sandbox/echo', vendor: 'sandbox' };
  const after = await expectDelta(before, (s) => sumOf(s, 'tollgate_http_requests_total', chat), 2);
  const delta = (name: string, labels: Record<string, string>) => sumOf(after, name, labels) - sumOf(before, name, labels);
  const model = { vendor: 'sandbox', model: 'sandbox/echo' };
  expect(delta('tollgate_tokens_total', { ...model, type: 'input' })).toBe(total('input_tokens'));
  expect(delta('tollgate_tokens_total', { ...model, type: 'cached_input' })).toBe(total('cached_input_tokens'));
  expect(total('cached_input_tokens')).toBe(4);
  expect(delta('tollgate_tokens_total', { ...model, type: 'output' })).toBe(total('output_tokens'));
  expect(delta('tollgate_spend_micro_total', model)).toBe(usage.reduce((sum, row) => sum + Number(row.cost_micro), 0));
  expect(delta('tollgate_vendor_seconds_count', model)).toBe(2);
  expect(delta('tollgate_vendor_first_event_seconds_count', model)).toBe(2);
  expect(delta('tollgate_gateway_seconds_count', { endpoint: '/v1/chat/completions', method: 'POST' })).toBe(2);
  // Gateway time excludes the vendor's: together they fit in the time the client waited (counted
  // twice, the vendor's time alone would overflow it, being most of each request here).
  const gatewaySeconds = delta('tollgate_gateway_seconds_sum', { endpoint: '/v1/chat/completions', method: 'POST' });
  const vendorSeconds = delta('tollgate_vendor_seconds_sum', model);
  expect(gatewaySeconds).toBeGreaterThan(0);
  expect(vendorSeconds).toBeGreaterThan(clientSeconds / 2);
  expect(gatewaySeconds + vendorSeconds).toBeLessThanOrEqual(clientSeconds);

  // The key route is labelled by its pattern, and no label carries a key id, a secret or the prompt.
  await expectDelta(
    before,
    (s) => sumOf(s, 'tollgate_http_requests_total', { endpoint: '/v1/keys/{id}', method: 'GET', status: '200', model: '', vendor: '' }),
    1,
  );
  // An unknown path never becomes a label of its own.
  expect((await call(`${h.t.url}/v1/no-such-thing/${a.keyId}`, { token: a.secret })).status).toBe(404);
  await expectDelta(before, (s) => sumOf(s, 'tollgate_http_requests_total', { endpoint: 'unmatched', method: 'GET', status: '404' }), 1);
  for (const sample of await scrape()) {
    for (const value of Object.values(sample.labels)) {
      expect(value).not.toContain(a.keyId);
      expect(value).not.toContain('metrics-secret-prompt');
      expect(value).not.toMatch(/^tg[ks]_/);
    }
  }
});

test('vendor errors by kind, and rate-limit and spend-limit refusals', async () => {
  const before = await scrape();
  const failed = await a.openai.chat.completions
    .create({ model: 'sandbox/echo', messages: [{ role: 'user', content: '[sandbox:fail] hi' }] })
    .catch((e: unknown) => e);
  expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  const after = await expectDelta(before, (s) => sumOf(s, 'tollgate_vendor_errors_total', { vendor: 'sandbox', kind: 'http_5xx' }), 1);
  expect(
    sumOf(after, 'tollgate_http_requests_total', { endpoint: '/v1/chat/completions', status: '502', model: 'sandbox/echo' }) -
      sumOf(before, 'tollgate_http_requests_total', { endpoint: '/v1/chat/completions', status: '502', model: 'sandbox/echo' }),
  ).toBe(1);

  // Spend: an account holding one micro-dollar cannot cover any hold.
  const poor = await provisionAccount(h.t.url, { fundsMicro: '1' });
  const poorKey = await createKey(h.t.url, poor.sessionToken);
  const refused = await call(`${h.t.url}/v1/chat/completions`, {
    token: poorKey.secret,
    body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(refused.status).toBe(402);
  expect(refused.body.error.code).toBe('api_insufficient_balance');
  await expectDelta(before, (s) => sumOf(s, 'tollgate_refusals_total', { limit: 'spend', reason: 'api_insufficient_balance' }), 1);

  // Rate: a tier-1 account allows 5 requests per second; a burst of 12 meets refusals.
  const burst = await Promise.all(Array.from({ length: 12 }, () => call(`${h.t.url}/v1/models`, { token: poorKey.secret })));
  const limited = burst.filter((r) => r.status === 429).length;
  expect(limited).toBeGreaterThan(0);
  await expectDelta(before, (s) => sumOf(s, 'tollgate_refusals_total', { limit: 'rate' }), limited);
});

test('images: each vendor call timed, its failure counted, only delivered images in the spend', async () => {
  const before = await scrape();
  const answer = await a.openai.images.generate({
    model: 'sandbox/image',
    prompt: '[sandbox:fail-one] three lamps',
    n: 3,
    size: '512x512',
  });
  expect(answer.data).toHaveLength(2);
  const model = { vendor: 'sandbox', model: 'sandbox/image' };
  const after = await expectDelta(before, (s) => sumOf(s, 'tollgate_vendor_seconds_count', model), 3);
  const delta = (name: string, labels: Record<string, string>) => sumOf(after, name, labels) - sumOf(before, name, labels);
  expect(delta('tollgate_vendor_errors_total', { vendor: 'sandbox', kind: 'http_5xx' })).toBe(1);
  expect(delta('tollgate_spend_micro_total', model)).toBe(2 * 1_000); // $0.001 per delivered image
});

test('holds in flight while a stream runs, none after it', async () => {
  const stream = await fetch(`${h.t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'sandbox/echo',
      stream: true,
      messages: [{ role: 'user', content: `[sandbox:delay=40] ${'a slow answer of many words '.repeat(4)}` }],
    }),
  });
  const reader = stream.body!.getReader();
  await reader.read(); // the first chunk: the hold is open and the vendor is streaming
  const during = await scrape();
  expect(sumOf(during, 'tollgate_holds_in_flight')).toBeGreaterThanOrEqual(1);
  expect(sumOf(during, 'tollgate_holds_in_flight_micro')).toBeGreaterThan(0);
  expect(sumOf(during, 'tollgate_leases_in_flight')).toBeGreaterThanOrEqual(1);
  while (!(await reader.read()).done);
  expect(await eventually(async () => sumOf(await scrape(), 'tollgate_holds_in_flight') === 0)).toBe(true);
});

test('the settlement backlog: its depth and the age of its oldest operation while a commit is stalled, none once committed', async () => {
  const warm = requestId();
  await a.openai.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'warm' }] }, withId(warm));
  await settledMoneyOf(h.db, warm); // the key's lease is taken and nothing is queued
  const locker = new Client({ connectionString: h.t.databaseUrl });
  await locker.connect();
  await locker.query('begin');
  await locker.query('select 1 from accounts where id = $1 for update', [a.accountId]); // stalls the settlement's commit
  try {
    await a.openai.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'stalled' }] });
    expect(
      await eventually(async () => {
        const samples = await scrape();
        return sumOf(samples, 'tollgate_settlement_backlog') === 1 && sumOf(samples, 'tollgate_settlement_backlog_age_seconds') >= 0.1;
      }),
    ).toBe(true);
    expect(sumOf(await scrape(), 'tollgate_settlement_backlog_limit')).toBe(3_000);
  } finally {
    await locker.query('commit');
    await locker.end();
  }
  expect(await eventually(async () => sumOf(await scrape(), 'tollgate_settlement_backlog') === 0)).toBe(true);
  expect(sumOf(await scrape(), 'tollgate_settlement_backlog_age_seconds')).toBe(0);
});

test('without an operator token there are no metrics', async () => {
  const t = await startTestTollgate({ env: { TOLLGATE_ADMIN_TOKEN: '' } });
  try {
    const response = await call(`${t.url}/metrics`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(404);
    expect(response.body.error.message).toMatch(/TOLLGATE_ADMIN_TOKEN/);
  } finally {
    await t.stop();
  }
});
