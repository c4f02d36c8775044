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

/** A connection failure, with the address (password hidden) and the driver's reason. */
export class DatabaseUnreachableError extends Error {}

/** The URL with its password replaced, fit for messages and logs. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * Connects and applies every pending migration (start-up, the CLI and tests alike). A missing
 * database is created by the ORM; a server that cannot be reached is one clear error.
 */
export async function openDatabase(databaseUrl: string, poolMax?: number): Promise<MikroORM> {
  const orm = await connectDatabase(databaseUrl, poolMax);
  await orm.getMigrator().up();
  return orm;
}

/** Connects without migrating (`tollgate migrate` reports what it applies). */
export async function connectDatabase(databaseUrl: string, poolMax?: number): Promise<MikroORM> {
  try {
    return await MikroORM.init(ormOptions(databaseUrl, poolMax));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnreachableError(`cannot connect to PostgreSQL at ${redactDatabaseUrl(databaseUrl)}: ${reason}`);
  }
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
