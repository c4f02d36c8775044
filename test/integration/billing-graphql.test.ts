import { eventually } from '../support/text';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/** The billing views admin UIs read over GraphQL, fed by real text requests through the gateway. */
let t: TestTollgate;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
let keyA: { id: string; secret: string };
let keyB: { id: string; secret: string };

const chat = (secret: string, content: string, extra: Record<string, unknown> = {}) =>
  call(`${t.url}/v1/chat/completions`, { token: secret, body: { model: 'sandbox/echo', messages: [{ role: 'user', content }], ...extra } });

beforeAll(async () => {
  t = await startTestTollgate();
  owner = await provisionAccount(t.url, { fundsMicro: '10000000' });
  // Tier 5: these tests send requests faster than tier 1's 5 per second.
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: owner.accountId }, ADMIN_TOKEN);
  keyA = await createKey(t.url, owner.sessionToken, { name: 'a', monthly_spend_limit_micro: '5000000' });
  keyB = await createKey(t.url, owner.sessionToken, { name: 'b' });
  for (const content of ['one', 'two', 'three']) expect((await chat(keyA.secret, content)).status).toBe(200);
  expect((await chat(keyB.secret, 'four')).status).toBe(200);
  expect((await chat(keyB.secret, '[sandbox:fail] five')).status).toBe(502);
});
afterAll(async () => t?.stop());

/** Budget leases (billing/leases.ts) keep reserving for a moment after the last request; then they are given back. */
const leasesGivenBack = () =>
  eventually(
    async () => (await graphql(t.url, '{ account { reservedMicro } }', {}, owner.sessionToken)).data.account.reservedMicro === '0',
  );

const USAGE =
  'query($first:Int,$after:String,$keyId:ID,$from:String,$to:String){usageRecords(first:$first,after:$after,keyId:$keyId,from:$from,to:$to){data{id keyId model inputTokens outputTokens costMicro status} firstId lastId hasMore}}';

test('usage records: newest first, filtered by key, paginated, costs matching the ledger', async () => {
  // Settlements are committed moments after each answer (TOLLGATE_SETTLEMENT=after-answer).
  expect(await eventually(async () => (await graphql(t.url, USAGE, {}, owner.sessionToken)).data.usageRecords.data.length === 5)).toBe(
    true,
  );
  const all = await graphql(t.url, USAGE, {}, owner.sessionToken);
  expect(all.errors).toBeUndefined();
  const records = all.data.usageRecords.data;
  expect(records.map((r: { status: string }) => r.status)).toEqual(['failed', 'ok', 'ok', 'ok', 'ok']);
  expect(records[0]).toMatchObject({ keyId: keyB.id, costMicro: '0', model: 'sandbox/echo' });
  for (const record of records.slice(1)) expect(BigInt(record.costMicro)).toBeGreaterThan(0n);
  const charged = records.reduce((sum: bigint, r: { costMicro: string }) => sum + BigInt(r.costMicro), 0n);
  expect(await leasesGivenBack()).toBe(true);
  const account = await graphql(t.url, '{ account { balanceMicro reservedMicro } }', {}, owner.sessionToken);
  expect(BigInt(account.data.account.balanceMicro)).toBe(10_000_000n - charged);
  expect(account.data.account.reservedMicro).toBe('0');

  const onlyA = await graphql(t.url, USAGE, { keyId: keyA.id }, owner.sessionToken);
  expect(onlyA.data.usageRecords.data).toHaveLength(3);
  const page1 = await graphql(t.url, USAGE, { first: 2 }, owner.sessionToken);
  expect(page1.data.usageRecords.hasMore).toBe(true);
  const page2 = await graphql(t.url, USAGE, { first: 2, after: page1.data.usageRecords.lastId }, owner.sessionToken);
  const page3 = await graphql(t.url, USAGE, { first: 2, after: page2.data.usageRecords.lastId }, owner.sessionToken);
  const paged = [...page1.data.usageRecords.data, ...page2.data.usageRecords.data, ...page3.data.usageRecords.data].map(
    (r: { id: string }) => r.id,
  );
  expect(paged).toEqual(records.map((r: { id: string }) => r.id));
  expect(page3.data.usageRecords.hasMore).toBe(false);

  const future = await graphql(t.url, USAGE, { from: new Date(Date.now() + 60_000).toISOString() }, owner.sessionToken);
  expect(future.data.usageRecords.data).toEqual([]);
  const past = await graphql(t.url, USAGE, { to: new Date(Date.now() - 3_600_000).toISOString() }, owner.sessionToken);
  expect(past.data.usageRecords.data).toEqual([]);
});

