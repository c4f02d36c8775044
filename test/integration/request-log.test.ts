import { Client } from 'pg';
import { eventually } from '../support/text';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/** Spend, the request log and the ledger over GraphQL, fed by real requests through the gateway. */
let t: TestTollgate;
let db: Client;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
let keyA: { id: string; secret: string };
let keyB: { id: string; secret: string };
const FUNDS = 10_000_000n;

const chat = (secret: string, content: string, model = 'sandbox/echo') =>
  call(`${t.url}/v1/chat/completions`, { token: secret, body: { model, messages: [{ role: 'user', content }] } });

beforeAll(async () => {
  t = await startTestTollgate();
  db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  owner = await provisionAccount(t.url, { fundsMicro: FUNDS.toString() });
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: owner.accountId }, ADMIN_TOKEN);
  keyA = await createKey(t.url, owner.sessionToken, { name: 'alpha' });
  keyB = await createKey(t.url, owner.sessionToken, { name: 'beta' });
  for (const content of ['one', 'two', 'three']) expect((await chat(keyA.secret, content)).status).toBe(200);
  expect((await chat(keyB.secret, 'four')).status).toBe(200);
  expect((await chat(keyB.secret, '[sandbox:fail] five')).status).toBe(502);
  // Settlements are committed moments after each answer.
  expect(
    await eventually(
      async () =>
        Number((await db.query('select count(*) from usage_records where account_id = $1', [owner.accountId])).rows[0].count) === 5,
    ),
  ).toBe(true);
});
afterAll(async () => {
  await db?.end();
  await t?.stop();
});

const today = () => new Date().toISOString().slice(0, 10);
const FIGURES = 'costMicro requests failedRequests inputTokens outputTokens averageLatencyMs';
const SPEND = `query($g:SpendGrouping!,$from:String,$to:String,$keyId:ID,$model:String){spend(groupBy:$g,from:$from,to:$to,keyId:$keyId,model:$model){from to timeZone groupBy total{${FIGURES}} groups{day model keyId keyName ${FIGURES}}}}`;
const LOG =
  'query($first:Int,$after:String,$filter:RequestLogFilter){requestLog(first:$first,after:$after,filter:$filter){data{id keyId keyName requestId model status costMicro inputTokens outputTokens latencyMs createdAt} firstId lastId hasMore}}';

async function ledgerCharges(accountId: string): Promise<bigint> {
  const { rows } = await db.query(
    `select coalesce(-sum(amount_micro), 0)::text as charged from ledger_entries where account_id = $1 and kind = 'charge'`,
    [accountId],
  );
  return BigInt(rows[0].charged);
}

test("spend by day: every UTC day of the default 30 days, zero-filled, today holding every request; the total is the ledger's charges", async () => {
  const answer = await graphql(t.url, SPEND, { g: 'day' }, owner.sessionToken);
  expect(answer.errors).toBeUndefined();
  const report = answer.data.spend;
  expect(report).toMatchObject({ to: today(), timeZone: 'UTC', groupBy: 'day' });
  expect(report.groups).toHaveLength(30);
  expect(report.groups[0].day).toBe(report.from);
  expect(report.groups.at(-1)).toMatchObject({ day: today(), requests: 5, failedRequests: 1 });
  for (const day of report.groups.slice(0, -1)) expect(day).toMatchObject({ costMicro: '0', requests: 0 });
  expect(report.total.requests).toBe(5);
  expect(BigInt(report.total.costMicro)).toBe(await ledgerCharges(owner.accountId));
  expect(BigInt(report.total.costMicro)).toBeGreaterThan(0n);
  expect(report.total.inputTokens).toBeGreaterThan(0);
});

test('spend by key names each key, highest cost first; by model; filtered by a key', async () => {
  const byKey = (await graphql(t.url, SPEND, { g: 'key' }, owner.sessionToken)).data.spend;
  expect(byKey.groups.map((g: { keyName: string }) => g.keyName)).toEqual(['alpha', 'beta']);
  expect(byKey.groups.map((g: { keyId: string; requests: number }) => [g.keyId, g.requests])).toEqual([
    [keyA.id, 3],
    [keyB.id, 2],
  ]);
  const sum = byKey.groups.reduce((s: bigint, g: { costMicro: string }) => s + BigInt(g.costMicro), 0n);
  expect(sum.toString()).toBe(byKey.total.costMicro);
  const byModel = (await graphql(t.url, SPEND, { g: 'model' }, owner.sessionToken)).data.spend;
  expect(byModel.groups).toEqual([expect.objectContaining({ model: 'sandbox/echo', requests: 5, costMicro: byKey.total.costMicro })]);
  const onlyB = (await graphql(t.url, SPEND, { g: 'model', keyId: keyB.id }, owner.sessionToken)).data.spend;
  expect(onlyB.total).toMatchObject({ requests: 2, failedRequests: 1, costMicro: byKey.groups[1].costMicro });
});

