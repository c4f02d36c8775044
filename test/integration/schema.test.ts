import { MikroORM } from '@mikro-orm/postgresql';
import { openDatabase } from '../../src/infra/database';
import { createTestDatabase } from '../support/database';

test('the committed migrations produce exactly the schema the entities describe', async () => {
  const db = await createTestDatabase();
  let orm: MikroORM | undefined;
  try {
    orm = await openDatabase(db.url);
    expect(await orm.getMigrator().getPendingMigrations()).toEqual([]);
    const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    expect(diff.trim()).toBe('');
    // Applying migrations again is a no-op (second start reuses the data).
    await orm.getMigrator().up();
  } finally {
    await orm?.close();
    await db.drop();
  }
});
