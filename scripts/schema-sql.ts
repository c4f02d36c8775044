// Prints the SQL that brings an empty database to the entities' schema; used to write migrations.
import 'reflect-metadata';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from '../src/infra/database';

async function main() {
  const orm = await MikroORM.init({ ...ormOptions(process.argv[2]), migrations: { migrationsList: [] } });
  process.stdout.write(await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false }));
  await orm.close();
}
void main();
