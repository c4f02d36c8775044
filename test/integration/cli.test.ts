import { removeCompiledCli, runTollgate, type CliResult } from '../support/cli';
import { createTestDatabase } from '../support/database';
import { ADMIN_TOKEN, call, graphql, startTestTollgate, type TestTollgate } from '../support/tollgate';

// Spawned processes on a machine shared with other test files can be slow to start.
jest.setTimeout(120_000);

// Each command is a spawned CLI process on a real database; a gateway on the same database
// shows that what the CLI did is what the planes see.
let db: { url: string; drop(): Promise<void> };
let env: Record<string, string>;

const admin = (...args: string[]): Promise<CliResult> => runTollgate(['admin', ...args], env);
async function adminJson<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const result = await admin(...args, '--json');
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

beforeAll(async () => {
  db = await createTestDatabase();
  env = { DATABASE_URL: db.url };
});
afterAll(async () => {
  await db.drop();
  removeCompiledCli();
});

test('migrate applies the migrations once, then reports the database up to date', async () => {
  const first = await runTollgate(['migrate'], env);
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/^Applied \d+ migration\(s\): Migration\d+Initial/);
  expect(first.stdout).toContain('Plans written: starter, pro');
  const second = await runTollgate(['migrate'], env);
  expect(second.stdout).toContain('Database is up to date: no pending migration.');
});

