/**
 * `npm run bench:dashboard-pages`: how long the dashboard's usage pages take over an account
 * with BENCH_RECORDS (default 100,000) requests over 90 days, seeded in SQL.
 *
 * Server time: the GraphQL queries the pages send, timed over HTTP (spend per day over 30 and
 * 90 days, per key over 90 days, the request log's first page, unfiltered and filtered by key;
 * `npm run bench:dashboard` times the same reads inside the server).
 * Page time: in Debian's Chromium, from the click on the page's link to the figures on screen
 * (the Spend total; 50 rows of the request log), and a cold load of each page's URL. Each is
 * repeated BENCH_ROUNDS (default 10) times; medians and the slowest are reported, never asserted.
 */
import 'reflect-metadata';
import { Client } from 'pg';
import { buildDashboard, launchChromium } from '../test/support/dashboard-browser';
import { seedRequests } from '../test/support/request-log-seed';
import { createKey, graphql, provisionAccount, startTestTollgate } from '../test/support/tollgate';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (n: number) => `${n.toFixed(0)} ms`;
const day = (at: Date) => at.toISOString().slice(0, 10);

async function timed(rounds: number, run: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times;
}

async function main() {
  buildDashboard();
  const t = await startTestTollgate();
  const db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  const browser = await launchChromium();
  try {
    const owner = await provisionAccount(t.url, { fundsMicro: '1000000000000' });
    const keys: { id: string; secret: string }[] = [];
    for (const name of ['k0', 'k1', 'k2']) keys.push(await createKey(t.url, owner.sessionToken, { name }));
    const seeding = performance.now();
    await seedRequests(
      db,
      owner.accountId,
      keys.map((k) => k.id),
      RECORDS,
      new Date(),
    );
    console.log(`seeded ${RECORDS.toLocaleString('en-US')} requests in ${ms(performance.now() - seeding)}`);

    const now = new Date();
    const from30 = day(new Date(now.getTime() - 29 * 86_400_000));
    const from90 = day(new Date(now.getTime() - 89 * 86_400_000));
    const ask = async (query: string, variables: Record<string, unknown>) => {
      const answer = await graphql(t.url, query, variables, owner.sessionToken);
      if (answer.errors) throw new Error(JSON.stringify(answer.errors));
      return answer;
    };
    const SPEND =
      'query($g:SpendGrouping!,$from:String,$to:String){spend(groupBy:$g,from:$from,to:$to){total{costMicro requests} groups{day keyId model costMicro requests}}}';
    const LOG =
      'query($f:RequestLogFilter){requestLog(first:50,filter:$f){data{id createdAt keyId keyName model status costMicro latencyMs requestId} lastId hasMore}}';
    const server: [string, () => Promise<unknown>][] = [
      ['spend per day, 30 days', () => ask(SPEND, { g: 'day', from: from30, to: day(now) })],
      ['spend per day, 90 days', () => ask(SPEND, { g: 'day', from: from90, to: day(now) })],
      ['spend per key, 90 days', () => ask(SPEND, { g: 'key', from: from90, to: day(now) })],
      ['request log, first page', () => ask(LOG, { f: { from: `${from30}T00:00:00.000Z` } })],
      ['request log, first page of one key', () => ask(LOG, { f: { keyId: keys[1]!.id, from: `${from30}T00:00:00.000Z` } })],
    ];
    console.log(`\nserver time (GraphQL over HTTP, ${ROUNDS} rounds after one warm-up)`);
    for (const [name, run] of server) {
      await run();
      const times = await timed(ROUNDS, run);
      console.log(`  ${name.padEnd(36)} median ${ms(median(times))}, slowest ${ms(Math.max(...times))}`);
    }

    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    await page.goto(`${t.url}/dashboard`);
    await page.evaluate(`sessionStorage.setItem('tollgate.session', ${JSON.stringify(owner.sessionToken)})`);
    const views: [string, string, () => Promise<unknown>][] = [
      ['Spend', '/dashboard/spend', () => page.getByTestId('spend-total').waitFor()],
      [
        'Request log',
        '/dashboard/requests',
        () => page.getByRole('table', { name: 'Request log' }).locator('tbody > tr').nth(49).waitFor(),
      ],
    ];
    console.log(`\npage time (Chromium, ${ROUNDS} rounds after one warm-up)`);
    for (const [name, path, shown] of views) {
      const navigateThere = async () => {
        await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Account', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
        const started = performance.now();
        await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
        await shown();
        return performance.now() - started;
      };
      const cold = async () => {
        const started = performance.now();
        await page.goto(`${t.url}${path}`);
        await shown();
        return performance.now() - started;
      };
      await cold();
      const clicks: number[] = [];
      const loads: number[] = [];
      for (let i = 0; i < ROUNDS; i++) clicks.push(await navigateThere());
      for (let i = 0; i < ROUNDS; i++) loads.push(await cold());
      console.log(
        `  ${name.padEnd(12)} from its link: median ${ms(median(clicks))}, slowest ${ms(Math.max(...clicks))}; loading its URL: median ${ms(median(loads))}, slowest ${ms(Math.max(...loads))}`,
      );
    }
  } finally {
    await browser.close();
    await db.end();
    await t.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
