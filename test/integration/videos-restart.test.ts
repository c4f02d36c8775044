import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase } from '../support/database';
import { startTestTollgate, waitForSubscriptions, type TestTollgate } from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

// Instances share the database (jobs, queue), Redis (slots, events) and the video directory.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let database: { url: string; drop(): Promise<void> };
let files: ReturnType<typeof videoTestEnv>;
let env: Record<string, string>;
let db: PgClient;
const running: TestTollgate[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  files = videoTestEnv({ REDIS_URL, TOLLGATE_REDIS_KEY_PREFIX: `tollgate-test:${randomBytes(4).toString('hex')}:` });
  env = files.env;
  db = new PgClient({ connectionString: database.url });
  await db.connect();
});

afterAll(async () => {
  for (const t of running) await t.tollgate.close(2_000);
  await db.end();
  await database.drop();
  files.cleanup();
});

async function instance(extra: Record<string, string> = {}): Promise<TestTollgate> {
  const t = await startTestTollgate({ env: { ...env, ...extra }, databaseUrl: database.url });
  running.push(t);
  return t;
}

/**
 * No slot of the account is held, as `t` sees the shared limits. A job frees its slot before it
 * is marked ended; a request's slot goes just after its answer (its release may ride with the
 * instance's next call to Redis, or, when a call to Redis timed out on a loaded machine, be
 * retried a second later). So this waits a little, far less than the 30 s a slot nobody gives
 * back would live.
 */
async function noSlotsHeld(t: TestTollgate, accountId: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let held = await t.tollgate.services.admission.slotsInUse(accountId);
  while (held !== 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    held = await t.tollgate.services.admission.slotsInUse(accountId);
  }
  expect(held).toBe(0);
}

/** Waits (bounded) until every job has ended, reading the database. */
async function videosEnded(ids: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query(`select count(*)::int as n from videos where id = any($1) and status in ('completed', 'failed')`, [
      ids,
    ]);
    if (rows[0].n === ids.length) return;
    if (Date.now() > deadline) throw new Error(`${ids.length - rows[0].n} of ${ids.length} videos still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function stop(t: TestTollgate): Promise<void> {
  running.splice(running.indexOf(t), 1);
  await t.tollgate.close(2_000);
}

test('a job running when its gateway stops completes on the next one, is charged once, and frees its slot', async () => {
  const first = await instance();
  const { apiKey, accountId } = await provisionVideoAccount(first.url);
  const created = await fetch(`${first.url}/v1/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sandbox/video', prompt: 'survives a restart [sandbox:slow]', seconds: 4 }),
  }).then((r) => r.json() as Promise<{ id: string }>);
  await waitForVideo(first.url, apiKey, created.id, (v) => v.status === 'in_progress' && v.progress > 0);
  await stop(first);

  const {
    rows: [during],
  } = await db.query('select status from videos where id = $1', [created.id]);
  expect(during.status).toBe('in_progress');

  const second = await instance();
  const done = await waitForVideo(second.url, apiKey, created.id);
  expect(done.status).toBe('completed');
  const charges = await db.query(`select amount_micro from ledger_entries where account_id = $1 and kind = 'charge'`, [accountId]);
  expect(charges.rows).toEqual([{ amount_micro: '-4000' }]);
  const holds = await db.query(`select status, charged_micro from holds where account_id = $1`, [accountId]);
  expect(holds.rows).toEqual([{ status: 'settled', charged_micro: '4000' }]);
  await noSlotsHeld(second, accountId);
  const content = await fetch(`${second.url}/v1/videos/${created.id}/content`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(content.status).toBe(200);
  expect(
    Buffer.from(await content.arrayBuffer())
      .subarray(4, 8)
      .toString('latin1'),
  ).toBe('ftyp');
});

test('two live instances share the jobs: each runs once and is charged once, whichever instance took it', async () => {
  const [a, b] = [running[0] ?? (await instance()), await instance()];
  const { apiKey, accountId } = await provisionVideoAccount(a.url);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const target = i % 2 === 0 ? a : b;
    const res = await fetch(`${target.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox/video', prompt: `shared ${i} [sandbox:delay=200]`, seconds: 2 }),
    });
    expect(res.status).toBe(202);
    ids.push(((await res.json()) as { id: string }).id);
  }
  // Watched in the database, not over the API: each GET of the API holds a concurrency slot of the
  // account until just after its answer, which is no video's.
  await videosEnded(ids);
  expect((await db.query('select status, count(*)::int as n from videos where id = any($1) group by status', [ids])).rows).toEqual([
    { status: 'completed', n: 8 },
  ]);
  await noSlotsHeld(a, accountId);
  await noSlotsHeld(b, accountId);
  const charges = await db.query(
    `select hold_id, count(*)::int as n from ledger_entries where account_id = $1 and kind = 'charge' group by hold_id`,
    [accountId],
  );
  expect(charges.rows).toHaveLength(8);
  expect(charges.rows.every((row) => row.n === 1)).toBe(true);
  const usage = await db.query(`select count(*)::int as n, sum(video_seconds)::int as seconds from usage_records where account_id = $1`, [
    accountId,
  ]);
  expect(usage.rows[0]).toEqual({ n: 8, seconds: 16 });
});

test('a subscriber on an API-only instance sees the job that another instance runs, through Redis', async () => {
  const apiOnly = await instance({ TOLLGATE_VIDEO_WORKERS: '0' });
  const worker = running.find((t) => t !== apiOnly) ?? (await instance());
  const { apiKey, sessionToken, accountId } = await provisionVideoAccount(apiOnly.url);
  const client = createClient({
    url: apiOnly.url.replace('http', 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${sessionToken}` },
    retryAttempts: 0,
  });
  const statuses: string[] = [];
  const completed = new Promise<void>((resolve, reject) => {
    client.subscribe<{ videoUpdated: { status: string } }>(
      { query: 'subscription { videoUpdated { status } }' },
      {
        next: (message) => {
          statuses.push(message.data!.videoUpdated.status);
          if (message.data!.videoUpdated.status === 'completed') resolve();
        },
        error: reject,
        complete: () => undefined,
      },
    );
  });
  await waitForSubscriptions(apiOnly.url, 1);
  const res = await fetch(`${apiOnly.url}/v1/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sandbox/video', prompt: 'seen from afar [sandbox:delay=200]' }),
  });
  expect(res.status).toBe(202);
  await completed;
  await client.dispose();
  expect(statuses[0]).toBe('queued');
  expect(statuses).toContain('in_progress');
  expect(statuses.at(-1)).toBe('completed');
  await noSlotsHeld(worker, accountId);
});
