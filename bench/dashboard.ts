/**
 * `npm run bench:dashboard`: how fast the dashboard's reads answer for an account with 100,000
 * requests over 90 days (BENCH_RECORDS to change it), seeded in SQL into a scratch database.
 *
 * For each read: the server time (the domain service, as a resolver calls it: SQL and mapping)
 * and the time of the GraphQL call over HTTP on this machine, median and 95th percentile over
 * BENCH_REPEATS runs (default 30). Reported, never asserted; the figures go to
 * docs/performance-log.md.
 */
import 'reflect-metadata';
import { Client } from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createTollgate } from '../src/server';
import { seedRequests } from '../test/support/request-log-seed';
import { ADMIN_TOKEN, benchDatabase, postJson } from './provision';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 30);

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function timed(repeats: number, run: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  await run(); // warm: plans cached, pages in memory
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

async function main(): Promise<void> {
  const db = await benchDatabase(SERVER_URL);
  const config = loadConfig({ TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent' });
  const tollgate = await createTollgate({ config, databaseUrl: db.url, log: pino({ level: 'silent' }) });
  const port = await tollgate.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    const gqlAdmin = (query: string, variables: Record<string, unknown> = {}) =>
      postJson(`${url}/graphql`, { query, variables }, ADMIN_TOKEN);
    const accountId = (await gqlAdmin('mutation{createAccount(input:{name:"dashboard bench"}){id}}')).data.createAccount.id as string;
    await gqlAdmin('mutation($a:ID!){addFunds(input:{accountId:$a,amountMicro:"900000000000"}){id}}', { a: accountId });
    await gqlAdmin('mutation($a:ID!){createUser(input:{accountId:$a,email:"bench@example.com",password:"bench-password"}){id}}', {
      a: accountId,
    });
    const session = (await postJson(`${url}/v1/auth/sessions`, { email: 'bench@example.com', password: 'bench-password' })).token as string;
    const keyIds: string[] = [];
    for (const name of ['ci', 'web', 'batch']) keyIds.push((await postJson(`${url}/v1/keys`, { name }, session)).id);
    const seedStarted = performance.now();
    await seedRequests(client, accountId, keyIds, RECORDS, new Date());
    await client.query('select * from tollgate_usage_partitions(now(), null)');
    await client.query('analyze usage_records; analyze usage_daily');
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    const usage = tollgate.services.usage;
    const today = new Date().toISOString().slice(0, 10);
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const gql = (query: string, variables: Record<string, unknown> = {}) => postJson(`${url}/graphql`, { query, variables }, session);
    const FIGURES = 'costMicro requests failedRequests inputTokens outputTokens';
    const SPEND = `query($g:SpendGrouping!,$from:String,$to:String){spend(groupBy:$g,from:$from,to:$to){total{${FIGURES}} groups{day model keyId keyName ${FIGURES}}}}`;
    const LOG =
      'query($first:Int,$after:String,$filter:RequestLogFilter){requestLog(first:$first,after:$after,filter:$filter){data{id keyName requestId model status costMicro inputTokens outputTokens latencyMs createdAt} lastId hasMore}}';
    const deep = `use_${String(Math.floor(RECORDS * 0.9)).padStart(26, '0')}`;
    const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      [
        'spend by day, 30 days',
        () => usage.spend(accountId, { groupBy: 'day', from: daysAgo(29), to: today, keyId: null, model: null }),
        () => gql(SPEND, { g: 'day', from: daysAgo(29), to: today }),
      ],
      [
        'spend by day, 90 days',
        () => usage.spend(accountId, { groupBy: 'day', from: daysAgo(90), to: today, keyId: null, model: null }),
        () => gql(SPEND, { g: 'day', from: daysAgo(90), to: today }),
      ],
      [
        'spend by key, 90 days',
        () => usage.spend(accountId, { groupBy: 'key', from: daysAgo(90), to: today, keyId: null, model: null }),
        () => gql(SPEND, { g: 'key', from: daysAgo(90), to: today }),
      ],
      [
        'spend by model, 90 days',
        () => usage.spend(accountId, { groupBy: 'model', from: daysAgo(90), to: today, keyId: null, model: null }),
        () => gql(SPEND, { g: 'model', from: daysAgo(90), to: today }),
      ],
      [
        'request log, first page (50)',
        () => usage.requestLog(accountId, { limit: 50, after: null, keyId: null, from: null, to: null }),
        () => gql(LOG, { first: 50 }),
      ],
      [
        'request log, page at 90%',
        () => usage.requestLog(accountId, { limit: 50, after: deep, keyId: null, from: null, to: null }),
        () => gql(LOG, { first: 50, after: deep }),
      ],
      [
        'request log, failed only (1 in 97)',
        () => usage.requestLog(accountId, { limit: 50, after: null, keyId: null, status: 'failed', from: null, to: null }),
        () => gql(LOG, { first: 50, filter: { status: 'failed' } }),
      ],
      [
        'request log, one key and model',
        () => usage.requestLog(accountId, { limit: 50, after: null, keyId: keyIds[1]!, model: 'sandbox/echo', from: null, to: null }),
        () => gql(LOG, { first: 50, filter: { keyId: keyIds[1], model: 'sandbox/echo' } }),
      ],
    ];
    console.log(
      `dashboard bench: ${RECORDS} requests over 90 days seeded in ${seedSeconds.toFixed(1)} s; ${REPEATS} runs each (busy shared machine)`,
    );
    console.log('read                                   server p50   p95      GraphQL over HTTP p50   p95');
    for (const [name, server, http] of cases) {
      const s = await timed(REPEATS, server);
      const h = await timed(REPEATS, http);
      console.log(
        `${name.padEnd(38)} ${s.p50.toFixed(1).padStart(7)} ms ${s.p95.toFixed(1).padStart(6)} ms   ${h.p50.toFixed(1).padStart(13)} ms ${h.p95.toFixed(1).padStart(6)} ms`,
      );
    }
    const csvStarted = performance.now();
    const rss = process.memoryUsage().rss;
    let bytes = 0;
    let peak = rss;
    const res = await fetch(`${url}/v1/usage/requests.csv`, { headers: { authorization: `Bearer ${session}` } });
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    console.log(
      `CSV export of all ${RECORDS} requests: ${((performance.now() - csvStarted) / 1000).toFixed(1)} s, ${(bytes / 1e6).toFixed(1)} MB, resident memory of the process (gateway and reader) grew by at most ${((peak - rss) / 1e6).toFixed(1)} MB`,
    );
  } finally {
    await client.end();
    await tollgate.close(1_000);
    await db.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
