import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ReflectMetadataProvider } from '@mikro-orm/core';
import { ENTITIES } from '../domain/entities';
import { MIGRATIONS } from '../../migrations';

export function ormOptions(databaseUrl: string, poolMax = 10): Options {
  return {
    clientUrl: databaseUrl,
    entities: ENTITIES,
    metadataProvider: ReflectMetadataProvider,
    discovery: { disableDynamicFileAccess: true },
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: poolMax },
    // Entities carry bigint money; let MikroORM map bigint columns to JS bigint.
    forceEntityConstructor: false,
    debug: false,
    allowGlobalContext: false,
  };
}

/** Connects and applies every pending migration (start-up and tests alike). */
export async function openDatabase(databaseUrl: string, poolMax?: number): Promise<MikroORM> {
  const orm = await MikroORM.init(ormOptions(databaseUrl, poolMax));
  await orm.getMigrator().up();
  return orm;
}

/** True when the database answers and no migration is pending (for /readyz). */
export async function databaseReady(orm: MikroORM): Promise<boolean> {
  try {
    const pending = await orm.getMigrator().getPendingMigrations();
    return pending.length === 0;
  } catch {
    return false;
  }
}
