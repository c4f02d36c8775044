import { randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import { Client as PgClient } from 'pg';
import WebSocket from 'ws';
import { ManualClock } from '../../src/domain/shared/clock';
import {
  call,
  createKey,
  graphql,
  provisionAccount,
  startTestTollgate,
  waitForSubscriptions,
  type TestTollgate,
} from '../support/tollgate';

/**
 * A GraphQL subscription lives no longer than the session that opened it: sign-out (here or
 * on another instance), expiry and the removal of its user each end it with `invalid_token`.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const shared = { REDIS_URL, TOLLGATE_REDIS_KEY_PREFIX: `tollgate:test-${randomBytes(4).toString('hex')}:` };
const SESSION_TTL_MS = 60_000;

let a: TestTollgate;
let b: TestTollgate;
let c: TestTollgate;
const clock = new ManualClock(new Date());
const clients: Client[] = [];

beforeAll(async () => {
  // a and b: one database, one Redis, the default (30 s) check, so only the event bus can end a feed within a test's bound.
  a = await startTestTollgate({ env: shared });
  b = await startTestTollgate({ env: shared, databaseUrl: a.databaseUrl });
  // c: its own clock and a quick check, for expiry and removed users.
  c = await startTestTollgate({ env: { TOLLGATE_SESSION_TTL_SECONDS: String(SESSION_TTL_MS / 1000) }, clock, sessionCheckIntervalMs: 50 });
});
afterAll(async () => {
  for (const client of clients) await client.dispose();
  await c?.stop();
  await b?.stop();
  await a?.stop();
});

interface Feed {
  events: unknown[];
  /** The errors the feed ended with. */
  ended: Promise<Array<{ message: string; extensions?: { code?: string } }>>;
}

function openFeed(url: string, sessionToken: string, query: string, variables: Record<string, unknown> = {}): Feed {
  const client = createClient({
    url: `${url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${sessionToken}` },
    retryAttempts: 0,
  });
  clients.push(client);
  const events: unknown[] = [];
  const ended = new Promise<Array<{ message: string; extensions?: { code?: string } }>>((resolve, reject) => {
    client.subscribe(
      { query, variables },
      {
        next: (message) => (message.errors ? resolve(message.errors as never) : events.push(message.data)),
        error: (error) =>
          Array.isArray(error)
            ? resolve(error)
            : reject(new Error(`the connection failed: ${String((error as { code?: number }).code ?? error)}`)),
        complete: () => reject(new Error(`the feed completed without an error: ${query}`)),
      },
    );
  });
  ended.catch(() => undefined); // a feed that is never awaited completes when its client is disposed
  return { events, ended };
}

/** The feed ends within `ms` (the bound is what tells the event bus from the 30 s check). */
async function endsWithin(feed: Feed, ms: number): Promise<Array<{ message: string; extensions?: { code?: string } }>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_resolve, reject) => (timer = setTimeout(() => reject(new Error(`the feed was still open after ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([feed.ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function signInAgain(url: string, email: string, password: string): Promise<string> {
  const session = await call(`${url}/v1/auth/sessions`, { body: { email, password } });
  expect(session.status).toBe(201);
  return session.body.token as string;
}

const KEY_FEED = 'subscription($k:ID!){keyEvents(keyId:$k){kind}}';
const VIDEO_FEED = 'subscription{videoUpdated{id status}}';

test('signing out elsewhere ends the feeds of that session at once; another session of the user keeps its own', async () => {
  const owner = await provisionAccount(a.url);
  const key = await createKey(a.url, owner.sessionToken, { name: 'watched' });
  const other = await signInAgain(a.url, owner.email, owner.password);
  const keys = openFeed(a.url, owner.sessionToken, KEY_FEED, { k: key.id });
  const videos = openFeed(a.url, owner.sessionToken, VIDEO_FEED);
  const kept = openFeed(a.url, other, KEY_FEED, { k: key.id });
  await waitForSubscriptions(a.url, 3);

  expect((await call(`${a.url}/v1/auth/sessions/current`, { method: 'DELETE', token: owner.sessionToken })).status).toBe(204);
  for (const feed of [keys, videos]) {
    const errors = await endsWithin(feed, 5_000);
    expect(errors[0]).toMatchObject({ extensions: { code: 'invalid_token' } });
    expect(errors[0]!.message).toMatch(/session ended/);
  }
  await waitForSubscriptions(a.url, 1);

  expect((await call(`${a.url}/v1/keys/${key.id}`, { method: 'PATCH', token: other, body: { name: 'renamed' } })).status).toBe(200);
  for (let waited = 0; kept.events.length === 0 && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  expect(kept.events).toEqual([{ keyEvents: { kind: 'renamed' } }]);
  expect(keys.events).toEqual([]);
});

test('signing out on one instance ends the feed on another through the event bus', async () => {
  const owner = await provisionAccount(a.url);
  const feed = openFeed(b.url, owner.sessionToken, VIDEO_FEED);
  await waitForSubscriptions(b.url, 1);
  const out = await graphql(a.url, 'mutation { signOut }', {}, owner.sessionToken);
  expect(out.data.signOut).toBe(true);
  // Well inside b's 30 s check: the sign-out itself reached b.
  const errors = await endsWithin(feed, 10_000);
  expect(errors[0]).toMatchObject({ extensions: { code: 'invalid_token' } });
  await waitForSubscriptions(b.url, 0);
});

test('a feed ends when its session expires', async () => {
  const owner = await provisionAccount(c.url);
  // 100 ms of the session left when the feed opens: its own timer ends it (the check sees the clock, which stands still).
  clock.advance(SESSION_TTL_MS - 100);
  const feed = openFeed(c.url, owner.sessionToken, VIDEO_FEED);
  const errors = await endsWithin(feed, 5_000);
  expect(errors[0]).toMatchObject({ extensions: { code: 'invalid_token' } });
  clock.advance(1_000);
  expect((await graphql(c.url, '{ me { id } }', {}, owner.sessionToken)).errors?.[0].extensions.code).toBe('invalid_token');
});

test('a feed ends when its user is removed (the session goes with it)', async () => {
  const owner = await provisionAccount(c.url);
  const feed = openFeed(c.url, owner.sessionToken, VIDEO_FEED);
  await waitForSubscriptions(c.url, 1);
  const db = new PgClient({ connectionString: c.databaseUrl });
  await db.connect();
  try {
    await db.query('delete from users where id = $1', [owner.userId]);
  } finally {
    await db.end();
  }
  const errors = await endsWithin(feed, 5_000);
  expect(errors[0]).toMatchObject({ extensions: { code: 'invalid_token' } });
});
