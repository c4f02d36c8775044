import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AdmissionService } from '../../src/domain/limits/admission';
import { RedisLimitStore } from '../../src/infra/redis-limit-store';
import { TierLookup } from '../../src/domain/limits/tier-lookup';
import { ManualClock } from '../../src/domain/shared/clock';
import { startTcpProxy } from '../support/tcp-proxy';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * Several gateway instances on one Redis share one account's limits; a Redis outage keeps
 * answering (fail-open to per-instance limits), never 500. All instances share a ManualClock.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = `tollgate:test-${randomBytes(4).toString('hex')}:`;
const env = { REDIS_URL, TOLLGATE_REDIS_KEY_PREFIX: KEY_PREFIX };

const clock = new ManualClock(new Date());
let a: TestTollgate;
let b: TestTollgate;
const extra: TestTollgate[] = [];

beforeAll(async () => {
  a = await startTestTollgate({ clock, env });
  b = await startTestTollgate({ clock, env, databaseUrl: a.databaseUrl });
});
afterAll(async () => {
  for (const instance of [...extra, b]) await instance?.stop();
  await a?.stop();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${KEY_PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/** A prepaid account pinned by the operator to tier 1 (5 RPS, 100 RPM, 200k TPM, 5 concurrent). */
async function tierOneAccount() {
  const account = await provisionAccount(a.url, { fundsMicro: '1000000' });
  const pinned = await graphql(
    a.url,
    'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:1}){tier}}',
    { a: account.accountId },
    ADMIN_TOKEN,
  );
  expect(pinned.data.setAccountTier.tier).toBe(1);
  const key = await createKey(a.url, account.sessionToken);
  return { accountId: account.accountId, key: key.secret };
}

test('requests alternating between two instances share one window: the 6th in a second is refused', async () => {
  const { key } = await tierOneAccount();
  const instances = [a, b, a, b, a];
  for (const [i, instance] of instances.entries()) {
    const r = await call(`${instance.url}/v1/models`, { token: key });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe(String(99 - i));
  }
  const refused = await call(`${b.url}/v1/models`, { token: key });
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 'requests_per_second', limit_value: 5 } });
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('95');
  clock.advance(1_000);
  const again = await call(`${a.url}/v1/models`, { token: key });
  expect(again.status).toBe(200);
  expect(again.headers.get('x-ratelimit-remaining-requests')).toBe('94');
});

test('concurrency slots and in-flight tokens are shared between instances', async () => {
  const { accountId, key } = await tierOneAccount();
  const onA = await Promise.all([0, 1, 2].map(() => a.tollgate.services.admission.acquireSlot(accountId)));
  const onB = await Promise.all([0, 1].map(() => b.tollgate.services.admission.acquireSlot(accountId)));
  expect(await a.tollgate.services.admission.slotsInUse(accountId)).toBe(5);
  const refused = await call(`${a.url}/v1/models`, { token: key });
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe('api_concurrency_limit');
  await onB[0].release();
  expect((await call(`${a.url}/v1/models`, { token: key })).status).toBe(200);
  await Promise.all([...onA, ...onB].map((s) => s.release()));

  // Tokens reserved by a request in flight on A show in B's headers.
  const ticket = await a.tollgate.services.admission.admit({
    type: 'key',
    keyId: 'k',
    accountId,
    userId: null,
    kind: 'prepaid',
    monthlySpendLimitMicro: null,
    plan: null,
  });
  await ticket.reserveTokens(150_000);
  const seenOnB = await call(`${b.url}/v1/models`, { token: key });
  expect(seenOnB.headers.get('x-ratelimit-remaining-tokens')).toBe('50000');
  expect(seenOnB.headers.get('x-ratelimit-reset-tokens')).toBe('1m0s');
  clock.advance(2_000);
  await ticket.settleTokens(20_000);
  await ticket.release();
  clock.advance(1_000);
  const afterSettle = await call(`${b.url}/v1/models`, { token: key });
  expect(afterSettle.headers.get('x-ratelimit-remaining-tokens')).toBe('180000');
  expect(afterSettle.headers.get('x-ratelimit-reset-tokens')).toBe('59s');
});

test('slots of a crashed instance stop counting when their TTL passes', async () => {
  const { accountId, key } = await tierOneAccount();
  // An instance that takes every slot and then dies: no release, no heartbeat.
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const crashed = new AdmissionService({
    store: new RedisLimitStore(redis, { keyPrefix: KEY_PREFIX }),
    tiers: new TierLookup(async () => ({ lifetimeTopUpsMicro: 0n, tierOverride: 1 }), clock),
    clock,
    heartbeatIntervalMs: 3_600_000,
  });
  for (let i = 0; i < 5; i++) await crashed.acquireSlot(accountId);
  expect((await call(`${a.url}/v1/models`, { token: key })).status).toBe(429);
  clock.advance(a.tollgate.services.admission.slotTtlMs);
  expect((await call(`${a.url}/v1/models`, { token: key })).status).toBe(200);
  // That request's own slot is freed by A a few milliseconds after its answer (batched with A's next call).
  await eventually(async () => (await b.tollgate.services.admission.slotsInUse(accountId)) === 0, 1_000);
  redis.disconnect();
});

