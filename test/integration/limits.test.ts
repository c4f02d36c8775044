import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, call, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

const PLANS = '{ plans { name models monthlyAllowanceMicro requestsPerMinute } }';
const TIERS = '{ tiers { tier lifetimeTopUpsFromMicro requestsPerSecond requestsPerMinute tokensPerMinute concurrentRequests } }';
const CREATE_KEY =
  'mutation($i: CreateAccountKeyInput!) { createAccountKey(input: $i) { secret key { id name kind prefix monthlySpendLimitMicro } } }';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function limitsFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-limits-'));
  dirs.push(dir);
  const file = join(dir, 'limits.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('built-in limits', () => {
  let t: TestTollgate;
  beforeAll(async () => {
    t = await startTestTollgate();
  });
  afterAll(() => t.stop());

  test('plans and tiers list the defaults', async () => {
    const plans = await graphql(t.url, PLANS, {}, ADMIN_TOKEN);
    expect(plans.data.plans.map((p: { name: string }) => p.name)).toEqual(['pro', 'starter']);
    expect(plans.data.plans[1]).toEqual({
      name: 'starter',
      models: ['sandbox/echo', 'sandbox/reasoner', 'openai/gpt-4o-mini', 'anthropic/claude-haiku-4-5', 'google/gemini-2.5-flash'],
      monthlyAllowanceMicro: '5000000',
      requestsPerMinute: 20,
    });
    const tiers = await graphql(t.url, TIERS, {}, ADMIN_TOKEN);
    expect(tiers.data.tiers).toHaveLength(5);
    expect(tiers.data.tiers[1]).toEqual({
      tier: 2,
      lifetimeTopUpsFromMicro: '50000000',
      requestsPerSecond: 20,
      requestsPerMinute: 500,
      tokensPerMinute: 1000000,
      concurrentRequests: 20,
    });
  });

  test('plans, tiers and createAccountKey are operator-only', async () => {
    const { sessionToken, accountId } = await provisionAccount(t.url);
    for (const query of [PLANS, TIERS]) {
      expect((await graphql(t.url, query, {}, sessionToken)).errors?.[0].extensions.code).toBe('invalid_token');
      expect((await graphql(t.url, query)).errors?.[0].extensions.code).toBe('invalid_token');
    }
    const bySession = await graphql(t.url, CREATE_KEY, { i: { accountId, name: 'mine' } }, sessionToken);
    expect(bySession.errors?.[0].extensions.code).toBe('invalid_token');
    expect(bySession.data).toBeNull();
  });

  test('the operator creates a key for an account with no session; a plan key needs a user with a plan', async () => {
    const { accountId, userId } = await provisionAccount(t.url, { fundsMicro: '5000000', plan: null });
    const created = await graphql(
      t.url,
      CREATE_KEY,
      { i: { accountId, name: 'team key', monthlySpendLimitMicro: '2000000' } },
      ADMIN_TOKEN,
    );
    expect(created.errors).toBeUndefined();
    expect(created.data.createAccountKey.key).toMatchObject({ name: 'team key', kind: 'prepaid', monthlySpendLimitMicro: '2000000' });
    const models = await call(`${t.url}/v1/models`, { token: created.data.createAccountKey.secret });
    expect(models.status).toBe(200);

    const planKey = await graphql(t.url, CREATE_KEY, { i: { accountId, userId, name: 'p', kind: 'plan' } }, ADMIN_TOKEN);
    expect(planKey.errors?.[0]).toMatchObject({ extensions: { code: 'bad_request' } });
    expect(planKey.errors?.[0].extensions.details).toEqual({ field: 'input.kind' });
    const noAccount = await graphql(t.url, CREATE_KEY, { i: { accountId: 'acct_missing', name: 'x' } }, ADMIN_TOKEN);
    expect(noAccount.errors?.[0].extensions.code).toBe('not_found');
    const other = await provisionAccount(t.url);
    const foreignUser = await graphql(t.url, CREATE_KEY, { i: { accountId, userId: other.userId, name: 'x' } }, ADMIN_TOKEN);
    expect(foreignUser.errors?.[0].extensions.code).toBe('not_found');
  });
});

describe('a limits file', () => {
  const tiers = [
    {
      tier: 1,
      lifetime_top_ups_from_micro: '0',
      requests_per_second: 3,
      requests_per_minute: 7,
      tokens_per_minute: 1000,
      concurrent_requests: 2,
    },
    {
      tier: 2,
      lifetime_top_ups_from_micro: '10000000',
      requests_per_second: 4,
      requests_per_minute: 11,
      tokens_per_minute: 2000,
      concurrent_requests: 3,
    },
  ];
  const team = { name: 'team', models: ['sandbox/echo'], monthly_allowance_micro: '1000000', requests_per_minute: 5 };
  let t: TestTollgate;
  beforeAll(async () => {
    t = await startTestTollgate({ env: { TOLLGATE_LIMITS_FILE: limitsFile({ tiers, plans: [team] }) } });
  });
  afterAll(() => t.stop());

  test('its tiers drive the tier of an account, its limits and the rate-limit headers', async () => {
    const listed = await graphql(t.url, TIERS, {}, ADMIN_TOKEN);
    expect(listed.data.tiers.map((x: { requestsPerMinute: number }) => x.requestsPerMinute)).toEqual([7, 11]);
    const { accountId } = await provisionAccount(t.url, { fundsMicro: '9000000' });
    const key = await graphql(t.url, CREATE_KEY, { i: { accountId, name: 'k' } }, ADMIN_TOKEN);
    const first = await call(`${t.url}/v1/models`, { token: key.data.createAccountKey.secret });
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('7');
    const funded = await graphql(
      t.url,
      'mutation($a:ID!){addFunds(input:{accountId:$a,amountMicro:"1000000"}){tier tierLimits{requestsPerMinute concurrentRequests}}}',
      { a: accountId },
      ADMIN_TOKEN,
    );
    expect(funded.data.addFunds).toEqual({ tier: 2, tierLimits: { requestsPerMinute: 11, concurrentRequests: 3 } });
    const second = await call(`${t.url}/v1/models`, { token: key.data.createAccountKey.secret });
    expect(second.headers.get('x-ratelimit-limit-requests')).toBe('11');
    const pin = await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:3}){tier}}', { a: accountId }, ADMIN_TOKEN);
    expect(pin.errors?.[0].message).toBe('Tier must be one of 1, 2');
  });

  test('its plans are written at start (updated when the file changes) and users can be put on them', async () => {
    const plans = await graphql(t.url, PLANS, {}, ADMIN_TOKEN);
    // The defaults written by earlier starts would stay; this database started with the file.
    expect(plans.data.plans).toEqual([{ name: 'team', models: ['sandbox/echo'], monthlyAllowanceMicro: '1000000', requestsPerMinute: 5 }]);
    const { userId } = await provisionAccount(t.url, { plan: 'team' });
    expect(userId).toMatch(/^usr_/);

    const again = await startTestTollgate({
      databaseUrl: t.databaseUrl,
      env: {
        TOLLGATE_LIMITS_FILE: limitsFile({
          plans: [
            { ...team, requests_per_minute: 50 },
            { ...team, name: 'solo' },
          ],
        }),
      },
    });
    try {
      const updated = await graphql(again.url, PLANS, {}, ADMIN_TOKEN);
      expect(updated.data.plans.map((p: { name: string; requestsPerMinute: number }) => [p.name, p.requestsPerMinute])).toEqual([
        ['solo', 5],
        ['team', 50],
      ]);
    } finally {
      await again.stop(); // the database is the first instance's: stop() leaves it
    }
  });
});
