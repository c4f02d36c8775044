import { Writable } from 'node:stream';
import pino from 'pino';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import {
  eventually,
  expectChargedExactly,
  expectNothingCharged,
  requestId,
  settledMoneyOf,
  startTextHarness,
  textAccount,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * The operator-defined fallback model over real HTTP: a model routed over two OpenAI fakes
 * falls back to a Claude model (another fake, another price) once both deployments are cooled.
 */

const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
    done();
  },
});

const PRIMARY_PRICING = { input: '1.00', output: '2.00' };
const FALLBACK_PRICING = { input: '3.00', output: '9.00' };
const FALLBACK = 'acme/claude-fallback';
let nextModel = 0;
/** A model with a fallback no earlier test has used (deployment health is per model). */
const freshModel = (): string => `acme/gpt-with-fallback-${nextModel++}`;

let east: FakeVendor<FakeOpenAIReply>;
let west: FakeVendor<FakeOpenAIReply>;
let claude: FakeAnthropic;
let h: TextHarness;
let a: TextAccount;
let dir: string;

beforeAll(async () => {
  [east, west, claude] = await Promise.all([
    startFakeOpenAI({ apiKey: 'sk-east' }),
    startFakeOpenAI({ apiKey: 'sk-west' }),
    startFakeAnthropic({ apiKey: 'sk-ant' }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'tollgate-fallback-'));
  const file = join(dir, 'catalog.json');
  const catalog = {
    vendors: {
      openai_east: { protocol: 'openai', base_url: east.url },
      openai_west: { protocol: 'openai', base_url: west.url },
      claude_a: { protocol: 'anthropic', base_url: claude.url },
    },
    models: [
      ...[0, 1, 2].map((i) => ({
        kind: 'text',
        id: `acme/gpt-with-fallback-${i}`,
        vendor: 'openai_east',
        vendor_model_id: 'gpt-4o-mini',
        created: 1721260800,
        context_length: 128000,
        max_output_tokens: 4096,
        pricing: PRIMARY_PRICING,
        fallback: FALLBACK,
        deployments: [
          { vendor: 'openai_east', priority: 0 },
          { vendor: 'openai_west', priority: 1 },
        ],
      })),
      {
        kind: 'text',
        id: FALLBACK,
        vendor: 'claude_a',
        vendor_model_id: 'claude-sonnet-4-5',
        created: 1759104000,
        context_length: 200000,
        max_output_tokens: 8192,
        pricing: FALLBACK_PRICING,
      },
    ],
  };
  writeFileSync(file, JSON.stringify(catalog));
  h = await startTextHarness(
    {
      TOLLGATE_CATALOG: file,
      OPENAI_EAST_API_KEY: 'sk-east',
      OPENAI_WEST_API_KEY: 'sk-west',
      CLAUDE_A_API_KEY: 'sk-ant',
      TOLLGATE_ROUTING_COOLDOWN_MS: '30000',
    },
    { log: pino({ level: 'info' }, logSink) },
  );
  a = await textAccount(h.t);
});

afterAll(async () => {
  await h?.stop();
  await Promise.all([east?.close(), west?.close(), claude?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  for (const fake of [east, west, claude]) {
    fake.script();
    fake.requests.length = 0;
  }
});

/** A chat request over plain HTTP (no SDK: its retries would hide the answers). */
const post = (model: string, id: string) =>
  fetch(`${h.t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50 }),
  });

/** Fails both deployments until both are cooled (3 failures in a row each). */
async function coolBoth(model: string): Promise<void> {
  east.script({ status: 503 });
  west.script({ status: 502 });
  for (let i = 0; i < 3; i++) expect((await post(model, requestId())).status).toBe(502);
  expect(claude.requests).toHaveLength(0);
  east.requests.length = 0;
  west.requests.length = 0;
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
  await eventually(() => logLines.some((line) => line.request_id === id));
  expect(logLines.find((line) => line.request_id === id)).toMatchObject({ status: 200, model: FALLBACK });
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
