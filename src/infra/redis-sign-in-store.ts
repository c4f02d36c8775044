import type { Redis } from 'ioredis';
import { connectRedis } from './redis-connection';
import type { Logger } from 'pino';
import type { AttemptCounter, SignInAttemptStore } from '../domain/accounts/sign-in-store';
import { waitForRedis } from './redis-limits-client';

/**
 * Failed sign-ins counted in Redis, shared by every instance. One hash per counter (`f`:
 * failures, `u`: no attempt before this epoch ms) with the counter's memory as its TTL, and a
 * plain key per remembered (account, address). Each operation is one Lua script; the keys share
 * one hash tag so a Redis Cluster keeps them on one shard (sign-ins are few). The wait follows
 * the same rule as backoffMs (sign-in-rules.ts), with the rule's numbers passed in.
 */

/** KEYS: the counters. ARGV: now, then per counter: free failures, base ms, cap ms, memory ms. */
const CLAIM = `
local now = tonumber(ARGV[1])
local wait = 0
for _, key in ipairs(KEYS) do
  local untilAt = tonumber(redis.call('HGET', key, 'u') or '0')
  if untilAt - now > wait then wait = untilAt - now end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local o = 1 + (i - 1) * 4
  local free, base, cap, memory = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), ARGV[o + 4]
  local failures = redis.call('HINCRBY', key, 'f', 1)
  if failures >= free then
    redis.call('HSET', key, 'u', string.format('%.0f', now + math.min(cap, base * 2 ^ math.min(failures - free, 40))))
  end
  redis.call('PEXPIRE', key, memory)
end
return 0
`;

/** KEYS: counters to clear, counters to uncount, the key to remember. ARGV: how many to clear, how many to uncount, remember ms. */
const SUCCEEDED = `
local clear, uncount = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, clear do redis.call('DEL', KEYS[i]) end
for i = clear + 1, clear + uncount do
  if tonumber(redis.call('HGET', KEYS[i], 'f') or '0') > 0 then redis.call('HINCRBY', KEYS[i], 'f', -1) end
end
redis.call('SET', KEYS[#KEYS], '1', 'PX', ARGV[3])
return 1
`;

export class RedisSignInStore implements SignInAttemptStore {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  private key(name: string): string {
    return `${this.keyPrefix}signin:{signin}:${name}`;
  }

  async claim(counters: readonly AttemptCounter[], now: number): Promise<number> {
    const args = counters.flatMap(({ rule, memoryMs }) => [rule.freeFailures, rule.baseMs, rule.capMs, memoryMs]);
    return Number(await this.redis.eval(CLAIM, counters.length, ...counters.map((c) => this.key(c.key)), now, ...args));
  }

  async succeeded(outcome: { clear: readonly string[]; uncount: readonly string[]; remember: string; rememberMs: number }): Promise<void> {
    const keys = [...outcome.clear, ...outcome.uncount, outcome.remember].map((k) => this.key(k));
    await this.redis.eval(SUCCEEDED, keys.length, ...keys, outcome.clear.length, outcome.uncount.length, outcome.rememberMs);
  }

  async remembered(key: string): Promise<boolean> {
    return (await this.redis.exists(this.key(key))) === 1;
  }

  async close(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}

/** The store of REDIS_URL on its own connection, failing fast (the throttle then counts per instance). */
export async function openRedisSignInStore(url: string, keyPrefix: string, log: Logger): Promise<RedisSignInStore> {
  const redis = connectRedis(url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 1_000,
    disconnectTimeout: 200,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
  });
  let lastErrorLogAt = -Infinity;
  redis.on('error', (error: Error) => {
    if (Date.now() - lastErrorLogAt < 10_000) return;
    lastErrorLogAt = Date.now();
    log.warn({ err: error.message }, 'redis (sign-in throttle) unreachable');
  });
  await waitForRedis(redis, 2_000);
  return new RedisSignInStore(redis, keyPrefix);
}
