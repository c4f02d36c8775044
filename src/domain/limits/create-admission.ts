import type { MikroORM } from '@mikro-orm/postgresql';
import { Redis } from 'ioredis';
import type { Clock } from '../shared/clock';
import type { EventBus } from '../shared/events';
import { AdmissionService, type AdmissionLogger } from './admission';
import { InMemoryLimitStore } from './store-memory';
import { RedisLimitStore } from './store-redis';
import { accountTierSourceFromOrm, TierLookup } from './tier-lookup';
import type { Tier } from './tiers';

export interface AdmissionSetup {
  orm: MikroORM;
  clock: Clock;
  bus: EventBus;
  log: AdmissionLogger;
  /** Null: in-process limits (one instance only). */
  redisUrl: string | null;
  /** Starts every Redis key; default `tollgate:`. */
  redisKeyPrefix?: string;
  tierCacheTtlMs?: number;
  slotTtlMs?: number;
  tiers?: readonly Tier[];
}

/** How long start-up waits for Redis before serving on local limits (fail-open). */
const REDIS_CONNECT_WAIT_MS = 2_000;

/**
 * Builds admission control from configuration: Redis-backed when REDIS_URL is set (the
 * limits are shared by every instance), in-process otherwise. The Redis client fails fast
 * instead of queueing (no offline queue, one retry, short timeouts), so an outage costs
 * milliseconds per request before the local fallback takes over, not seconds.
 */
export async function createAdmissionService(setup: AdmissionSetup): Promise<AdmissionService> {
  const tiers = new TierLookup(accountTierSourceFromOrm(setup.orm), setup.clock, { ttlMs: setup.tierCacheTtlMs, tiers: setup.tiers, bus: setup.bus });
  const common = { tiers, clock: setup.clock, log: setup.log, slotTtlMs: setup.slotTtlMs };
  if (!setup.redisUrl) return new AdmissionService({ ...common, store: new InMemoryLimitStore() });

  const redis = new Redis(setup.redisUrl, {
    enableOfflineQueue: false,
    // An admission is decided when it is asked (fail-open when Redis does not answer): a command
    // replayed after a reconnect would take a slot nobody will ever give back.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 1_000,
    // Closing while reconnecting leaves ioredis waiting this long for a socket that is already gone.
    disconnectTimeout: 200,
    // Keep reconnecting in the background (capped backoff) so the shared limits come back by themselves.
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
  });
  let lastErrorLogAt = -Infinity;
  redis.on('error', (error: Error) => {
    // ioredis reports every failed reconnect; one line per 10 s is enough.
    if (Date.now() - lastErrorLogAt < 10_000) return;
    lastErrorLogAt = Date.now();
    setup.log.warn({ err: error.message }, 'redis (rate limits) unreachable');
  });
  await waitForRedis(redis, REDIS_CONNECT_WAIT_MS);
  const store = new RedisLimitStore(redis, { keyPrefix: setup.redisKeyPrefix, quitOnClose: true });
  return new AdmissionService({ ...common, store, fallbackStore: new InMemoryLimitStore() });
}

/** Resolves when Redis is ready, fails to connect, or the wait is over, whichever comes first. */
function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
    redis.once('error', done);
  });
}