test('key month spend shows settled charges against the limit, and keys show it too', async () => {
  expect(await leasesGivenBack()).toBe(true);
  const spend = await graphql(
    t.url,
    'query($k:ID!){keyMonthSpend(keyId:$k){keyId limitMicro settledMicro reservedMicro spentMicro remainingMicro resetsAt}}',
    { k: keyA.id },
    owner.sessionToken,
  );
  expect(spend.errors).toBeUndefined();
  const view = spend.data.keyMonthSpend;
  const usage = await graphql(t.url, USAGE, { keyId: keyA.id }, owner.sessionToken);
  const settled = usage.data.usageRecords.data.reduce((sum: bigint, r: { costMicro: string }) => sum + BigInt(r.costMicro), 0n);
  expect(view).toMatchObject({
    keyId: keyA.id,
    limitMicro: '5000000',
    settledMicro: settled.toString(),
    reservedMicro: '0',
    spentMicro: settled.toString(),
  });
  expect(view.remainingMicro).toBe((5_000_000n - settled).toString());
  const now = new Date();
  expect(view.resetsAt).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());
  const key = await call(`${t.url}/v1/keys/${keyA.id}`, { token: owner.sessionToken });
  expect(key.body.month_spent_micro).toBe(settled.toString());
});

test('the budget lease covering a stream in flight is listed while it runs and given back after it', async () => {
  expect(await leasesGivenBack()).toBe(true);
  const pending = chat(keyB.secret, '[sandbox:delay=150] a slow answer of several words', { stream: true });
  let holds: { keyId: string; purpose: string; amountMicro: string }[] = [];
  for (let i = 0; i < 50 && holds.length === 0; i++) {
    holds = (await graphql(t.url, '{ holds { keyId purpose model amountMicro planBilled } }', {}, owner.sessionToken)).data.holds;
    if (holds.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  expect(holds).toHaveLength(1);
  expect(holds[0]).toMatchObject({ keyId: keyB.id, purpose: 'lease', planBilled: false });
  expect(BigInt(holds[0].amountMicro)).toBeGreaterThan(0n);
  expect((await pending).status).toBe(200);
  expect(await eventually(async () => (await graphql(t.url, '{ holds { id } }', {}, owner.sessionToken)).data.holds.length === 0)).toBe(
    true,
  );
});

test('automatic top-up settings: set, read, validated, turned off', async () => {
  const set = await graphql(
    t.url,
    'mutation{setAutoTopUp(input:{thresholdMicro:"2000000", amountMicro:"10000000"}){enabled thresholdMicro amountMicro}}',
    {},
    owner.sessionToken,
  );
  expect(set.data.setAutoTopUp).toEqual({ enabled: true, thresholdMicro: '2000000', amountMicro: '10000000' });
  expect((await graphql(t.url, '{ autoTopUp { enabled amountMicro } }', {}, owner.sessionToken)).data.autoTopUp).toEqual({
    enabled: true,
    amountMicro: '10000000',
  });
  const bad = await graphql(
    t.url,
    'mutation{setAutoTopUp(input:{thresholdMicro:"2000000", amountMicro:"5"}){enabled}}',
    {},
    owner.sessionToken,
  );
  expect(bad.errors?.[0].extensions.code).toBe('bad_request');
  expect(bad.errors?.[0]).toMatchObject({
    message: 'Top-up amount must be between $1 and $100,000',
    extensions: { details: { field: 'input.amountMicro' } },
  });
  const off = await graphql(
    t.url,
    'mutation{setAutoTopUp(input:{thresholdMicro:null, amountMicro:null}){enabled}}',
    {},
    owner.sessionToken,
  );
  expect(off.data.setAutoTopUp.enabled).toBe(false);
});

test('billing views are session-only and scoped to the account', async () => {
  const withKey = await graphql(t.url, '{ holds { id } }', {}, keyA.secret);
  expect(withKey.errors?.[0].extensions.code).toBe('session_required');
  const other = await provisionAccount(t.url);
  expect((await graphql(t.url, USAGE, {}, other.sessionToken)).data.usageRecords.data).toEqual([]);
  const foreign = await graphql(t.url, 'query($k:ID!){keyMonthSpend(keyId:$k){spentMicro}}', { k: keyA.id }, other.sessionToken);
  expect(foreign.errors?.[0].extensions.code).toBe('not_found');
});
