import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/domain/shared/clock';
import { InMemorySignInStore, type SignInAttemptStore } from '../../src/domain/accounts/sign-in-store';
import { SignInThrottle } from '../../src/domain/accounts/sign-in-throttle';
import { RedisSignInStore } from '../../src/infra/redis-sign-in-store';
import { provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * Failed sign-ins are throttled per (account, address), per account and per address, over real
 * HTTP. Clients come from distinct loopback addresses (all of 127.0.0.0/8 reaches the gateway).
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `tollgate:test-${randomBytes(4).toString('hex')}:`;

let t: TestTollgate;
let a: TestTollgate;
let b: TestTollgate;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  // t: in-process counting on a clock moved by hand (waits pass without sleeping); a and b: one Redis.
  t = await startTestTollgate({ clock });
  a = await startTestTollgate({ env: { REDIS_URL, TOLLGATE_REDIS_KEY_PREFIX: prefix } });
  b = await startTestTollgate({ env: { REDIS_URL, TOLLGATE_REDIS_KEY_PREFIX: prefix }, databaseUrl: a.databaseUrl });
});
afterAll(async () => {
  await t?.stop();
  await b?.stop();
  await a?.stop();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
}

/** One POST from the loopback address `from`. */
function postFrom(baseUrl: string, from: string, path: string, body: unknown): Promise<Answer> {
  const url = new URL(path, baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
            body: JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const signIn = (baseUrl: string, from: string, email: string, password: string) =>
  postFrom(baseUrl, from, '/v1/auth/sessions', { email, password });
const graphqlSignIn = (baseUrl: string, from: string, email: string, password: string) =>
  postFrom(baseUrl, from, '/graphql', {
    query: 'mutation($e:String!,$p:String!){signIn(email:$e,password:$p){token}}',
    variables: { e: email, p: password },
  });

/** Status (and Retry-After when refused) of each sign-in in turn. */
async function attempts(n: number, baseUrl: string, from: string, email: string, password = 'wrong password'): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await signIn(baseUrl, from, email, password);
    seen.push(answer.status === 429 ? `429 ${answer.retryAfter}` : String(answer.status));
  }
  return seen;
}

test('five wrong passwords are answered 401, then 429 rate_limited with Retry-After; the wait doubles, holds for the right password too, and a success starts over', async () => {
  const user = await provisionAccount(t.url);
  const from = '127.0.0.2';
  expect(await attempts(6, t.url, from, user.email)).toEqual(['401', '401', '401', '401', '401', '429 1']);
  const refused = await signIn(t.url, from, user.email, user.password);
  expect(refused).toMatchObject({
    status: 429,
    retryAfter: '1',
    body: { error: { code: 'rate_limited', details: { limit: 'sign_in_failures', retry_after_seconds: 1 } } },
  });
  expect(refused.body.error.message).toMatch(/retry in 1 s/);
  // GraphQL's signIn is the same door.
  const viaGraphql = await graphqlSignIn(t.url, from, user.email, user.password);
  expect(viaGraphql.body.errors[0].extensions).toMatchObject({ code: 'rate_limited', status: 429, details: { retry_after_seconds: 1 } });

  clock.advance(1_000);
  expect(await attempts(2, t.url, from, user.email)).toEqual(['401', '429 2']);
  clock.advance(2_000);
  expect(await attempts(2, t.url, from, user.email)).toEqual(['401', '429 4']);
  clock.advance(4_000);
  expect((await signIn(t.url, from, user.email, user.password)).status).toBe(201);
  expect(await attempts(6, t.url, from, user.email)).toEqual(['401', '401', '401', '401', '401', '429 1']);
  clock.advance(1_000);
});

test('unknown and known emails answer alike', async () => {
  const user = await provisionAccount(t.url);
  const known = await attempts(7, t.url, '127.0.0.3', user.email);
  const unknown = await attempts(7, t.url, '127.0.0.4', `nobody-${randomBytes(3).toString('hex')}@example.com`);
  expect(unknown).toEqual(known);
  expect(known).toEqual(['401', '401', '401', '401', '401', '429 1', '429 1']);
  clock.advance(1_000);
});

test('every wait is capped at 15 minutes', async () => {
  const user = await provisionAccount(t.url);
  let last = '';
  for (let i = 0; i < 16; i++) {
    const [status] = await attempts(1, t.url, '127.0.0.5', user.email);
    last = status!;
    if (status!.startsWith('429')) {
      clock.advance(Number(status!.split(' ')[1]) * 1_000);
      i--; // the refused attempt was not counted: try again now the wait is over
    }
  }
  expect(await attempts(1, t.url, '127.0.0.5', user.email)).toEqual(['429 900']);
  expect(last).toBe('401');
  clock.advance(900_000);
  expect((await signIn(t.url, '127.0.0.5', user.email, user.password)).status).toBe(201);
});

test('guesses spread over many addresses slow the account down, but never keep its user out where they sign in', async () => {
  const user = await provisionAccount(t.url);
  expect((await signIn(t.url, '127.0.1.1', user.email, user.password)).status).toBe(201); // the user's own address
  // Ten failures on the account, none of them enough for its own address to wait.
  for (const from of ['127.0.1.2', '127.0.1.3', '127.0.1.4', '127.0.1.5', '127.0.1.6'])
    expect(await attempts(2, t.url, from, user.email)).toEqual(['401', '401']);
  // From any other address, even the right password now waits.
  expect(await signIn(t.url, '127.0.1.7', user.email, user.password)).toMatchObject({ status: 429, retryAfter: '1' });
  expect((await signIn(t.url, '127.0.1.1', user.email, user.password)).status).toBe(201);
  clock.advance(900_000);
});

test('one address trying many accounts is slowed down; the users who signed in from it before are not', async () => {
  const user = await provisionAccount(t.url);
  const from = '127.0.2.1';
  expect((await signIn(t.url, from, user.email, user.password)).status).toBe(201);
  for (let i = 0; i < 50; i++) expect((await signIn(t.url, from, `stuffed-${i}@example.com`, 'hunter2')).status).toBe(401);
  const next = await signIn(t.url, from, 'stuffed-next@example.com', 'hunter2');
  expect(next).toMatchObject({ status: 429, retryAfter: '1' });
  expect((await signIn(t.url, '127.0.2.2', 'stuffed-next@example.com', 'hunter2')).status).toBe(401);
  expect((await signIn(t.url, from, user.email, user.password)).status).toBe(201);
  clock.advance(900_000);
});

test('two instances on one Redis count the same failures, for known and unknown emails alike', async () => {
  const user = await provisionAccount(a.url);
  for (const [email, from] of [
    [user.email, '127.0.3.1'],
    [`nobody-${randomBytes(3).toString('hex')}@example.com`, '127.0.3.2'],
  ] as const) {
    expect(await attempts(3, a.url, from, email)).toEqual(['401', '401', '401']);
    expect(await attempts(2, b.url, from, email)).toEqual(['401', '401']);
    const [onA] = await attempts(1, a.url, from, email);
    const [onB] = await attempts(1, b.url, from, email, user.password);
    expect([onA, onB].map((s) => s!.slice(0, 3))).toEqual(['429', '429']);
  }
});

test('the Redis store counts and waits exactly as the in-process one', async () => {
  const redis = new Redis(REDIS_URL);
  const stores: Array<[string, SignInAttemptStore]> = [
    ['memory', new InMemorySignInStore()],
    ['redis', new RedisSignInStore(redis, `${prefix}equivalence:`)],
  ];
  const runs: Record<string, string[]> = {};
  for (const [name, store] of stores) {
    const own = new ManualClock(new Date('2030-01-01T00:00:00Z'));
    const throttle = new SignInThrottle(store, null, own);
    const log: string[] = [];
    const step = async (email: string, from: string, right: boolean) => {
      try {
        const attempt = await throttle.claim(email, from);
        if (right) await attempt.succeeded();
        log.push(right ? 'ok' : 'fail');
      } catch (error) {
        log.push(`wait ${(error as { details: { retry_after_seconds: number } }).details.retry_after_seconds}`);
      }
    };
    for (let i = 0; i < 7; i++) await step('victim@example.com', '10.0.0.1', false);
    own.advance(1_000);
    await step('victim@example.com', '10.0.0.1', false);
    await step('victim@example.com', '10.0.0.1', false);
    own.advance(2_000);
    await step('victim@example.com', '10.0.0.1', true);
    for (let i = 0; i < 12; i++) await step('victim@example.com', `10.0.1.${i % 4}`, false);
    await step('victim@example.com', '10.0.0.1', true);
    await step('victim@example.com', '10.0.9.9', true);
    for (let i = 0; i < 52; i++) await step(`u${i}@example.com`, '10.0.5.5', false);
    await step('victim@example.com', '2001:db8:1:2:aaaa::1', false);
    runs[name] = log;
  }
  await redis.quit();
  expect(runs.redis).toEqual(runs.memory);
  expect(runs.memory!.slice(0, 10)).toEqual(['fail', 'fail', 'fail', 'fail', 'fail', 'wait 1', 'wait 1', 'fail', 'wait 2', 'ok']);
});
