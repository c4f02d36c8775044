import { createTestDatabase } from '../support/database';
import { startTcpProxy } from '../support/tcp-proxy';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * PostgreSQL goes away while Tollgate serves (a restart, seen from the gateway: connections cut,
 * then refused) and comes back: requests during the outage are 503 `unavailable` in the
 * envelope or served, never a 500; nothing is charged twice or lost; the gateway recovers
 * without a restart of its own.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let t: TestTollgate;

beforeAll(async () => {
  db = await createTestDatabase();
  const direct = new URL(db.url);
  proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  t = await startTestTollgate({ databaseUrl: viaProxy.toString(), env: { TOLLGATE_SWEEP_INTERVAL_MS: '500' } });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await proxy?.stop();
  await db?.drop();
});

const chat = (key: string) =>
  call(`${t.url}/v1/chat/completions`, {
    token: key,
    body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
  });
const image = (key: string) =>
  call(`${t.url}/v1/images/generations`, { token: key, body: { model: 'sandbox/image', prompt: 'a lamp', size: '512x512' } });

test('an outage answers 503 unavailable or serves, never 500; afterwards every charge is there once', async () => {
  const owner = await provisionAccount(t.url, { fundsMicro: '10000000' });
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: owner.accountId }, ADMIN_TOKEN);
  const key = (await createKey(t.url, owner.sessionToken)).secret;
  const served: string[] = [];
  for (const answer of [await chat(key), await image(key)]) {
    expect(answer.status).toBe(200);
    served.push(answer.headers.get('x-request-id')!);
  }

  await proxy.drop(); // every connection cut, new ones refused
  const during = [
    await chat(key),
    await image(key),
    await call(`${t.url}/v1/keys`, { token: owner.sessionToken }),
    await graphql(t.url, '{ account { balanceMicro } }', {}, owner.sessionToken).then((body) => ({
      status: 200,
      body,
      headers: new Headers(),
    })),
  ];
  for (const answer of during.slice(0, 3)) {
    expect([200, 503]).toContain(answer.status);
    if (answer.status === 503) expect(answer.body.error).toMatchObject({ code: 'unavailable' });
    else served.push(answer.headers.get('x-request-id')!);
  }
  const gqlError = (during[3]!.body as { errors?: { extensions: { code: string } }[] }).errors?.[0];
  expect(gqlError?.extensions.code).toBe('unavailable');
  const ready = await call(`${t.url}/readyz`);
  expect(ready.status).toBe(503);

  await proxy.restore();
  // Back without a restart of the gateway.
  let again = await chat(key);
  for (let i = 0; i < 50 && again.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 200));
    again = await chat(key);
  }
  expect(again.status).toBe(200);
  served.push(again.headers.get('x-request-id')!);
  expect((await call(`${t.url}/readyz`)).status).toBe(200);

  // Every served request is charged once; nothing else is; nothing stays reserved.
  const audit = async () => t.tollgate.services.billing.auditAccount(owner.accountId);
  let settled = await audit();
  for (let i = 0; i < 100 && settled.reservedMicro !== 0n; i++) {
    await new Promise((r) => setTimeout(r, 200));
    settled = await audit();
  }
  expect(settled.reservedMicro).toBe(0n);
  expect(settled.consistent).toBe(true);
  const rows = (await t.tollgate.services.orm.em
    .fork()
    .execute("select request_id from usage_records where account_id = ? and status in ('ok', 'partial')", [owner.accountId], 'all')) as {
    request_id: string;
  }[];
  expect(rows.map((r) => r.request_id).sort()).toEqual([...served].sort());
}, 60_000);