test('spend refuses a bad period naming the field', async () => {
  const cases: [Record<string, unknown>, RegExp, string][] = [
    [{ from: '2026-02-30' }, /^The first day must be a UTC day written as YYYY-MM-DD/, 'from'],
    [{ to: 'yesterday' }, /^The last day must be a UTC day/, 'to'],
    [{ from: '2026-05-02', to: '2026-05-01' }, /first day must not be after the last day/, 'from'],
    [{ from: '2020-01-01', to: '2026-01-01' }, /at most 400/, 'from'],
  ];
  for (const [vars, message, field] of cases) {
    const answer = await graphql(t.url, SPEND, { g: 'day', ...vars }, owner.sessionToken);
    expect(answer.errors?.[0]).toMatchObject({
      message: expect.stringMatching(message),
      extensions: { code: 'bad_request', status: 400, details: { field } },
    });
  }
  const other = await provisionAccount(t.url, { fundsMicro: '1000000', email: 'other-spender@example.com' });
  const empty = (await graphql(t.url, SPEND, { g: 'key' }, other.sessionToken)).data.spend;
  expect(empty).toMatchObject({ groups: [], total: { costMicro: '0', requests: 0 } });
});

test('the request log: newest first, filtered by key, model and status, paginated by keyset, with a detail read', async () => {
  const all = (await graphql(t.url, LOG, {}, owner.sessionToken)).data.requestLog;
  expect(all.data.map((r: { status: string }) => r.status)).toEqual(['failed', 'ok', 'ok', 'ok', 'ok']);
  expect(all.data[0]).toMatchObject({ keyId: keyB.id, keyName: 'beta', costMicro: '0', model: 'sandbox/echo' });
  expect(all.data[0].requestId).toMatch(/\S/);
  const failed = (await graphql(t.url, LOG, { filter: { status: 'failed' } }, owner.sessionToken)).data.requestLog.data;
  expect(failed.map((r: { id: string }) => r.id)).toEqual([all.data[0].id]);
  expect((await graphql(t.url, LOG, { filter: { keyId: keyA.id, status: 'ok' } }, owner.sessionToken)).data.requestLog.data).toHaveLength(
    3,
  );
  expect((await graphql(t.url, LOG, { filter: { model: 'sandbox/other' } }, owner.sessionToken)).data.requestLog.data).toEqual([]);
  const pages: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page: { data: { id: string }[]; lastId: string; hasMore: boolean } = (
      await graphql(t.url, LOG, { first: 2, after }, owner.sessionToken)
    ).data.requestLog;
    pages.push(...page.data.map((r) => r.id));
    if (!page.hasMore) break;
    after = page.lastId;
  }
  expect(pages).toEqual(all.data.map((r: { id: string }) => r.id));

  const DETAIL = 'query($id:ID,$r:String){requestLogEntry(id:$id,requestId:$r){id requestId status costMicro}}';
  const byId = await graphql(t.url, DETAIL, { id: all.data[1].id }, owner.sessionToken);
  expect(byId.data.requestLogEntry).toMatchObject({ id: all.data[1].id, costMicro: all.data[1].costMicro });
  const byRequest = await graphql(t.url, DETAIL, { r: all.data[1].requestId }, owner.sessionToken);
  expect(byRequest.data.requestLogEntry.id).toBe(all.data[1].id);
  expect((await graphql(t.url, DETAIL, { id: 'use_00000000000000000000000000' }, owner.sessionToken)).data.requestLogEntry).toBeNull();
  expect((await graphql(t.url, DETAIL, { id: 'nonsense' }, owner.sessionToken)).data.requestLogEntry).toBeNull();
  expect((await graphql(t.url, DETAIL, {}, owner.sessionToken)).errors?.[0].message).toMatch(/exactly one of id and requestId/);
  // Another account sees none of it.
  const other = await provisionAccount(t.url, { fundsMicro: '1000000', email: 'other-reader@example.com' });
  expect((await graphql(t.url, DETAIL, { id: all.data[1].id }, other.sessionToken)).data.requestLogEntry).toBeNull();
  expect((await graphql(t.url, LOG, {}, other.sessionToken)).data.requestLog.data).toEqual([]);
});

