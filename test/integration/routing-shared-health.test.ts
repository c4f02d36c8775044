import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { openaiClient, requestId, textAccount, type TextAccount } from '../support/text';
import { removeCompiledCli, runTollgate } from '../support/cli';
import { ADMIN_TOKEN, graphql, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * Two Tollgate instances on one PostgreSQL and one Redis share their deployments' health: a
 * deployment one instance cooled gets no traffic from the other within a second, and its
 * recovery, seen by one instance's probe, reaches the other too.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `tollgate:test-routing-${randomBytes(4).toString('hex')}:`;
const COOLDOWN_MS = 4_000;

let east: FakeVendor<FakeOpenAIReply>;
let west: FakeVendor<FakeOpenAIReply>;
let one: TestTollgate;
let two: TestTollgate;
let account: TextAccount;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  [east, west] = await Promise.all([startFakeOpenAI({ apiKey: 'sk-east' }), startFakeOpenAI({ apiKey: 'sk-west' })]);
  dir = mkdtempSync(join(tmpdir(), 'tollgate-routing-shared-'));
  const file = join(dir, 'catalog.json');
  writeFileSync(
    file,
    JSON.stringify({
      vendors: { openai_east: { protocol: 'openai', base_url: east.url }, openai_west: { protocol: 'openai', base_url: west.url } },
      models: [
        {
          kind: 'text',
          id: 'acme/gpt-shared',
          vendor: 'openai_east',
          vendor_model_id: 'gpt-4o-mini',
          created: 1721260800,
          context_length: 128000,
          max_output_tokens: 4096,
          pricing: { input: '1.00', output: '2.00' },
          deployments: [
            { vendor: 'openai_east', priority: 0 },
            { vendor: 'openai_west', priority: 1 },
          ],
        },
      ],
    }),
  );
  env = {
    TOLLGATE_CATALOG: file,
    OPENAI_EAST_API_KEY: 'sk-east',
    OPENAI_WEST_API_KEY: 'sk-west',
    REDIS_URL,
    TOLLGATE_REDIS_KEY_PREFIX: PREFIX,
    TOLLGATE_ROUTING_COOLDOWN_MS: String(COOLDOWN_MS),
  };
  one = await startTestTollgate({ env });
  two = await startTestTollgate({ env, databaseUrl: one.databaseUrl });
  account = await textAccount(one);
  // Compiles the CLI now, so that the test's own call is quick (well inside a cooldown).
  await runTollgate(['admin', '--help'], {});
});

afterAll(async () => {
  await two?.stop();
  await one?.stop();
  await Promise.all([east?.close(), west?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
  removeCompiledCli();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const ask = (instance: TestTollgate) =>
  openaiClient(instance.url, account.secret).chat.completions.create(
    { model: 'acme/gpt-shared', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20 },
    { headers: { 'x-request-id': requestId() } },
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a deployment cooled on one instance gets no traffic from the other; its recovery is shared too', async () => {
  east.script({ status: 503 });
  west.script({ text: 'west' });
  // Instance one sees the east fail three times in a row and cools it.
  for (let i = 0; i < 3; i++) await ask(one);
  expect(east.requests).toHaveLength(3);
  // Within a second instance two, which never saw it fail, sends it nothing.
  await sleep(1_000);
  for (let i = 0; i < 5; i++) expect((await ask(two)).choices[0]!.message.content).toBe('west');
  expect(east.requests).toHaveLength(3);
  const cooled = await graphql(two.url, '{ deployments { deployment state } }', {}, ADMIN_TOKEN);
  expect(cooled.data.deployments[0]).toEqual({ deployment: 'openai_east', state: 'cooled' });
  // The operator's command reads the same shared health, without a gateway or a database (its
  // start may take longer than the cooldown on a busy machine: then the east is half-open).
  const listed = await runTollgate(['admin', 'list-deployments', '--json'], { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.stdout)).toEqual([
    expect.objectContaining({
      model: 'acme/gpt-shared',
      deployment: 'openai_east',
      configured: true,
      state: expect.stringMatching(/^(cooled|half-open)$/),
    }),
    expect.objectContaining({ deployment: 'openai_west', state: 'closed', cooled_until: null }),
  ]);

  // After the cooldown, instance one's probe finds the east healthy again ...
  east.script({ text: 'east' });
  await sleep(COOLDOWN_MS + 200);
  expect((await ask(one)).choices[0]!.message.content).toBe('east');
  // ... and instance two knows it within a second: closed, not half-open waiting for a probe of its own.
  await sleep(1_000);
  const recovered = await graphql(two.url, '{ deployments { deployment state } }', {}, ADMIN_TOKEN);
  expect(recovered.data.deployments).toEqual([
    { deployment: 'openai_east', state: 'closed' },
    { deployment: 'openai_west', state: 'closed' },
  ]);
  expect((await ask(two)).choices[0]!.message.content).toBe('east');
  expect((await ask(two)).choices[0]!.message.content).toBe('east');
});
