import type { Redis } from 'ioredis';
import { connectRedis } from './redis-connection';
import type { AdmissionLogger } from '../domain/limits/admission';
import { RedisLimitStore } from './redis-limit-store';

/** How long start-up waits for Redis before serving on local limits (fail-open). */
const REDIS_CONNECT_WAIT_MS = 2_000;

/**
 * The shared limit store of REDIS_URL, on its own connection. The client fails fast instead of
 * queueing (no offline queue, no retry of a command, short timeouts), so an outage costs
 * milliseconds per request before the local fallback takes over, not seconds.
 */
export async function openRedisLimitStore(url: string, options: { keyPrefix?: string; log: AdmissionLogger }): Promise<RedisLimitStore> {
  const redis = connectRedis(url, {
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
    // The script calls of every request started in one tick leave in one write: under load, a
    // socket write per call costs the gateway more CPU than the call itself.
    enableAutoPipelining: true,
  });
  let lastErrorLogAt = -Infinity;
  redis.on('error', (error: Error) => {
    // ioredis reports every failed reconnect; one line per 10 s is enough.
    if (Date.now() - lastErrorLogAt < 10_000) return;
    lastErrorLogAt = Date.now();
    options.log.warn({ err: error.message }, 'redis (rate limits) unreachable');
  });
  await waitForRedis(redis, REDIS_CONNECT_WAIT_MS);
  return new RedisLimitStore(redis, { keyPrefix: options.keyPrefix, quitOnClose: true });
}

/** Resolves when Redis is ready, fails to connect, or the wait is over, whichever comes first. */
export function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
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