describe('from zero to a funded team key', () => {
  let accountId: string;
  let t: TestTollgate;
  afterAll(() => t?.stop());

  test('create-account, add-funds, create-user, create-key; the key works at the gateway', async () => {
    const account = await adminJson<{ id: string; name: string; balance_micro: string; tier: number }>(
      'create-account',
      '--name',
      'Platform team',
    );
    expect(account).toMatchObject({ name: 'Platform team', balance_micro: '0', tier: 1 });
    accountId = account.id;

    const funded = await adminJson('add-funds', '--account', accountId, '--amount-usd', '60');
    expect(funded).toMatchObject({ balance_micro: '60000000', lifetime_top_ups_micro: '60000000', tier: 2 });
    expect(await adminJson('add-funds', '--account', accountId, '--amount-micro', '1500000')).toMatchObject({ balance_micro: '61500000' });

    const user = await admin('create-user', '--account', accountId, '--email', 'Lead@Example.com', '--plan', 'starter');
    expect(user.code).toBe(0);
    expect(user.stdout).toMatch(/EMAIL\s+PLAN/);
    expect(user.stdout).toMatch(/lead@example\.com\s+starter/);
    const password = /Password \(generated, shown once\): (\S+)/.exec(user.stdout)?.[1];
    expect(password).toHaveLength(16);
    const userId = /^(usr_\S+)/m.exec(user.stdout)?.[1];

    const key = await admin('create-key', '--account', accountId, '--name', 'ci pipeline', '--monthly-limit-micro', '20000000');
    expect(key.code).toBe(0);
    const secret = /Secret \(shown once, store it now\): (tgk_\S+)/.exec(key.stdout)?.[1];
    expect(secret).toBeDefined();
    const planKey = await adminJson<{ kind: string; secret: string }>(
      'create-key',
      '--user',
      userId!,
      '--name',
      'lead plan key',
      '--kind',
      'plan',
    );
    expect(planKey.kind).toBe('plan');

    t = await startTestTollgate({ databaseUrl: db.url });
    const models = await call(`${t.url}/v1/models`, { token: secret });
    expect(models.status).toBe(200);
    expect(models.headers.get('x-ratelimit-limit-requests')).toBe('500'); // tier 2
    const chat = await call(`${t.url}/v1/chat/completions`, {
      token: planKey.secret,
      body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(chat.status).toBe(200);
    const signIn = await call(`${t.url}/v1/auth/sessions`, { body: { email: 'lead@example.com', password } });
    expect(signIn.status).toBe(201);
    const keys = await call(`${t.url}/v1/keys`, { token: signIn.body.token });
    expect(keys.body.data.map((k: { name: string }) => k.name)).toEqual(['lead plan key', 'ci pipeline']); // the account's keys, newest first
    const byOperator = await graphql(t.url, 'query($id:ID!){accountById(id:$id){balanceMicro}}', { id: accountId }, ADMIN_TOKEN);
    expect(byOperator.data.accountById.balanceMicro).toBe('61500000');
  });

  test('set-tier pins and unpin-tier returns to the tier of the top-ups', async () => {
    expect(await adminJson('set-tier', '--account', accountId, '--tier', '4')).toMatchObject({ tier: 4, tier_override: 4 });
    expect(await adminJson('unpin-tier', '--account', accountId)).toMatchObject({ tier: 2, tier_override: null });
  });

  test('list-accounts prints balances in a table, or JSON', async () => {
    const table = await admin('list-accounts');
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+BALANCE\s+AVAILABLE\s+LIFETIME TOP-UPS\s+TIER\s+CREATED$/);
    expect(table.stdout).toMatch(new RegExp(`${accountId}\\s+Platform team\\s+\\$61\\.5\\s+\\$61\\.5`));
    const json = await adminJson<{ id: string; balance_micro: string }[]>('list-accounts');
    expect(json.find((a) => a.id === accountId)?.balance_micro).toBe('61500000');
  });

  test('list-plans and list-tiers show the configuration', async () => {
    const plans = await adminJson<{ name: string; monthly_allowance_micro: string }[]>('list-plans');
    expect(plans.map((p) => [p.name, p.monthly_allowance_micro])).toEqual([
      ['pro', '50000000'],
      ['starter', '5000000'],
    ]);
    const tiers = await admin('list-tiers');
    expect(tiers.stdout).toMatch(/^2\s+\$50\s+20\s+500\s+1000000\s+20$/m);
  });
});

test.each([
  [['admin', 'add-funds', '--account', 'acct_nope', '--amount-micro', '5'], 1, "No account 'acct_nope'."],
  [['admin', 'add-funds', '--account', 'acct_nope', '--amount-usd', 'ten'], 2, '--amount-usd must be dollars'],
  [['admin', 'add-funds', '--account', 'acct_nope'], 2, 'give exactly one of --amount-micro or --amount-usd'],
  [['admin', 'create-account'], 2, 'create-account: --name is required'],
  [['admin', 'create-account', '--nmae', 'x'], 2, "admin create-account: Unknown option '--nmae'."],
  [['admin', 'create-account', '--name', 'x', 'extra'], 2, "unexpected argument 'extra'"],
  [['admin', 'create-user', '--account', 'acct_nope', '--email', 'not-an-email'], 1, '--email: Email must be an email address'],
  [['admin', 'create-key', '--name', 'k'], 2, 'give --account or --user'],
  [['admin', 'create-key', '--account', 'acct_nope', '--name', 'k', '--kind', 'gold'], 1, '--kind: Key kind must be one of prepaid, plan'],
  [
    ['admin', 'create-key', '--account', 'acct_nope', '--name', 'k', '--monthly-limit-micro', '5'],
    1,
    '--monthly-limit-micro: Monthly limit must be between $1 and $100,000',
  ],
  [['admin', 'set-tier', '--account', 'acct_nope', '--tier', 'two'], 2, '--tier must be a tier number'],
  [['admin', 'frobnicate'], 2, "admin: unknown command 'frobnicate'"],
  [['launch'], 2, "unknown command 'launch'"],
])('tollgate %j exits %i with one line naming the problem', async (args, code, message) => {
  const result = await runTollgate(args, env);
  expect(result.code).toBe(code);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toContain(`tollgate: `);
  expect(result.stderr).toContain(message);
});

test('a tier outside the configuration and an unknown user are refused by the domain rules', async () => {
  const { id } = await adminJson<{ id: string }>('create-account', '--name', 'Second');
  const tier = await admin('set-tier', '--account', id, '--tier', '9');
  expect(tier).toMatchObject({ code: 1, stderr: 'tollgate: --tier: Tier must be one of 1, 2, 3, 4, 5\n' });
  const key = await admin('create-key', '--user', 'usr_nope', '--name', 'k');
  expect(key).toMatchObject({ code: 1, stderr: "tollgate: No user 'usr_nope'.\n" });
});

test('admin --help lists the commands; no command is a usage error', async () => {
  const help = await runTollgate(['admin', '--help'], env);
  expect(help.code).toBe(0);
  for (const command of ['create-account', 'create-user', 'add-funds', 'set-tier', 'unpin-tier', 'create-key', 'list-accounts'])
    expect(help.stdout).toContain(command);
  expect((await runTollgate(['admin'], env)).code).toBe(2);
});
