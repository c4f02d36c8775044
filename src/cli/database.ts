import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import { AccountService } from '../domain/accounts/service';
import { KeyService } from '../domain/keys/service';
import { systemClock } from '../domain/shared/clock';
import pino from 'pino';
import { inProcessEventBus } from '../domain/shared/events';
import { UsageService } from '../domain/usage/service';
import { createRedisEventBus, type ClosableEventBus } from '../infra/redis-event-bus';
import { ulidIds } from '../domain/shared/ids';
import { connectDatabase } from '../infra/database';
import { attachEmbeddedPostgres } from '../infra/embedded-postgres';
import { PgBillingReads } from '../infra/pg-billing-reads';
import { PgUsageReads } from '../infra/pg-usage-reads';
import { PgAccountStore } from '../infra/pg-account-store';

export interface CommandDatabase {
  orm: MikroORM;
  close(): Promise<void>;
}

/**
 * The database a one-off command works on: DATABASE_URL, or the embedded one under the data
 * directory (the running gateway's server, or one started for the command). Not yet migrated.
 */
export async function connectCommandDatabase(config: Config): Promise<CommandDatabase> {
  const embedded = config.databaseUrl ? null : await attachEmbeddedPostgres(config.dataDir);
  let orm: MikroORM;
  try {
    orm = await connectDatabase(config.databaseUrl ?? embedded!.url, 2);
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  return {
    orm,
    close: async () => {
      await orm.close();
      await embedded?.stop();
    },
  };
}

export interface OperatorServices {
  accounts: AccountService;
  keys: KeyService;
  usage: UsageService;
  close(): Promise<void>;
}

/**
 * The same domain services the planes use, on a migrated database with the configured plans
 * written. With REDIS_URL, events go through the gateways' Redis event bus, so a key revoked or
 * limited here is dropped from their key caches at once; without it (one gateway, no Redis) a
 * running gateway picks the change up when its key cache entry expires (a minute), and tier and
 * balance changes when its tier cache does (seconds).
 */
export async function openOperatorServices(config: Config): Promise<OperatorServices> {
  const db = await connectCommandDatabase(config);
  const bus: ClosableEventBus = config.redisUrl
    ? createRedisEventBus(config.redisUrl, config.redisKeyPrefix, pino({ level: 'silent' }), { queueUntilConnected: true })
    : { ...inProcessEventBus(), close: async () => undefined };
  const close = async () => {
    await bus.close();
    await db.close();
  };
  try {
    await db.orm.getMigrator().up();
    const ids = ulidIds();
    const accounts = new AccountService(new PgAccountStore(db.orm), systemClock, ids, bus, config.limits);
    await accounts.syncPlans();
    return {
      accounts,
      keys: new KeyService(db.orm, systemClock, ids, bus),
      usage: new UsageService(systemClock, new PgBillingReads(db.orm), new PgUsageReads(db.orm)),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
