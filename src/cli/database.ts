import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import { AccountService } from '../domain/accounts/service';
import { KeyService } from '../domain/keys/service';
import { systemClock } from '../domain/shared/clock';
import { inProcessEventBus } from '../domain/shared/events';
import { ulidIds } from '../domain/shared/ids';
import { connectDatabase } from '../infra/database';
import { attachEmbeddedPostgres } from '../infra/embedded-postgres';

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
  close(): Promise<void>;
}

/**
 * The same domain services the planes use, on a migrated database with the configured plans
 * written. Events go to an in-process bus: a running gateway picks up tier and balance changes
 * when its short tier cache expires (seconds), and new keys need no notice.
 */
export async function openOperatorServices(config: Config): Promise<OperatorServices> {
  const db = await connectCommandDatabase(config);
  try {
    await db.orm.getMigrator().up();
    const bus = inProcessEventBus();
    const ids = ulidIds();
    const accounts = new AccountService(db.orm, systemClock, ids, bus, config.limits);
    await accounts.syncPlans();
    return { accounts, keys: new KeyService(db.orm, systemClock, ids, bus), close: () => db.close() };
  } catch (error) {
    await db.close();
    throw error;
  }
}
