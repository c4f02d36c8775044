import type { Redis } from 'ioredis';
import { connectRedis } from './redis-connection';
import type { Logger } from 'pino';
import type { SharedHealth } from '../domain/routing/health';
import { waitForRedis } from './redis-limits-client';

/**
 * Deployment health shared by every instance on one Redis (domain/routing/health.ts): one hash
 * of cooled deployments (field: `<model>/<deployment>`, value: the cooldown's end in epoch ms),
 * written when an instance cools a deployment or sees it recover, and read whole by every
 * instance each `pollMs` (half a second: "within a second" with room for a slow poll). The hot
 * path never waits on Redis: it reads the breakers in memory that the poll updates. The hash
 * holds at most one field per deployment of the catalog.
 */
export class RedisSharedHealth implements SharedHealth {
  private timer: NodeJS.Timeout | null = null;
  private lastErrorLogAt = -Infinity;

  constructor(
    /** Its connection, which conversation affinity shares (redis-affinity.ts); closed with it. */
    readonly redis: Redis,
    private readonly key: string,
    private readonly log: Logger,
    private readonly pollMs = 500,
  ) {}

  publish(key: string, untilMs: number): void {
    const written = untilMs > 0 ? this.redis.hset(this.key, key, String(untilMs)) : this.redis.hdel(this.key, key);
    written.catch((error: unknown) => this.warn(error));
  }

  start(onSnapshot: (cooled: ReadonlyMap<string, number>) => void): void {
    const poll = () => {
      this.redis.hgetall(this.key).then(
        (fields) => onSnapshot(new Map(Object.entries(fields).map(([key, until]) => [key, Number(until)]))),
        (error: unknown) => this.warn(error),
      );
    };
    poll();
    this.timer = setInterval(poll, this.pollMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Redis down: each instance keeps its own view meanwhile; said at most every 10 s. */
  private warn(error: unknown): void {
    if (Date.now() - this.lastErrorLogAt < 10_000) return;
    this.lastErrorLogAt = Date.now();
    this.log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'redis (deployment health) unreachable: health is per instance until it is back',
    );
  }
}

export async function openRedisSharedHealth(url: string, keyPrefix: string, log: Logger): Promise<RedisSharedHealth> {
  const redis = connectRedis(url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 1_000,
    disconnectTimeout: 200,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
  });
  redis.on('error', () => undefined); // reported by the calls that fail (warn above)
  await waitForRedis(redis, 2_000);
  return new RedisSharedHealth(redis, `${keyPrefix}routing:cooled`, log);
}