test('the Lua scripts come back after Redis forgets them (restart, SCRIPT FLUSH)', async () => {
  const { key } = await tierOneAccount();
  expect((await call(`${a.url}/v1/models`, { token: key })).status).toBe(200);
  const redis = new Redis(REDIS_URL);
  await redis.script('FLUSH');
  await redis.quit();
  const after = await call(`${b.url}/v1/models`, { token: key });
  expect(after.status).toBe(200);
  expect(after.headers.get('x-ratelimit-remaining-requests')).toBe('98'); // shared, not a local fallback
});

test('Redis unreachable from the start: answers keep coming, limited per instance, never 500', async () => {
  const dead = await startTestTollgate({
    clock,
    env: { REDIS_URL: 'redis://127.0.0.1:1', TOLLGATE_REDIS_KEY_PREFIX: KEY_PREFIX },
    databaseUrl: a.databaseUrl,
  });
  extra.push(dead);
  const { key } = await tierOneAccount();
  for (let i = 0; i < 5; i++) {
    const r = await call(`${dead.url}/v1/models`, { token: key });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe(String(99 - i));
    expect(r.headers.get('x-ratelimit-remaining-tokens')).toBe('200000');
  }
  const refused = await call(`${dead.url}/v1/models`, { token: key });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
});

test('Redis lost mid-run (dropped, then hanging) fails open to local limits, then the shared limits come back', async () => {
  const proxy = await startTcpProxy(new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
  const viaProxy = await startTestTollgate({
    clock,
    env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, TOLLGATE_REDIS_KEY_PREFIX: KEY_PREFIX },
    databaseUrl: a.databaseUrl,
  });
  extra.push(viaProxy);
  const { accountId, key } = await tierOneAccount();
  const held = await a.tollgate.services.admission.acquireSlot(accountId); // in Redis
  expect(await viaProxy.tollgate.services.admission.slotsInUse(accountId)).toBe(1);

  await proxy.drop(); // connections cut, nothing listening
  const during = await call(`${viaProxy.url}/v1/models`, { token: key });
  expect(during.status).toBe(200);
  expect(during.headers.get('x-ratelimit-remaining-requests')).toBe('99'); // the local window
  expect(await viaProxy.tollgate.services.admission.slotsInUse(accountId)).toBe(0); // local: A's slot unseen

  await proxy.restore();
  await eventually(async () => (await viaProxy.tollgate.services.admission.slotsInUse(accountId)) === 1);

  proxy.hang(); // connected, but Redis answers nothing: the 250 ms command timeout trips
  clock.advance(1_000);
  const started = Date.now();
  const hung = await call(`${viaProxy.url}/v1/models`, { token: key });
  expect(hung.status).toBe(200);
  expect(hung.headers.has('x-ratelimit-remaining-requests')).toBe(true);
  expect(Date.now() - started).toBeLessThan(2_000);
  proxy.unhang();
  await held.release();
  await proxy.stop();
});

test('a slot whose taking timed out while Redis took it all the same is given back once Redis answers again', async () => {
  const proxy = await startTcpProxy(new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
  const viaProxy = await startTestTollgate({
    clock,
    env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, TOLLGATE_REDIS_KEY_PREFIX: KEY_PREFIX },
    databaseUrl: a.databaseUrl,
  });
  extra.push(viaProxy);
  const { accountId } = await tierOneAccount();
  // Redis runs the command, its reply comes after the 250 ms command timeout: a slot in Redis the instance does not know it holds.
  const admission = viaProxy.tollgate.services.admission;
  // The new instance answers from Redis (not yet connected on a loaded machine, it would count locally).
  const probe = await a.tollgate.services.admission.acquireSlot(accountId);
  await eventually(async () => (await admission.slotsInUse(accountId)) === 1);
  await probe.release();
  await eventually(async () => (await admission.slotsInUse(accountId)) === 0);
  const takes = [
    () => admission.acquireSlot(accountId, { slotId: 'video:vid_late_reply' }), // a video job's slot
    () =>
      admission.admit({
        type: 'key',
        keyId: 'key_late_reply',
        accountId,
        userId: null,
        kind: 'prepaid',
        monthlySpendLimitMicro: null,
        plan: null,
      }), // a request's
  ];
  try {
    for (const take of takes) {
      proxy.holdReplies();
      const held = await take();
      expect(await a.tollgate.services.admission.slotsInUse(accountId)).toBe(1);
      proxy.releaseReplies();
      await held.release();
      // Within the retry pause, not the 30 s slot TTL (which the hand-moved clock would never reach).
      await eventually(async () => (await a.tollgate.services.admission.slotsInUse(accountId)) === 0, 5_000);
    }
  } finally {
    proxy.releaseReplies();
    await proxy.stop();
  }
});

async function eventually(check: () => Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