test('the request log refuses bad filters and cursors naming the field', async () => {
  const cases: [Record<string, unknown>, RegExp, string][] = [
    [{ filter: { status: 'weird' } }, /^filter\.status must be one of ok, partial, failed/, 'filter.status'],
    [{ filter: { from: 'soon' } }, /^filter\.from must be an ISO-8601 timestamp/, 'filter.from'],
    [{ after: 'use_nope' }, /^The page cursor must be the id of a usage record/, 'after'],
    [{ first: 0 }, /^Page size must be a whole number from 1 to 100/, 'first'],
    [{ filter: { keyId: 'key_00000000000000000000000000' } }, /^No key 'key_0+' in this account/, 'keyId'],
  ];
  for (const [vars, message, field] of cases) {
    const answer = await graphql(t.url, LOG, vars, owner.sessionToken);
    expect(answer.errors?.[0].message).toMatch(message);
    expect(answer.errors?.[0]).toMatchObject({ extensions: { details: { field } } });
  }
});

test('the ledger: the top-up and each charge, newest first, paginated, filtered by kind', async () => {
  const LEDGER =
    'query($first:Int,$after:String,$kind:String){ledger(first:$first,after:$after,kind:$kind){data{id kind amountMicro keyId note createdAt} lastId hasMore}}';
  const all = (await graphql(t.url, LEDGER, {}, owner.sessionToken)).data.ledger;
  expect(all.data.map((e: { kind: string }) => e.kind)).toEqual(['charge', 'charge', 'charge', 'charge', 'top_up']);
  expect(all.data.at(-1).amountMicro).toBe(FUNDS.toString());
  const sum = all.data.reduce((s: bigint, e: { amountMicro: string }) => s + BigInt(e.amountMicro), 0n);
  const account = (await graphql(t.url, '{ account { balanceMicro } }', {}, owner.sessionToken)).data.account;
  expect(sum.toString()).toBe(account.balanceMicro);
  const first = (await graphql(t.url, LEDGER, { first: 3 }, owner.sessionToken)).data.ledger;
  const rest = (await graphql(t.url, LEDGER, { first: 3, after: first.lastId }, owner.sessionToken)).data.ledger;
  expect([...first.data, ...rest.data]).toEqual(all.data);
  expect(rest.hasMore).toBe(false);
  expect((await graphql(t.url, LEDGER, { kind: 'top_up' }, owner.sessionToken)).data.ledger.data).toHaveLength(1);
  expect((await graphql(t.url, LEDGER, { kind: 'gift' }, owner.sessionToken)).errors?.[0].message).toMatch(/^kind must be one of/);
});

/** RFC 4180 lines → cells (quoted cells may hold commas and doubled quotes; no line breaks in ours). */
const csvCells = (line: string): string[] =>
  [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)]
    .filter((m) => m.index! < line.length || m[1] !== '')
    .map((m) => (m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!));

