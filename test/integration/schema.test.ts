import { MikroORM } from '@mikro-orm/postgresql';
import { connectDatabase, openDatabase, pendingMigrations } from '../../src/infra/database';
import { MIGRATIONS } from '../../migrations';
import { MIGRATION_NAMES } from '../../migrations/names';
import { createTestDatabase } from '../support/database';

test('the committed migrations produce exactly the schema the entities describe', async () => {
  const db = await createTestDatabase();
  let orm: MikroORM | undefined;
  try {
    orm = await openDatabase(db.url);
    expect(await orm.getMigrator().getPendingMigrations()).toEqual([]);
    expect(await pendingMigrations(orm)).toEqual([]);
    const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    expect(diff.trim()).toBe('');
    // Applying migrations again is a no-op (second start reuses the data).
    await orm.getMigrator().up();
  } finally {
    await orm?.close();
    await db.drop();
  }
});

test('the pending migrations are read without the migrator, as the migrator lists them', async () => {
  // The names a running instance checks are those of the classes the migrator applies.
  expect(MIGRATION_NAMES).toEqual(MIGRATIONS.map((m) => m.name));
  const db = await createTestDatabase();
  let orm: MikroORM | undefined;
  try {
    orm = await connectDatabase(db.url, 1);
    expect(await pendingMigrations(orm)).toEqual(MIGRATION_NAMES); // no table of applied migrations yet
    await orm.getMigrator().up({ to: MIGRATION_NAMES[1] });
    const listed = (await orm.getMigrator().getPendingMigrations()).map((m) => m.name);
    expect(listed).toEqual(MIGRATION_NAMES.slice(2));
    expect(await pendingMigrations(orm)).toEqual(listed);
  } finally {
    await orm?.close();
    await db.drop();
  }
});
