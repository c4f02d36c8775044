import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/domain/shared/clock';
import { RedisLimitStore, RELEASE_BATCH_MS } from '../../src/infra/redis-limit-store';
import { startTcpProxy } from '../support/tcp-proxy';
import {
  ADMIN_TOKEN,
  call,
  createKey,
  graphql,
  provisionAccount,
  startTestTollgate,
  type JsonResponse,
  type TestTollgate,
} from '../support/tollgate';

/**
 * What sharing limits through Redis costs, counted, not timed: in commands, with a MONITOR
 * connection, which sees every command a client sends (and, tagged "lua", those its scripts
 * run); in round trips, with a TCP proxy between the gateway and Redis that sees each write of
 * the gateway's (a batch of pipelined commands is one write, one round trip).
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = `tollgate:test-${randomBytes(4).toString('hex')}:`;
const clock = new ManualClock(new Date());
let gateway: TestTollgate;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let client: Redis;
let monitor: Redis;
/** The gateway's own commands (not those run inside scripts) on this run's limit keys. */
const seen: string[][] = [];

beforeAll(async () => {
  const redisUrl = new URL(REDIS_URL);
  proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
  redisUrl.host = `127.0.0.1:${proxy.port}`;
  gateway = await startTestTollgate({ clock, env: { REDIS_URL: redisUrl.toString(), TOLLGATE_REDIS_KEY_PREFIX: KEY_PREFIX } });
  client = new Redis(REDIS_URL);
  monitor = await client.monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && args.some((arg) => arg.startsWith(`${KEY_PREFIX}limits:`))) seen.push(args);
  });
});
afterAll(async () => {
  monitor?.disconnect();
  client?.disconnect();
  await gateway?.stop();
  await proxy?.stop();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${KEY_PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/**
 * Commands seen once the ones sent so far have reached MONITOR (a PING of ours, on the limit
 * keys' connection order, marks the end), and the gateway's writes that carried limit commands.
 */
async function commandsDuring(work: () => Promise<void>): Promise<{ commands: string[][]; writes: number; reads: readonly Buffer[] }> {
  await settle();
  seen.length = 0;
  proxy.record();
  await work();
  await settle();
  const reads = proxy.reads().filter((read) => read.includes(`${KEY_PREFIX}limits:`));
  return { commands: seen.splice(0), writes: reads.length, reads };
}

/** Admissions among script calls: EVALSHA, its sha, 5 keys, and 9 values (a release has 4). */
const admissionsOf = (commands: string[][]) => commands.filter((command) => command.length === 3 + 5 + 9);

/** Waits until MONITOR has reported everything sent before: our own marker command comes back through it. */
async function settle(): Promise<void> {
  // A release waits a few milliseconds for company before it leaves alone.
  await new Promise((resolve) => setTimeout(resolve, RELEASE_BATCH_MS * 4));
  const marker = `${KEY_PREFIX}marker:${randomBytes(4).toString('hex')}`;
  const arrived = new Promise<void>((resolve) => {
    const onCommand = (_time: string, args: string[]) => {
      if (!args.includes(marker)) return;
      monitor.off('monitor', onCommand);
      resolve();
    };
    monitor.on('monitor', onCommand);
  });
  const redis = new Redis(REDIS_URL);
  await redis.exists(marker);
  await arrived;
  await redis.quit();
}

async function account(tier: number) {
  const provisioned = await provisionAccount(gateway.url, { fundsMicro: '5000000' });
  const pinned = await graphql(
    gateway.url,
    'mutation($a:ID!,$t:Int!){setAccountTier(input:{accountId:$a,tier:$t}){tier}}',
    { a: provisioned.accountId, t: tier },
    ADMIN_TOKEN,
  );
  expect(pinned.data.setAccountTier.tier).toBe(tier);
  return (await createKey(gateway.url, provisioned.sessionToken)).secret;
}

const chat = (token: string, stream: boolean) =>
  call(`${gateway.url}/v1/chat/completions`, {
    token,
    body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'Say something about foxes.' }], stream },
  });

const scriptCalls = (commands: string[][]) => commands.filter(([name]) => /^eval(sha)?$/i.test(name!));

