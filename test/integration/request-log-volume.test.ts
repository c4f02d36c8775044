import { Client } from 'pg';
import { pgRequestLogPartitions } from '../../src/infra/pg-request-log-partitions';
import { seedRequests } from '../support/request-log-seed';
import { createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * An account with 100,000 requests over 90 days, seeded in one SQL statement (through the same
 * trigger that keeps the daily aggregates on every settlement): spend and the request log stay
 * exact, and equal to the ledger. How fast they answer is measured by `npm run bench:dashboard`
 * (docs/performance-log.md), never asserted here.
 */
const RECORDS = 100_000;
let t: TestTollgate;
let db: Client;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
const keys: { id: string; secret: string }[] = [];

beforeAll(async () => {
  t = await startTestTollgate();
  db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  owner = await provisionAccount(t.url, { fundsMicro: '1000000000000' });
  for (const name of ['k0', 'k1', 'k2']) keys.push(await createKey(t.url, owner.sessionToken, { name }));
  await seedRequests(
    db,
    owner.accountId,
    keys.map((k) => k.id),
    RECORDS,
    new Date(),
  );
}, 120_000);
afterAll(async () => {
  await db?.end();
  await t?.stop();
});

const SPEND =
  'query($g:SpendGrouping!,$from:String,$to:String){spend(groupBy:$g,from:$from,to:$to){from to groups{day keyId model costMicro requests failedRequests} total{costMicro requests failedRequests outputTokens}}}';
const day = (at: Date) => at.toISOString().slice(0, 10);

test('spend over 91 days equals the ledger exactly: in total, per key and per day', async () => {
  const now = new Date();
  const from = day(new Date(now.getTime() - 90 * 86_400_000));
  const byDay = await graphql(t.url, SPEND, { g: 'day', from, to: day(now) }, owner.sessionToken);
  expect(byDay.errors).toBeUndefined();
  const report = byDay.data.spend;
  expect(report.groups).toHaveLength(91);
  expect(report.total.requests).toBe(RECORDS);
  expect(report.total.failedRequests).toBe(Math.floor(RECORDS / 97));
  const ledger = await db.query(
    `select coalesce(-sum(amount_micro), 0)::text as total from ledger_entries where account_id = $1 and kind = 'charge'`,
    [owner.accountId],
  );
  expect(report.total.costMicro).toBe(ledger.rows[0].total);
  const perDay = await db.query(
    `select (created_at at time zone 'UTC')::date::text as day, (-sum(amount_micro))::text as cost from ledger_entries where account_id = $1 and kind = 'charge' group by 1`,
    [owner.accountId],
  );
  const ledgerByDay = new Map(perDay.rows.map((r) => [r.day, r.cost]));
  for (const group of report.groups) expect([group.day, group.costMicro]).toEqual([group.day, ledgerByDay.get(group.day) ?? '0']);

  const byKey = (await graphql(t.url, SPEND, { g: 'key', from, to: day(now) }, owner.sessionToken)).data.spend;
  const perKey = await db.query(
    `select key_id, (-sum(amount_micro))::text as cost from ledger_entries where account_id = $1 and kind = 'charge' group by 1`,
    [owner.accountId],
  );
  expect(new Map(byKey.groups.map((g: { keyId: string; costMicro: string }) => [g.keyId, g.costMicro]))).toEqual(
    new Map(perKey.rows.map((r) => [r.key_id, r.cost])),
  );
  const account = (await graphql(t.url, '{ account { balanceMicro } }', {}, owner.sessionToken)).data.account;
  expect(BigInt(account.balanceMicro)).toBe(1_000_000_000_000n - BigInt(report.total.costMicro));
}, 60_000);

test('the request log pages through 100,000 requests by keyset: first, deep and filtered pages', async () => {
  const LOG =
    'query($first:Int,$after:String,$filter:RequestLogFilter){requestLog(first:$first,after:$after,filter:$filter){data{id createdAt status} lastId hasMore}}';
  const first = (await graphql(t.url, LOG, { first: 100 }, owner.sessionToken)).data.requestLog;
  expect(first.data).toHaveLength(100);
  expect(first.data[0].id).toBe(`use_${'1'.padStart(26, '0')}`);
  const times = first.data.map((r: { createdAt: string }) => Date.parse(r.createdAt));
  expect([...times].sort((a, b) => b - a)).toEqual(times);
  // A cursor deep in the log answers the rows right after it.
  const deepId = `use_${'90000'.padStart(26, '0')}`;
  const deep = (await graphql(t.url, LOG, { first: 3, after: deepId }, owner.sessionToken)).data.requestLog;
  expect(deep.data.map((r: { id: string }) => r.id)).toEqual([90001, 90002, 90003].map((i) => `use_${String(i).padStart(26, '0')}`));
  const failed = (await graphql(t.url, LOG, { first: 100, filter: { status: 'failed' } }, owner.sessionToken)).data.requestLog;
  expect(failed.data.map((r: { id: string }) => r.id).slice(0, 2)).toEqual([97, 194].map((i) => `use_${String(i).padStart(26, '0')}`));
  expect(failed.data.every((r: { status: string }) => r.status === 'failed')).toBe(true);
}, 60_000);

test('the CSV export streams all 100,000 requests, newest first, each once', async () => {
  const res = await fetch(`${t.url}/v1/usage/requests.csv`, { headers: { authorization: `Bearer ${owner.sessionToken}` } });
  expect(res.status).toBe(200);
  let lines = 0;
  let previous = '';
  let ordered = true;
  let rest = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\r\n');
    rest = parts.pop()!;
    for (const line of parts) {
      lines++;
      if (lines === 1) continue;
      const at = line.slice(0, 24);
      if (previous !== '' && at > previous) ordered = false;
      previous = at;
    }
  }
  expect(rest).toBe('');
  expect(lines).toBe(RECORDS + 1);
  expect(ordered).toBe(true);
}, 180_000);