test('CSV export: every request of the filter as one line, newest first, the same figures as the log; refusals are envelopes', async () => {
  const all = (await graphql(t.url, LOG, {}, owner.sessionToken)).data.requestLog.data;
  const res = await fetch(`${t.url}/v1/usage/requests.csv`, { headers: { authorization: `Bearer ${owner.sessionToken}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="requests.csv"/);
  const lines = (await res.text()).split('\r\n').filter((l) => l !== '');
  const header = csvCells(lines[0]!);
  expect(header.slice(0, 3)).toEqual(['created_at', 'id', 'request_id']);
  const rows = lines.slice(1).map((l) => Object.fromEntries(csvCells(l).map((v, i) => [header[i], v])));
  expect(rows.map((r) => r.id)).toEqual(all.map((r: { id: string }) => r.id));
  expect(rows[0]).toMatchObject({ key_name: 'beta', status: 'failed', cost_micro: '0', cost_usd: '0' });
  expect(rows[1]!.cost_micro).toBe(all[1].costMicro);
  expect(Number(rows[1]!.cost_usd) * 1e6).toBeCloseTo(Number(all[1].costMicro), 3);

  const onlyA = await fetch(`${t.url}/v1/usage/requests.csv?key_id=${keyA.id}&status=ok`, {
    headers: { authorization: `Bearer ${owner.sessionToken}` },
  });
  expect((await onlyA.text()).trim().split('\r\n')).toHaveLength(4);
  const none = await fetch(`${t.url}/v1/usage/requests.csv?from=${Math.floor(Date.now() / 1000) + 3600}`, {
    headers: { authorization: `Bearer ${owner.sessionToken}` },
  });
  expect((await none.text()).trim().split('\r\n')).toHaveLength(1);

  for (const [query, status, message] of [
    ['status=weird', 400, /^status must be one of/],
    ['from=yesterday', 400, /^from must be a Unix timestamp/],
    ['key_id=key_00000000000000000000000000', 404, /^No key/],
  ] as const) {
    const refused = await call(`${t.url}/v1/usage/requests.csv?${query}`, { token: owner.sessionToken });
    expect(refused.status).toBe(status);
    expect(refused.body.error.message).toMatch(message);
    expect(refused.body.error.details.field).toBe(query.split('=')[0]);
  }
  expect((await call(`${t.url}/v1/usage/requests.csv`, { token: keyA.secret })).status).toBe(403);
  expect((await call(`${t.url}/v1/usage/requests.csv`)).status).toBe(401);
});

test('a key-formula cell is quoted as text in the CSV', async () => {
  const odd = await createKey(t.url, owner.sessionToken, { name: '=HYPERLINK("x"),y' });
  expect((await chat(odd.secret, 'six')).status).toBe(200);
  expect(
    await eventually(
      async () => (await graphql(t.url, LOG, { filter: { keyId: odd.id } }, owner.sessionToken)).data.requestLog.data.length === 1,
    ),
  ).toBe(true);
  const text = await (
    await fetch(`${t.url}/v1/usage/requests.csv?key_id=${odd.id}`, { headers: { authorization: `Bearer ${owner.sessionToken}` } })
  ).text();
  expect(text).toContain(`,"'=HYPERLINK(""x""),y",`);
});

test("GET /v1/key: the key's own month spend, limit and what is left, and the account balance, with the key alone", async () => {
  const limited = await createKey(t.url, owner.sessionToken, { name: 'limited', monthly_spend_limit_micro: '2000000' });
  expect((await chat(limited.secret, 'seven')).status).toBe(200);
  expect(await eventually(async () => (await call(`${t.url}/v1/key`, { token: limited.secret })).body.month_reserved_micro === '0')).toBe(
    true,
  );
  const status = await call(`${t.url}/v1/key`, { token: limited.secret });
  expect(status.status).toBe(200);
  const spent = BigInt(status.body.month_spent_micro);
  expect(spent).toBeGreaterThan(0n);
  expect(status.body).toMatchObject({
    object: 'key',
    id: limited.id,
    name: 'limited',
    kind: 'prepaid',
    monthly_spend_limit_micro: '2000000',
    month_settled_micro: spent.toString(),
    month_remaining_micro: (2_000_000n - spent).toString(),
    month: new Date().toISOString().slice(0, 7),
  });
  const account = (await graphql(t.url, '{ account { balanceMicro reservedMicro availableMicro } }', {}, owner.sessionToken)).data.account;
  expect(status.body.account).toEqual({
    balance_micro: account.balanceMicro,
    reserved_micro: account.reservedMicro,
    available_micro: account.availableMicro,
  });
  // Anthropic's clients send the key as x-api-key.
  expect((await call(`${t.url}/v1/key`, { headers: { 'x-api-key': limited.secret } })).body.id).toBe(limited.id);
  expect((await call(`${t.url}/v1/key`, { token: keyB.secret })).body).toMatchObject({
    id: keyB.id,
    monthly_spend_limit_micro: null,
    month_remaining_micro: null,
  });
  expect((await call(`${t.url}/v1/key`, { token: 'tg-nonsense' })).status).toBe(401);
  expect((await call(`${t.url}/v1/key`, { token: owner.sessionToken })).status).toBe(401);
});
