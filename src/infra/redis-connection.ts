import type { Redis, RedisOptions } from 'ioredis';

/**
 * A new ioredis connection. ioredis is required by the first one, not imported at startup: an
 * instance without REDIS_URL never loads it (about 1.6 MB of heap; docs/performance.md, "Load
 * only what serving uses").
 */
export function connectRedis(url: string, options: RedisOptions): Redis {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis: Client } = require('ioredis') as typeof import('ioredis');
  return new Client(url, options);
}
