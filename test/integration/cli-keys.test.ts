import { randomBytes } from 'node:crypto';
import { removeCompiledCli, runTollgate, type CliResult } from '../support/cli';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/text';
import { call, startTestTollgate, type TestTollgate } from '../support/tollgate';

// Spawned processes on a machine shared with other test files can be slow to start.
jest.setTimeout(120_000);

/**
 * The operator's CLI over an account's keys, spend and request log, on the database of a running
 * gateway that shares its Redis: what the CLI changes the gateway enforces at once.
 */
let db: { url: string; drop(): Promise<void> };
let env: Record<string, string>;
let t: TestTollgate;
let accountId: string;
let first: { id: string; secret: string };
let second: { id: string; secret: string };

const admin = (...args: string[]): Promise<CliResult> => runTollgate(['admin', ...args], env);
async function adminJson<T = any>(...args: string[]): Promise<T> {
  const result = await admin(...args, '--json');
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
const chat = (secret: string) =>
  call(`${t.url}/v1/chat/completions`, {
    token: secret,
    body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hello there' }] },
  });

beforeAll(async () => {
  db = await createTestDatabase();
  const redis = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  env = { DATABASE_URL: db.url, REDIS_URL: redis, TOLLGATE_REDIS_KEY_PREFIX: `cli-keys-${randomBytes(4).toString('hex')}:` };
  accountId = (await adminJson<{ id: string }>('create-account', '--name', 'Ops')).id;
  await adminJson('add-funds', '--account', accountId, '--amount-usd', '100');
  await adminJson('set-tier', '--account', accountId, '--tier', '5');
  first = await adminJson('create-key', '--account', accountId, '--name', 'build bot');
  second = await adminJson('create-key', '--account', accountId, '--name', 'docs site');
  t = await startTestTollgate({ databaseUrl: db.url, env });
  expect((await chat(first.secret)).status).toBe(200);
  expect((await chat(first.secret)).status).toBe(200);
  expect((await chat(second.secret)).status).toBe(200);
});
afterAll(async () => {
  await t?.stop();
  await db?.drop();
  removeCompiledCli();
});

test('list-keys: every key with its month spend; --search and --status narrow it; a table for people', async () => {
  expect(
    await eventually(
      async () => (await adminJson<any[]>('list-keys', '--account', accountId)).every((k) => BigInt(k.month_spent_micro) > 0n),
      15_000,
    ),
  ).toBe(true);
  const keys = await adminJson<any[]>('list-keys', '--account', accountId);
  expect(keys.map((k) => [k.id, k.name, k.status])).toEqual([
    [second.id, 'docs site', 'active'],
    [first.id, 'build bot', 'active'],
  ]);
  expect((await adminJson<any[]>('list-keys', '--account', accountId, '--search', 'BUILD')).map((k) => k.id)).toEqual([first.id]);
  expect(await adminJson<any[]>('list-keys', '--account', accountId, '--status', 'revoked')).toEqual([]);
  const table = await admin('list-keys', '--account', accountId);
  expect(table.stdout).toMatch(/ID\s+NAME\s+KIND\s+PREFIX\s+STATUS\s+MONTH SPENT/);
  expect(table.stdout).toMatch(/build bot\s+prepaid/);
});

test('spend and requests print what the ledger charged, by key and as the request log', async () => {
  const ledger = await call(`${t.url}/v1/key`, { token: first.secret });
  const byKey = await adminJson<any>('spend', '--account', accountId, '--by', 'key');
  expect(byKey).toMatchObject({ time_zone: 'UTC', group_by: 'key', total: { requests: 3 } });
  expect(byKey.groups.find((g: any) => g.key_id === first.id)).toMatchObject({
    key_name: 'build bot',
    requests: 2,
    cost_micro: ledger.body.month_settled_micro,
  });
  const spent = BigInt(100_000_000) - BigInt(ledger.body.account.balance_micro);
  expect(byKey.total.cost_micro).toBe(spent.toString());
  const byDay = await admin('spend', '--account', accountId);
  expect(byDay.stdout).toMatch(/^DAY\s+COST\s+REQUESTS/);
  expect(byDay.stdout).toMatch(/TOTAL\s+\$[\d.]+\s+3/);

  const requests = await adminJson<any[]>('requests', '--account', accountId, '--key', first.id);
  expect(requests).toHaveLength(2);
  expect(requests[0]).toMatchObject({ key_id: first.id, key_name: 'build bot', model: 'sandbox/echo', status: 'ok' });
  const paged = await admin('requests', '--account', accountId, '--limit', '1');
  expect(paged.stdout).toMatch(/More: add --after use_/);
});

test('set-key-limit and revoke-key: the gateway enforces them at once (the key cache hears through Redis)', async () => {
  const limited = await adminJson<any>('set-key-limit', '--account', accountId, '--key', second.id, '--monthly-limit-usd', '2.5');
  expect(limited).toMatchObject({ id: second.id, monthly_spend_limit_micro: '2500000' });
  expect((await call(`${t.url}/v1/key`, { token: second.secret })).body.monthly_spend_limit_micro).toBe('2500000');
  expect(
    (await adminJson<any>('set-key-limit', '--account', accountId, '--key', second.id, '--no-limit')).monthly_spend_limit_micro,
  ).toBeNull();

  const revoked = await adminJson<any>('revoke-key', '--account', accountId, '--key', first.id);
  expect(revoked).toMatchObject({ id: first.id, status: 'revoked' });
  // Well inside the key cache's minute: the revocation reached the gateway's cache.
  expect(await eventually(async () => (await chat(first.secret)).status === 401, 5_000)).toBe(true);
  expect((await adminJson<any[]>('list-keys', '--account', accountId, '--status', 'revoked')).map((k) => k.id)).toEqual([first.id]);
  // A revoked key is history: no new limit.
  const refused = await admin('set-key-limit', '--account', accountId, '--key', first.id, '--monthly-limit-usd', '5');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('is revoked');
});

test.each([
  [['list-keys'], 2, 'list-keys: --account is required'],
  [['list-keys', '--account', 'acct_nope'], 1, "No account 'acct_nope'."],
  [['list-keys', '--account', 'acct_nope', '--status', 'gone'], 2, '--status must be one of active, revoked'],
  [
    ['set-key-limit', '--account', 'acct_nope', '--key', 'key_nope'],
    2,
    'give exactly one of --monthly-limit-micro, --monthly-limit-usd or --no-limit',
  ],
  [
    ['set-key-limit', '--account', 'acct_nope', '--key', 'key_nope', '--monthly-limit-usd', '0.5'],
    1,
    'Monthly limit must be between $1 and $100,000',
  ],
  [['revoke-key', '--account', 'acct_nope', '--key', 'key_nope'], 1, "No key 'key_nope'"],
  [['spend', '--account', 'acct_nope', '--by', 'week'], 2, '--by must be one of day, model, key'],
  [['spend', '--account', 'acct_nope', '--from', '2026-13-01'], 1, '--from must be a UTC day'],
  [['requests', '--account', 'acct_nope', '--limit', '5000'], 2, '--limit must be from 1 to 1000'],
  [['requests', '--account', 'acct_nope', '--status', 'meh'], 2, '--status must be one of ok, partial, failed'],
])('tollgate admin %j exits %i naming the problem', async (args, code, message) => {
  const result = await admin(...args);
  expect(result.code).toBe(code);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toContain(message);
});
