import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { ReflectMetadataProvider, type MikroORM as AnyMikroORM } from '@mikro-orm/core';
import { ENTITIES } from '../domain/entities';
import { MIGRATION_NAMES } from '../../migrations/names';

/**
 * MikroORM's migrator (`@mikro-orm/migrations`, with umzug and its command-line parser) and the
 * migration classes, which import it, load on the first `orm.getMigrator()`: an instance whose
 * database is already migrated never needs them (openDatabase and databaseReady ask with one
 * query), and a module once loaded stays in memory for the life of the process.
 */
const migratorOnFirstUse = {
  register(orm: AnyMikroORM): void {
    orm.config.registerExtension('@mikro-orm/migrator', () => {
      /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, see above */
      const { Migrator } = require('@mikro-orm/migrations') as typeof import('@mikro-orm/migrations');
      orm.config.get('migrations').migrationsList ??= (require('../../migrations') as typeof import('../../migrations')).MIGRATIONS;
      /* eslint-enable @typescript-eslint/no-require-imports */
      return new Migrator(orm.em as EntityManager); // this driver's: PostgreSQL
    });
  },
};

export function ormOptions(databaseUrl: string, poolMax = 10): Options {
  return {
    clientUrl: databaseUrl,
    entities: ENTITIES,
    metadataProvider: ReflectMetadataProvider,
    discovery: { disableDynamicFileAccess: true },
    extensions: [migratorOnFirstUse],
    migrations: { transactional: true, allOrNothing: true, snapshot: false, silent: true },
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

/** How pending migrations are applied, once openDatabase has found some. */
export type ApplyMigrations = (orm: MikroORM) => Promise<void>;

/** In this process, with MikroORM's migrator (which then stays loaded: see migratorOnFirstUse). */
export const migrateInProcess: ApplyMigrations = async (orm) => {
  await orm.getMigrator().up();
};

/**
 * Connects and applies every pending migration (start-up, the CLI and tests alike; `tollgate
 * start` has them applied by a child process, src/cli/migrate-apart.ts). A missing database is
 * created by the ORM; a server that cannot be reached is one clear error.
 */
export async function openDatabase(
  databaseUrl: string,
  poolMax?: number,
  applyMigrations: ApplyMigrations = migrateInProcess,
): Promise<MikroORM> {
  const orm = await connectDatabase(databaseUrl, poolMax);
  try {
    if ((await pendingMigrations(orm)).length > 0) await applyMigrations(orm);
  } catch (error) {
    await orm.close();
    throw error;
  }
  return orm;
}

/** PostgreSQL's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

/**
 * The committed migrations (migrations/names.ts) that the database has not applied, from
 * MikroORM's own table of applied ones, as the migrator would list them, without loading it.
 */
export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  const { tableName = 'mikro_orm_migrations' } = orm.config.get('migrations');
  const schema = orm.config.get('schema') ?? orm.em.getPlatform().getDefaultSchemaName();
  let rows: { name: string }[];
  try {
    rows = await orm.em.getConnection().execute(`select name from ${tableName.includes('.') ? tableName : `${schema}.${tableName}`}`);
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return [...MIGRATION_NAMES]; // never migrated
    throw error;
  }
  // Read as the migrator reads them: a name recorded with its file's extension counts without it.
  const applied = new Set(rows.map((row) => row.name.replace(/\.[jt]s$/, '')));
  return MIGRATION_NAMES.filter((name) => !applied.has(name));
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
    return (await pendingMigrations(orm)).length === 0;
  } catch {
    return false;
  }
}
