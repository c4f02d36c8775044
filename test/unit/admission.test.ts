import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { KeyPrincipal } from '../../src/domain/shared/principal';
import { AdmissionService } from '../../src/domain/limits/admission';
import type { AdmissionTicket } from '../../src/domain/limits/ticket';
import { RateLimitRefusal } from '../../src/domain/limits/refusals';
import type { LimitStore } from '../../src/domain/limits/store';
import { InMemoryLimitStore } from '../../src/domain/limits/store-memory';
import { RedisLimitStore } from '../../src/infra/redis-limit-store';
import { TierLookup, type AccountTierInputs } from '../../src/domain/limits/tier-lookup';
import { TOPIC_ACCOUNT_CHANGED } from '../../src/domain/shared/events';
import { ManualClock } from '../../src/domain/shared/clock';
import { inProcessEventBus } from '../../src/domain/shared/events';

/**
 * Admission with a ManualClock. The same table runs against the in-process store and the
 * Redis store (Lua scripts), so both implement the same rolling-window semantics.
 */

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = `tollgate:test-${randomBytes(4).toString('hex')}:`;

let redis: Redis;
const opened: AdmissionService[] = [];

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close()));
});
afterAll(async () => {
  const keys = await redis.keys(`${KEY_PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const prepaidKey = (accountId: string): KeyPrincipal => ({
  type: 'key',
  keyId: `key_${accountId}`,
  accountId,
  userId: null,
  kind: 'prepaid',
  monthlySpendLimitMicro: null,
  plan: null,
});

const planKey = (userId: string, requestsPerMinute: number, keyId = `key_${userId}`): KeyPrincipal => ({
  type: 'key',
  keyId,
  accountId: `acct_of_${userId}`,
  userId,
  kind: 'plan',
  monthlySpendLimitMicro: null,
  plan: { id: 'plan_1', name: 'starter', models: [], monthlyAllowanceMicro: 1n, requestsPerMinute },
});

/** The refusal of an attempt: a promise, or a call that may refuse at once (an in-process store admits without a promise). */
async function refusal(attempt: Promise<unknown> | (() => unknown)): Promise<RateLimitRefusal> {
  try {
    await (typeof attempt === 'function' ? attempt() : attempt);
  } catch (error) {
    if (error instanceof RateLimitRefusal) return error;
    throw error;
  }
  throw new Error('expected a RateLimitRefusal');
}

const uniqueId = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

describe.each(['memory', 'redis'] as const)('admission with the %s store', (kind) => {
  function setup(options: { slotTtlMs?: number } = {}) {
    const clock = new ManualClock(new Date(T0));
    const accounts = new Map<string, AccountTierInputs>();
    const bus = inProcessEventBus();
    const tiers = new TierLookup(async (id) => accounts.get(id) ?? null, clock, { ttlMs: 5_000, bus });
    const store: LimitStore = kind === 'memory' ? new InMemoryLimitStore() : new RedisLimitStore(redis, { keyPrefix: KEY_PREFIX });
    // Heartbeats are run by hand: the timer works in real time, the windows in ManualClock time.
    const instance = () => {
      const service = new AdmissionService({ store, tiers, clock, slotTtlMs: options.slotTtlMs, heartbeatIntervalMs: 3_600_000 });
      opened.push(service);
      return service;
    };
    const admission = instance();
    /** A new account at a pinned tier (tier 1: 5 RPS, 100 RPM, 200k TPM, 5 concurrent). */
    const account = (tier = 1) => {
      const id = uniqueId('acct');
      accounts.set(id, { lifetimeTopUpsMicro: 0n, tierOverride: tier });
      return prepaidKey(id);
    };
    /** Admits and releases at once: a finished request, recorded in the windows. */
    const request = async (principal: KeyPrincipal) => {
      const ticket = await admission.admit(principal);
      await ticket.release();
      return ticket;
    };
    return { clock, accounts, bus, tiers, admission, account, request, secondInstance: instance };
  }

  test('headers of a first request, then of one 1.5 s later (rolling minute)', async () => {
    const { clock, admission, account } = setup();
    const key = account();
    const first = await admission.admit(key);
    expect(first.headers()).toEqual({
      'x-ratelimit-limit-requests': '100',
      'x-ratelimit-remaining-requests': '99',
      'x-ratelimit-reset-requests': '1m0s',
      'x-ratelimit-limit-tokens': '200000',
      'x-ratelimit-remaining-tokens': '200000',
      'x-ratelimit-reset-tokens': '0s',
    });
    clock.advance(1_500);
    const second = await admission.admit(key);
    expect(second.headers()['x-ratelimit-remaining-requests']).toBe('98');
    expect(second.headers()['x-ratelimit-reset-requests']).toBe('58.5s');
    await first.release();
    await second.release();
  });

  test('RPS is a rolling second, not a clock second; refusal records nothing', async () => {
    const { clock, admission, account, request } = setup();
    const key = account();
    clock.advance(500);
    for (let i = 0; i < 5; i++) {
      await request(key); // at +500, +600, +700, +800, +900
      clock.advance(100);
    }
    clock.advance(100); // +1100: past the clock-second boundary, but 5 requests in the last second
    const refused = await refusal(admission.admit(key));
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 1 });
    expect(refused.details).toEqual({ limit: 'requests_per_second', limit_value: 5, reset: '400ms', retry_after_seconds: 1 });
    // The refused request left no trace: remaining still counts 5 requests.
    expect(refused.rateLimitHeaders?.['x-ratelimit-remaining-requests']).toBe('95');
    expect((await admission.currentHeaders(key))['x-ratelimit-remaining-requests']).toBe('95');
    clock.advance(399); // +1499: the request of +500 leaves at +1500
    await refusal(admission.admit(key));
    clock.advance(1);
    const admitted = await request(key);
    expect(admitted.headers()['x-ratelimit-remaining-requests']).toBe('94');
  });

  test('a refusal known from an earlier one is the one the store would give: same error, details and headers', async () => {
    const { clock, admission, account, request, secondInstance } = setup();
    const other = secondInstance(); // never refused anything: asks the store every time
    const key = account();
    // 100 RPM: a full minute, with settled tokens and a request in flight holding a reservation.
    const inFlight = await admission.admit(key);
    await inFlight.reserveTokens(40_000);
    for (let i = 0; i < 99; i++) {
      clock.advance(300);
      const ticket = await admission.admit(key);
      await ticket.settleTokens(i);
      await ticket.release();
    }
    clock.advance(1_000);
    const first = await refusal(admission.admit(key)); // from the store: now known here
    expect(first.details).toMatchObject({ limit: 'requests_per_minute' });
    for (const step of [1, 250, 4_000, 9_000]) {
      clock.advance(step);
      const known = await refusal(admission.admit(key));
      const asked = await refusal(other.admit(key));
      expect({ ...known, message: known.message }).toEqual({ ...asked, message: asked.message });
      expect(known.rateLimitHeaders).toEqual(asked.rateLimitHeaders);
    }
    await inFlight.release(); // this instance changed the windows: the next answer comes from the store again
    const afterRelease = await refusal(admission.admit(key));
    expect(afterRelease.rateLimitHeaders?.['x-ratelimit-remaining-tokens']).toBe(String(200_000 - (99 * 98) / 2));
    clock.advance(60_000);
    await request(key); // the window moved on: admitted
  });

  test('RPM is a rolling minute: the oldest request leaving frees one, reset counts to it', async () => {
    const { clock, admission, account, request } = setup();
    const key = account();
    let last: AdmissionTicket | undefined;
    for (let i = 0; i < 100; i++) {
      last = await request(key); // every 200 ms: exactly 5 per rolling second
      if (i < 99) clock.advance(200);
    }
    // Last at +19.8 s; the oldest (at +0) leaves at +60 s.
    expect(last?.headers()['x-ratelimit-remaining-requests']).toBe('0');
    expect(last?.headers()['x-ratelimit-reset-requests']).toBe('40.2s');
    clock.advance(200);
    const refused = await refusal(admission.admit(key));
    expect(refused.code).toBe('rate_limited');
    expect(refused.details).toMatchObject({ limit: 'requests_per_minute', limit_value: 100, reset: '40s', retry_after_seconds: 40 });
    expect(refused.retryAfterSeconds).toBe(40);
    clock.set(new Date(T0 + 59_999));
    await refusal(admission.admit(key));
    clock.set(new Date(T0 + 60_000));
    const admitted = await request(key);
    expect(admitted.headers()['x-ratelimit-remaining-requests']).toBe('0');
    expect(admitted.headers()['x-ratelimit-reset-requests']).toBe('200ms'); // the next oldest, at +200 ms
  });

  test('retry-after is the longest wait when a lowered tier leaves the window over the limit', async () => {
    const { clock, admission, accounts, tiers, account, request } = setup();
    const key = account(2); // 20 RPS
    for (let i = 0; i < 10; i++) {
      await request(key); // +0 … +900
      clock.advance(100);
    }
    accounts.set(key.accountId, { lifetimeTopUpsMicro: 0n, tierOverride: 1 }); // 5 RPS
    tiers.forget(key.accountId);
    clock.set(new Date(T0 + 950));
    // 10 in the last second, 5 allowed: the 6th oldest (+500) must leave first, at +1500.
    const refused = await refusal(admission.admit(key));
    expect(refused.details).toMatchObject({ limit: 'requests_per_second', reset: '550ms' });
  });

  test('TPM remaining = limit − (settled in the last 60 s + in flight); reset follows the oldest settled', async () => {
    const { clock, admission, account } = setup({ slotTtlMs: 120_000 }); // no heartbeat needed over these 70 s
    const key = account(); // 200,000 TPM
    const first = await admission.admit(key);
    let headers = await first.reserveTokens(150_000);
    expect(headers['x-ratelimit-remaining-tokens']).toBe('50000');
    expect(headers['x-ratelimit-reset-tokens']).toBe('1m0s'); // only reservations: they leave ≥ 60 s after settling

    clock.advance(1_000);
    const second = await admission.admit(key);
    expect(second.headers()['x-ratelimit-remaining-tokens']).toBe('50000');
    const refused = await refusal(() => second.reserveTokens(60_000));
    expect(refused.code).toBe('rate_limited');
    expect(refused.details).toMatchObject({
      limit: 'tokens_per_minute',
      limit_value: 200_000,
      requested_tokens: 60_000,
      remaining_tokens: 50_000,
      reset: '1m0s',
      retry_after_seconds: 60,
    });
    expect((await admission.currentHeaders(key))['x-ratelimit-remaining-tokens']).toBe('50000'); // nothing reserved

    clock.advance(9_000); // +10 s
    headers = await first.settleTokens(30_000);
    expect(headers['x-ratelimit-remaining-tokens']).toBe('170000');
    expect(headers['x-ratelimit-reset-tokens']).toBe('1m0s');
    expect(await first.settleTokens(99_999)).toEqual(headers); // settles once
    await first.release();

    clock.advance(20_000); // +30 s
    headers = await second.reserveTokens(60_000);
    expect(headers['x-ratelimit-remaining-tokens']).toBe('110000');
    expect(headers['x-ratelimit-reset-tokens']).toBe('40s');

    clock.advance(40_000); // +70 s: the usage settled at +10 s has left
    expect((await admission.currentHeaders(key))['x-ratelimit-remaining-tokens']).toBe('140000');
    await second.release(); // releasing drops the unsettled reservation
    expect((await admission.currentHeaders(key))['x-ratelimit-remaining-tokens']).toBe('200000');
  });

  test('a token refusal waits until enough settled usage has left', async () => {
    const { clock, admission, account } = setup();
    const key = account();
    const a = await admission.admit(key);
    await a.settleTokens(120_000); // at +0
    await a.release();
    clock.advance(10_000);
    const b = await admission.admit(key);
    await b.settleTokens(50_000); // at +10 s
    await b.release();
    clock.advance(10_000); // +20 s: 30,000 left; 100,000 needs the +0 entry gone (at +60 s)
    const c = await admission.admit(key);
    const refused = await refusal(c.reserveTokens(100_000));
    expect(refused.details).toMatchObject({ remaining_tokens: 30_000, reset: '40s', retry_after_seconds: 40 });
    expect(refused.retryAfterSeconds).toBe(40);
    await c.release();
  });

  test('an estimate above the whole TPM limit runs alone, never forever refused', async () => {
    const { admission, account } = setup();
    const key = account();
    const big = await admission.admit(key);
    const headers = await big.reserveTokens(250_000);
    expect(headers['x-ratelimit-remaining-tokens']).toBe('0'); // never negative
    const next = await admission.admit(key);
    await refusal(next.reserveTokens(1));
    await next.release();
    await big.release();
  });

  test('a deferred admission checks and takes the request windows, a slot and the token estimate in one step', async () => {
    const { admission, account } = setup();
    const key = account(); // 5 RPS, 100 RPM, 200,000 TPM, 5 concurrent
    const first = await admission.deferred(key);
    await first.reserveTokens(150_000);
    expect(first.headers()).toMatchObject({ 'x-ratelimit-remaining-requests': '99', 'x-ratelimit-remaining-tokens': '50000' });
    expect(await admission.slotsInUse(key.accountId)).toBe(1);

    // Over the token window: refused with the token details, and nothing recorded (no request, no slot).
    const second = await admission.deferred(key);
    const refused = await refusal(() => second.reserveTokens(60_000));
    expect(refused.details).toMatchObject({ limit: 'tokens_per_minute', requested_tokens: 60_000, remaining_tokens: 50_000 });
    expect(refused.rateLimitHeaders).toMatchObject({ 'x-ratelimit-remaining-requests': '99' });
    expect(await admission.slotsInUse(key.accountId)).toBe(1);
    expect(await second.recordUnserved()).toBeNull(); // its answer is the refusal, which carries the headers

    // The settled usage replaces the estimate at the release.
    await first.settleTokens(1_000);
    await first.release();
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
    expect((await admission.currentHeaders(key))['x-ratelimit-remaining-tokens']).toBe('199000');
  });

  test('a deferred admission refused by several limits reports the longest wait', async () => {
    const { clock, admission, account } = setup();
    const key = account();
    const big = await admission.deferred(key);
    await big.reserveTokens(190_000);
    await big.settleTokens(190_000);
    await big.release(); // 10,000 tokens left until +60 s
    for (let i = 0; i < 4; i++) await (await admission.deferred(key)).recordUnserved();
    clock.advance(100);
    // 5 requests in the second (the 6th waits ~900 ms) and 20,000 tokens more than fit (~60 s).
    const late = await admission.deferred(key);
    const refused = await refusal(() => late.reserveTokens(30_000));
    expect(refused.details).toMatchObject({ limit: 'tokens_per_minute', retry_after_seconds: 60 });
  });

  test('a request answered before its estimate is counted, holds no slot, and gets headers', async () => {
    const { admission, account } = setup();
    const key = account();
    const ticket = await admission.deferred(key);
    const headers = await ticket.recordUnserved();
    expect(headers).toMatchObject({ 'x-ratelimit-remaining-requests': '99', 'x-ratelimit-remaining-tokens': '200000' });
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
    expect(await ticket.recordUnserved()).toEqual(headers); // once
    await ticket.release();
  });

  test('a request whose client left before its admission frees the slot the admission takes', async () => {
    const { admission, account } = setup();
    const key = account();
    const ticket = await admission.deferred(key);
    await ticket.release(); // the client went away while its body was read
    await ticket.reserveTokens(10);
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
  });

  test(`admitted ${kind === 'memory' ? 'at once, without a promise' : 'by a round trip'}, settled at once before the release`, async () => {
    const { admission, account } = setup();
    const key = account();
    const ticket = await admission.deferred(key);
    const admitting = ticket.reserveTokens(10);
    expect(admitting instanceof Promise).toBe(kind !== 'memory');
    await admitting;
    expect(ticket.settleTokens(5)).toBeUndefined();
    await ticket.release();
    expect((await admission.currentHeaders(key))['x-ratelimit-remaining-tokens']).toBe('199995');
  });

  test('a request whose client left while it was being admitted frees its slot', async () => {
    const { admission, account } = setup();
    const key = account();
    const ticket = await admission.deferred(key);
    const admitted = ticket.reserveTokens(10);
    await ticket.release(); // the client went away meanwhile
    await admitted;
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
  });

  test('a subject known to be over its request window is refused before anything is read or asked', async () => {
    const { admission, account } = setup();
    const key = account();
    for (let i = 0; i < 5; i++) await (await admission.deferred(key)).recordUnserved();
    const next = await admission.deferred(key);
    const fromStore = await refusal(() => next.reserveTokens(10));
    expect(fromStore.details).toMatchObject({ limit: 'requests_per_second' });
    const known = await refusal(admission.deferred(key));
    expect(known.details).toEqual(fromStore.details);
  });

  test('concurrency: a slot per request in flight, freed by release (idempotent); refusal records nothing', async () => {
    const { clock, admission, account } = setup();
    const key = account(); // 5 concurrent, 5 RPS: space the requests out
    const held: AdmissionTicket[] = [];
    for (let i = 0; i < 5; i++) {
      held.push(await admission.admit(key));
      clock.advance(1_000);
    }
    expect(await admission.slotsInUse(key.accountId)).toBe(5);
    const refused = await refusal(admission.admit(key));
    expect(refused).toMatchObject({ status: 429, code: 'api_concurrency_limit', retryAfterSeconds: 1 });
    expect(refused.details).toEqual({ limit: 'concurrent_requests', limit_value: 5, retry_after_seconds: 1 });
    expect(refused.rateLimitHeaders?.['x-ratelimit-remaining-requests']).toBe('95');
    await held[0].release();
    await held[0].release();
    expect(await admission.slotsInUse(key.accountId)).toBe(4);
    held.push(await admission.admit(key));
    expect(held[5].headers()['x-ratelimit-remaining-requests']).toBe('94');
    await Promise.all(held.map((t) => t.release()));
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
  });

  test('long jobs hold slots (idempotent by slot id) that count against concurrency', async () => {
    const { admission, account } = setup();
    const key = account();
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await admission.acquireSlot(key.accountId, { slotId: `video:${i}` }));
    await admission.acquireSlot(key.accountId, { slotId: 'video:0' }); // the same job again: no second slot
    expect(await admission.slotsInUse(key.accountId)).toBe(4);
    const request = await admission.admit(key);
    expect((await refusal(admission.acquireSlot(key.accountId))).code).toBe('api_concurrency_limit');
    await jobs[0].release();
    const fifth = await admission.acquireSlot(key.accountId);
    await Promise.all([...jobs, fifth].map((j) => j.release()));
    await request.release();
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
  });

  test('slots expire without a heartbeat (a crashed holder) and live on with one', async () => {
    const { clock, admission, account, secondInstance } = setup({ slotTtlMs: 10_000 });
    const crashed = secondInstance(); // another instance on the same store that stops heart-beating
    const key = account();
    const kept = await admission.acquireSlot(key.accountId, { slotId: 'video:kept' });
    await crashed.acquireSlot(key.accountId, { slotId: 'video:crashed' });
    expect(await admission.slotsInUse(key.accountId)).toBe(2);
    clock.set(new Date(T0 + 8_000));
    await admission.refreshHeldSlots(); // the heartbeat of the live instance
    clock.set(new Date(T0 + 10_000));
    expect(await admission.slotsInUse(key.accountId)).toBe(1);
    clock.set(new Date(T0 + 18_000));
    expect(await admission.slotsInUse(key.accountId)).toBe(0);
    await kept.release();
  });

  test('plan keys: the per-user rolling minute only, no token headers, no concurrency limit', async () => {
    const { clock, admission } = setup();
    const user = uniqueId('usr');
    const held: AdmissionTicket[] = [];
    for (let i = 0; i < 3; i++) held.push(await admission.admit(planKey(user, 3, `key_${i}`))); // three keys, one user
    expect(held[2].headers()).toEqual({
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1m0s',
    });
    expect(await held[2].reserveTokens(1_000_000)).toEqual(held[2].headers()); // no token window
    const refused = await refusal(admission.admit(planKey(user, 3)));
    expect(refused.details).toMatchObject({ limit: 'requests_per_minute', limit_value: 3, retry_after_seconds: 60 });
    expect(refused.message).toContain("this user's plan");
    expect(refused.rateLimitHeaders).toEqual({
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1m0s',
    });
    await admission.admit(planKey(uniqueId('usr'), 3)); // another user has their own window
    // A plan lowered under what was used still shows 0 remaining, not a negative count.
    expect((await admission.currentHeaders(planKey(user, 2)))['x-ratelimit-remaining-requests']).toBe('0');
    clock.advance(60_000);
    expect((await admission.admit(planKey(user, 3))).headers()['x-ratelimit-remaining-requests']).toBe('2');
  });

  test('the tier is cached for the TTL, and an account-changed event drops it at once', async () => {
    const { clock, bus, accounts, admission, account } = setup();
    const key = account(1);
    expect((await admission.admit(key)).headers()['x-ratelimit-limit-requests']).toBe('100');
    accounts.set(key.accountId, { lifetimeTopUpsMicro: 0n, tierOverride: 3 });
    clock.advance(4_999);
    expect((await admission.admit(key)).headers()['x-ratelimit-limit-requests']).toBe('100');
    clock.advance(1);
    expect((await admission.admit(key)).headers()['x-ratelimit-limit-requests']).toBe('2000');
    accounts.set(key.accountId, { lifetimeTopUpsMicro: 50_000_000n, tierOverride: null }); // $50 of top-ups: tier 2
    bus.publish(TOPIC_ACCOUNT_CHANGED, { accountId: key.accountId });
    expect((await admission.admit(key)).headers()['x-ratelimit-limit-requests']).toBe('500');
  });
});

describe('tier lookup', () => {
  test('concurrent misses share one read, and a failing database serves the stale tier', async () => {
    const clock = new ManualClock(new Date(T0));
    let reads = 0;
    let failing = false;
    const tiers = new TierLookup(async () => {
      reads++;
      await new Promise((r) => setTimeout(r, 5));
      if (failing) throw new Error('connection refused');
      return { lifetimeTopUpsMicro: 500_000_000n, tierOverride: null };
    }, clock);
    const looked = await Promise.all(Array.from({ length: 20 }, () => tiers.tierOf('acct_1')));
    expect(looked.every((t) => t.tier === 3)).toBe(true);
    expect(reads).toBe(1);
    failing = true;
    clock.advance(6_000);
    expect((await tiers.tierOf('acct_1')).tier).toBe(3);
    await expect(tiers.tierOf('acct_never_seen')).rejects.toThrow('connection refused');
    tiers.close();
  });
});

describe('in-memory store housekeeping', () => {
  test('idle subjects are swept', async () => {
    const store = new InMemoryLimitStore();
    await store.admit({
      subject: 'acct:a',
      now: T0,
      requestId: 'r1',
      requestsPerSecond: 5,
      requestsPerMinute: 100,
      slot: { id: 's1', limit: 5, expiresAt: T0 + 30_000 },
    });
    await store.releaseSlot('acct:a', 's1');
    store.sweep(T0 + 59_999);
    expect(store.trackedSubjects).toBe(1);
    store.sweep(T0 + 60_000);
    expect(store.trackedSubjects).toBe(0);
  });
});

describe('ports and adapters', () => {
  test('the domain declares the store and never imports a Redis client (adapters live in src/infra)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts') && /from '(ioredis|.*\/infra\/[^']*)'/.test(readFileSync(path, 'utf8'))) offenders.push(path);
      }
    };
    walk(join(__dirname, '..', '..', 'src', 'domain'));
    expect(offenders).toEqual([]);
  });
});