test.each([false, true])(
  'a served chat completion (stream: %s) costs one round trip: admitted with its tokens, released with the next admission',
  async (stream) => {
    const key = await account(5);
    // One request first: a Redis that has not seen a script yet answers NOSCRIPT once, and it is sent whole.
    expect((await chat(key, stream)).status).toBe(200);
    const N = 10;
    const { commands, writes, reads } = await commandsDuring(async () => {
      for (let i = 0; i < N; i++) {
        const r = await chat(key, stream);
        expect(r.status).toBe(200);
        // The release is queued when the response closes, after the client has the answer.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    // Each command is one script call (its checks and writes run inside Redis in one step):
    // the admission, which checks and takes the request windows, a slot and the token
    // estimate, and the release, which records the settled usage.
    expect(scriptCalls(commands)).toHaveLength(commands.length);
    expect(commands).toHaveLength(2 * N);
    const admissions = admissionsOf(commands);
    expect(admissions).toHaveLength(N);
    // Before its answer, a request waits for one write and its reply: its admission.
    const admitSha = admissions[0]![1]!;
    expect(reads.filter((read) => read.includes(admitSha))).toHaveLength(N);
    // A release travels with the next admission when that comes within a few milliseconds (on a
    // quiet machine N + 1 writes in all: only the last release leaves alone); never a write more
    // than one for each call.
    console.log(`[round-trips] ${N} requests one after the other (stream: ${stream}): ${writes} writes`);
    expect(writes).toBeLessThanOrEqual(2 * N);
    // The settled usage reached the shared window with the release: the minute's usage is there,
    // and nothing is left in flight (a window with reservations only reads a full minute to reset).
    clock.advance(1_000);
    const headers = (await call(`${gateway.url}/v1/models`, { token: key })).headers;
    const limit = Number(headers.get('x-ratelimit-limit-tokens'));
    expect(Number(headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(limit);
    expect(headers.get('x-ratelimit-reset-tokens')).toBe('59s');
  },
);

test('64 concurrent chat completions cost fewer round trips than requests', async () => {
  const key = await account(5);
  const N = 64;
  const { commands, writes } = await commandsDuring(async () => {
    const answers = await Promise.all(Array.from({ length: N }, () => chat(key, false)));
    for (const r of answers) expect(r.status).toBe(200);
  });
  expect(commands).toHaveLength(2 * N);
  console.log(`[round-trips] ${N} concurrent: ${writes} writes`);
  expect(writes).toBeLessThan(N);
});

test('a release waits for the next call and leaves in its write; alone, it leaves within the batch wait', async () => {
  const redis = new Redis(`redis://127.0.0.1:${proxy.port}`, { enableAutoPipelining: true });
  const store = new RedisLimitStore(redis, { keyPrefix: KEY_PREFIX });
  const subject = `acct:release-batch-${randomBytes(3).toString('hex')}`;
  const admission = (slotId: string) => ({
    subject,
    now: Date.now(),
    requestId: slotId,
    requestsPerSecond: null,
    requestsPerMinute: null,
    slot: { id: slotId, limit: 1, expiresAt: Date.now() + 30_000 },
  });
  const ours = () => proxy.reads().filter((read) => read.includes(subject));
  try {
    expect((await store.admit(admission('first'))).refusal).toBeNull();
    proxy.record();
    const released = store.releaseSlot(subject, 'first', { tokens: 10, at: Date.now() });
    // A tick later (a request sent alone would have left by now), the next admission: one write for both,
    // and Redis runs the release first, so the one slot is free for it.
    await new Promise((resolve) => setImmediate(resolve));
    const next = await store.admit(admission('second'));
    await released;
    expect(next.refusal).toBeNull();
    expect(next.snapshot).toMatchObject({ slotsInUse: 1, settledTokens: 10 });
    expect(ours()).toHaveLength(1);

    proxy.record();
    await store.releaseSlot(subject, 'second');
    expect(ours()).toHaveLength(1);
    expect((await store.snapshot(subject, Date.now())).slotsInUse).toBe(0);
  } finally {
    redis.disconnect();
  }
});

test('a text request that fails before its estimate is counted with one call and answered with the headers', async () => {
  const key = await account(5);
  const { commands, writes } = await commandsDuring(async () => {
    const r = await call(`${gateway.url}/v1/chat/completions`, { token: key, body: { model: 'sandbox/echo', messages: 'not a list' } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/messages/);
    expect(Number(r.headers.get('x-ratelimit-remaining-requests'))).toBeLessThan(Number(r.headers.get('x-ratelimit-limit-requests')));
    expect(r.headers.get('x-ratelimit-limit-tokens')).not.toBeNull();
  });
  expect(commands).toHaveLength(1); // counted in the request windows; no slot taken, nothing to release
  expect(writes).toBe(1);
});

test('while a request window is known full, refusals are answered without Redis', async () => {
  const key = await account(1); // 5 requests per second
  const admitted = await commandsDuring(async () => {
    for (let i = 0; i < 5; i++) expect((await call(`${gateway.url}/v1/models`, { token: key })).status).toBe(200);
  });
  expect(admitted.commands).toHaveLength(10); // admit + release each (no tokens on /v1/models)

  const refusals: JsonResponse[] = [];
  const refused = await commandsDuring(async () => {
    for (let i = 0; i < 10; i++) {
      refusals.push(await call(`${gateway.url}/v1/models`, { token: key }));
      clock.advance(10);
    }
    // A text request too, before its body is read.
    for (let i = 0; i < 10; i++) {
      refusals.push(await chat(key, false));
      clock.advance(10);
    }
  });
  expect(refused.commands).toHaveLength(1); // the first refusal asked Redis; the other 19 did not
  for (const r of refusals) expect(r.status).toBe(429);
  const first = refusals[0]!;
  const last = refusals.at(-1)!;
  expect(first.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 'requests_per_second', limit_value: 5 } });
  // Told as the store would: the wait counts down (the unit tests compare both answers field by field).
  expect(last.body.error).toMatchObject({
    code: 'rate_limited',
    details: { limit: 'requests_per_second', reset: '810ms', retry_after_seconds: 1 },
  });
  expect(last.headers.get('retry-after')).toBe('1');
  expect(last.headers.get('x-ratelimit-remaining-requests')).toBe(first.headers.get('x-ratelimit-remaining-requests'));

  // Once the second has passed, Redis is asked again and admits.
  clock.advance(1_000);
  const after = await commandsDuring(async () => {
    expect((await call(`${gateway.url}/v1/models`, { token: key })).status).toBe(200);
  });
  expect(after.commands).toHaveLength(2);
});
