import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import pino from 'pino';
import type { KeyPrincipal } from '../../src/domain/shared/principal';
import { AdmissionService } from '../../src/domain/limits/admission';
import { InMemoryLimitStore } from '../../src/domain/limits/store-memory';
import { TierLookup } from '../../src/domain/limits/tier-lookup';
import { ManualClock, systemClock } from '../../src/domain/shared/clock';
import { admitApiKeyRequests } from '../../src/rest/admission';
import { errorHandler } from '../../src/rest/http';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * Rate-limit headers and refusals over real HTTP, on a Tollgate whose clock is a
 * ManualClock: window arithmetic is exact and nothing sleeps.
 */

const DURATION = /^(0s|[1-9]\d{0,2}ms|[1-9]?\d(\.\d{1,3})?s|(\d+h)?\d+m\d+(\.\d{1,3})?s)$/;
const TOKEN_HEADERS = ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'];

let t: TestTollgate;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  t = await startTestTollgate({ clock });
});
afterAll(async () => t?.stop());

/** A fresh prepaid account ($1 of top-ups: tier 1) with a prepaid key and a plan key (starter: 20 RPM). */
async function freshAccount() {
  const account = await provisionAccount(t.url, { fundsMicro: '1000000', plan: 'starter' });
  const prepaid = await createKey(t.url, account.sessionToken);
  const plan = await createKey(t.url, account.sessionToken, { name: 'plan', kind: 'plan' });
  return { ...account, prepaid: prepaid.secret, prepaidKeyId: prepaid.id, plan: plan.secret };
}

const headersOf = (h: Headers) => Object.fromEntries([...h].filter(([name]) => name.startsWith('x-ratelimit-') || name === 'retry-after'));

test('a success carries all six headers; the rolling minute shows in remaining and reset', async () => {
  const a = await freshAccount();
  const first = await call(`${t.url}/v1/models`, { token: a.prepaid });
  expect(first.status).toBe(200);
  expect(headersOf(first.headers)).toEqual({
    'x-ratelimit-limit-requests': '100',
    'x-ratelimit-remaining-requests': '99',
    'x-ratelimit-reset-requests': '1m0s',
    'x-ratelimit-limit-tokens': '200000',
    'x-ratelimit-remaining-tokens': '200000',
    'x-ratelimit-reset-tokens': '0s',
  });
  clock.advance(1_500);
  const second = await call(`${t.url}/v1/models`, { token: a.prepaid });
  expect(second.headers.get('x-ratelimit-remaining-requests')).toBe('98');
  expect(second.headers.get('x-ratelimit-reset-requests')).toBe('58.5s');
  for (const [name, value] of Object.entries(headersOf(second.headers)))
    if (name.startsWith('x-ratelimit-reset')) expect(value).toMatch(DURATION);
  // Slots are freed when the answers close.
  expect(await t.tollgate.services.admission.slotsInUse(a.accountId)).toBe(0);
});

test('an error answer to an API key carries the headers too; a plan key gets the request headers only', async () => {
  const a = await freshAccount();
  const refused = await call(`${t.url}/v1/images/models`, { token: a.plan });
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe('api_wallet_key_required');
  expect(headersOf(refused.headers)).toEqual({
    'x-ratelimit-limit-requests': '20',
    'x-ratelimit-remaining-requests': '19',
    'x-ratelimit-reset-requests': '1m0s',
  });
  const listed = await call(`${t.url}/v1/models`, { token: a.plan });
  expect(listed.status).toBe(200);
  expect(listed.headers.get('x-ratelimit-remaining-requests')).toBe('18');
  for (const name of TOKEN_HEADERS) expect(listed.headers.has(name)).toBe(false);
  // A wrong key is nobody's: 401 without rate-limit headers.
  const wrong = await call(`${t.url}/v1/models`, { token: 'tgk_wrong' });
  expect(wrong.status).toBe(401);
  expect(wrong.headers.has('x-ratelimit-limit-requests')).toBe(false);
});

test('the sixth request within a rolling second is refused: 429 rate_limited with Retry-After and headers', async () => {
  const a = await freshAccount();
  for (let i = 0; i < 5; i++) expect((await call(`${t.url}/v1/models`, { token: a.prepaid })).status).toBe(200);
  const refused = await call(`${t.url}/v1/models`, { token: a.prepaid });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({
    error: {
      code: 'rate_limited',
      message: 'Rate limit reached: 5 requests per second for this account (tier 1). Retry after 1 s.',
      details: { limit: 'requests_per_second', limit_value: 5, reset: '1s', retry_after_seconds: 1 },
    },
  });
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('95'); // the refusal was not counted
  expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('200000');
  clock.advance(1_000);
  const again = await call(`${t.url}/v1/models`, { token: a.prepaid });
  expect(again.status).toBe(200);
  expect(again.headers.get('x-ratelimit-remaining-requests')).toBe('94');
});

test("a plan key's per-user minute: the 21st request is refused until the first leaves", async () => {
  const a = await freshAccount();
  for (let i = 0; i < 20; i++) expect((await call(`${t.url}/v1/models`, { token: a.plan })).status).toBe(200);
  clock.advance(15_000);
  const refused = await call(`${t.url}/v1/models`, { token: a.plan });
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({
    code: 'rate_limited',
    details: { limit: 'requests_per_minute', limit_value: 20, reset: '45s', retry_after_seconds: 45 },
  });
  expect(refused.headers.get('retry-after')).toBe('45');
  expect(headersOf(refused.headers)).toEqual({
    'x-ratelimit-limit-requests': '20',
    'x-ratelimit-remaining-requests': '0',
    'x-ratelimit-reset-requests': '45s',
    'retry-after': '45',
  });
  // The prepaid key of the same account is limited per account, apart from the plan user.
  expect((await call(`${t.url}/v1/models`, { token: a.prepaid })).status).toBe(200);
  clock.advance(45_000);
  expect((await call(`${t.url}/v1/models`, { token: a.plan })).status).toBe(200);
});

