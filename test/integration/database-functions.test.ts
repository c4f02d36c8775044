import { Client } from 'pg';
import { DATABASE_FUNCTIONS, functionDefinition } from '../../migrations/functions';
import { openDatabase } from '../../src/infra/database';
import { createTestDatabase } from '../support/database';

/** The body between the dollar quotes of a `create or replace function` statement. */
function bodyOf(definition: string): string {
  const start = definition.indexOf('$$');
  const end = definition.lastIndexOf('$$');
  if (start < 0 || end <= start) throw new Error('no $$-quoted body');
  return definition.slice(start + 2, end);
}

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  const orm = await openDatabase(db.url, 1);
  await orm.close();
  client = new Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

test('a migrated database runs exactly the function definitions in migrations/functions', async () => {
  const { rows } = await client.query<{ name: string; body: string }>(
    `select p.proname as name, p.prosrc as body from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.proname like 'tollgate\\_%' order by p.proname`,
  );
  // Every function of ours has its file (and one definition: no stale overload left behind).
  expect(rows.map((r) => r.name)).toEqual([...DATABASE_FUNCTIONS].sort());
  for (const row of rows)
    expect({ name: row.name, body: row.body }).toEqual({
      name: row.name,
      body: bodyOf(functionDefinition(row.name as (typeof DATABASE_FUNCTIONS)[number])),
    });
});

test('each definition file is one create-or-replace of the function it is named for', () => {
  for (const name of DATABASE_FUNCTIONS) {
    const definition = functionDefinition(name);
    expect(definition).toMatch(new RegExp(`^create or replace function ${name}\\(`));
    expect(definition.match(/create or replace function/g)).toHaveLength(1);
  }
});