const partitionRows = async () =>
  (
    await db.query(
      `select c.relname as partition, count(u.*)::int as rows from pg_inherits i join pg_class c on c.oid = i.inhrelid
       left join usage_records u on u.tableoid = c.oid where i.inhparent = 'usage_records'::regclass group by c.relname order by c.relname`,
    )
  ).rows as { partition: string; rows: number }[];

test('upkeep moves rows of months without a partition out of the default one; retention drops whole months, spend stays', async () => {
  const now = new Date();
  const from = day(new Date(now.getTime() - 90 * 86_400_000));
  const before = (await graphql(t.url, SPEND, { g: 'day', from, to: day(now) }, owner.sessionToken)).data.spend;
  // Seeded rows older than this month found no partition of their own (upkeep made this month and the next two).
  expect((await partitionRows()).find((r) => r.partition === 'usage_records_default')!.rows).toBeGreaterThan(0);
  // Through the adapter the gateway's upkeep runs (its own transaction, a lock timeout).
  const made = await pgRequestLogPartitions(t.tollgate.services.orm)(now, null);
  expect(made.length).toBeGreaterThanOrEqual(3);
  expect(made.every((c) => c.action === 'created' && /^usage_records_\d{4}_\d{2}$/.test(c.partition))).toBe(true);
  const after = await partitionRows();
  expect(after.find((r) => r.partition === 'usage_records_default')!.rows).toBe(0);
  expect(after.filter((r) => r.rows > 0).length).toBeGreaterThanOrEqual(4);
  expect(after.reduce((sum, r) => sum + r.rows, 0)).toBe(RECORDS);
  // Moving rows between partitions changes no aggregate.
  expect((await graphql(t.url, SPEND, { g: 'day', from, to: day(now) }, owner.sessionToken)).data.spend).toEqual(before);

  // Keep one whole month besides this one: older months go, as tables.
  const keepFrom = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const dropped = await db.query('select action, partition_name from tollgate_usage_partitions($1, 1)', [now.toISOString()]);
  expect(dropped.rows.length).toBeGreaterThan(0);
  expect(dropped.rows.every((r) => r.action === 'dropped')).toBe(true);
  const oldest = await db.query('select min(created_at) as at from usage_records where account_id = $1', [owner.accountId]);
  expect(new Date(oldest.rows[0].at).getTime()).toBeGreaterThanOrEqual(keepFrom.getTime());
  // The daily aggregates outlive the log: spend over the whole period is unchanged.
  expect((await graphql(t.url, SPEND, { g: 'day', from, to: day(now) }, owner.sessionToken)).data.spend).toEqual(before);
}, 60_000);
