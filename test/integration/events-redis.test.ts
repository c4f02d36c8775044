import { randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { call, createKey, provisionAccount, startTestTollgate, waitForSubscriptions, type TestTollgate } from '../support/tollgate';

/** Two gateway instances on one database and one Redis: key events reach both. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const env = { REDIS_URL, TOLLGATE_REDIS_KEY_PREFIX: `tollgate:test-${randomBytes(4).toString('hex')}:` };

let a: TestTollgate;
let b: TestTollgate;
let client: Client | undefined;

beforeAll(async () => {
  a = await startTestTollgate({ env });
  b = await startTestTollgate({ env, databaseUrl: a.databaseUrl });
});
afterAll(async () => {
  await client?.dispose();
  await b?.stop();
  await a?.stop();
});

async function eventually(check: () => Promise<boolean>, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

test('a key revoked on one instance is refused at once by another that had it cached', async () => {
  const owner = await provisionAccount(a.url);
  const key = await createKey(a.url, owner.sessionToken);
  expect((await call(`${b.url}/v1/models`, { token: key.secret })).status).toBe(200); // now in b's key cache (60 s)
  expect((await call(`${a.url}/v1/keys/${key.id}`, { method: 'DELETE', token: owner.sessionToken })).status).toBe(200);
  const started = Date.now();
  expect(await eventually(async () => (await call(`${b.url}/v1/models`, { token: key.secret })).status === 401)).toBe(true);
  expect(Date.now() - started).toBeLessThan(3_000);
  const refused = await call(`${b.url}/v1/models`, { token: key.secret });
  expect(refused.body.error.code).toBe('invalid_token');
});

test('a graphql-ws subscriber on one instance receives key events made on another', async () => {
  const owner = await provisionAccount(a.url);
  const key = await createKey(a.url, owner.sessionToken, { name: 'watched' });
  client = createClient({
    url: b.url.replace('http', 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${owner.sessionToken}` },
    retryAttempts: 0,
  });
  const received = new Promise<{ kind: string; createdAt: string; data: Record<string, unknown> }>((resolve, reject) => {
    client!.subscribe<{ keyEvents: { kind: string; createdAt: string; data: Record<string, unknown> } }>(
      { query: 'subscription($k:ID!){keyEvents(keyId:$k){kind createdAt data}}', variables: { k: key.id } },
      {
        next: (msg) => (msg.errors ? reject(new Error(JSON.stringify(msg.errors))) : resolve(msg.data!.keyEvents)),
        error: reject,
        complete: () => undefined,
      },
    );
  });
  await waitForSubscriptions(b.url, 1); // the subscription registers asynchronously
  expect(
    (await call(`${a.url}/v1/keys/${key.id}`, { method: 'PATCH', token: owner.sessionToken, body: { name: 'renamed on a' } })).status,
  ).toBe(200);
  const event = await received;
  expect(event.kind).toBe('renamed');
  expect(event.data).toEqual({ old_name: 'watched', new_name: 'renamed on a' });
  expect(Number.isNaN(new Date(event.createdAt).getTime())).toBe(false);
});