test('concurrency: with every slot held, a request gets 429 api_concurrency_limit; released slots admit again', async () => {
  const a = await freshAccount();
  const admission = t.tollgate.services.admission;
  const principal: KeyPrincipal = {
    type: 'key',
    keyId: a.prepaidKeyId,
    accountId: a.accountId,
    userId: null,
    kind: 'prepaid',
    monthlySpendLimitMicro: null,
    plan: null,
  };
  const jobs = await Promise.all([0, 1, 2, 3, 4].map((i) => admission.acquireSlot(a.accountId, { slotId: `video:${i}` })));
  const refused = await call(`${t.url}/v1/models`, { token: a.prepaid });
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({
    code: 'api_concurrency_limit',
    details: { limit: 'concurrent_requests', limit_value: 5, retry_after_seconds: 1 },
  });
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('100');
  await jobs[0].release();
  const ticket = await admission.admit(principal); // an in-flight request holds the freed slot
  expect((await call(`${t.url}/v1/models`, { token: a.prepaid })).status).toBe(429);
  await ticket.release();
  expect((await call(`${t.url}/v1/models`, { token: a.prepaid })).status).toBe(200);
  await Promise.all(jobs.map((j) => j.release()));
});

test('an operator tier change raises the limits in the headers (after the 5 s tier cache)', async () => {
  const a = await freshAccount();
  expect((await call(`${t.url}/v1/models`, { token: a.prepaid })).headers.get('x-ratelimit-limit-requests')).toBe('100');
  const pinned = await graphql(
    t.url,
    'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:3}){tier}}',
    { a: a.accountId },
    ADMIN_TOKEN,
  );
  expect(pinned.data.setAccountTier.tier).toBe(3);
  clock.advance(5_000);
  const after = await call(`${t.url}/v1/models`, { token: a.prepaid });
  expect(after.headers.get('x-ratelimit-limit-requests')).toBe('2000');
  expect(after.headers.get('x-ratelimit-remaining-requests')).toBe('1998');
  expect(after.headers.get('x-ratelimit-limit-tokens')).toBe('5000000');
  // Back to automatic, with $50 of lifetime top-ups now: tier 2.
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:null}){tier}}', { a: a.accountId }, ADMIN_TOKEN);
  await graphql(
    t.url,
    'mutation($a:ID!,$m:String!){addFunds(input:{accountId:$a,amountMicro:$m}){id}}',
    { a: a.accountId, m: '49000000' },
    ADMIN_TOKEN,
  );
  clock.advance(5_000);
  expect((await call(`${t.url}/v1/models`, { token: a.prepaid })).headers.get('x-ratelimit-limit-requests')).toBe('500');
});

describe('the middleware on a server of our own', () => {
  let server: Server;
  let url: string;
  let admission: AdmissionService;
  const principal: KeyPrincipal = {
    type: 'key',
    keyId: 'key_1',
    accountId: 'acct_slow',
    userId: null,
    kind: 'prepaid',
    monthlySpendLimitMicro: null,
    plan: null,
  };
  let entered: () => void = () => undefined;
  let finishSlow: () => void = () => undefined;

  beforeAll(async () => {
    const tiers = new TierLookup(async () => ({ lifetimeTopUpsMicro: 0n, tierOverride: 1 }), systemClock);
    admission = new AdmissionService({ store: new InMemoryLimitStore(), tiers, clock: systemClock });
    const app = express();
    app.use((_req, res, next) => {
      res.locals.principal = principal; // what requireApiKey leaves
      res.locals.facts = { requestId: 'req_1' };
      next();
    });
    app.use(admitApiKeyRequests(admission));
    app.get('/slow', async (_req, res) => {
      entered();
      await new Promise<void>((resolve) => {
        finishSlow = resolve;
        res.once('close', () => resolve());
      });
      if (!res.writableEnded && !res.destroyed) res.json({ done: true });
    });
    app.get('/fails', () => {
      throw new Error('a defect');
    });
    app.use(errorHandler(pino({ level: 'silent' })));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await admission.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function waitForSlots(expected: number): Promise<void> {
    for (let i = 0; i < 200 && (await admission.slotsInUse(principal.accountId)) !== expected; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await admission.slotsInUse(principal.accountId)).toBe(expected);
  }

  test('a client that disconnects mid-request frees its slot', async () => {
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const abort = new AbortController();
    const pending = fetch(`${url}/slow`, { signal: abort.signal }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    await inHandler;
    expect(await admission.slotsInUse(principal.accountId)).toBe(1);
    abort.abort();
    expect(await pending).toBe('AbortError');
    await waitForSlots(0);
  });

  test('a finished answer and a failed one free their slots; the headers come before the body', async () => {
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const pending = fetch(`${url}/slow`);
    await inHandler;
    finishSlow();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('100');
    await waitForSlots(0);
    const failed = await fetch(`${url}/fails`);
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
    await waitForSlots(0);
  });
});
