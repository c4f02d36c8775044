import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/*
 * The database functions of billing, each defined once: its current `create or replace
 * function` is its own .sql file here, which migrations load (never a copy in a migration).
 * To change one: edit its file and add a migration that runs functionDefinition(name), so
 * databases migrated before pick the change up; on a fresh database the earlier migrations
 * that load the file already create the new version, and the new migration replaces it with
 * the same text. Older versions of a function stay written out in the migrations that
 * introduced them (history, and what their `down` restores). A test checks that a migrated
 * database runs exactly these definitions.
 */
export const DATABASE_FUNCTIONS = [
  'tollgate_take_hold',
  'tollgate_close_hold',
  'tollgate_take_lease',
  'tollgate_apply_lease_ops',
  'tollgate_usage_daily_add',
  'tollgate_usage_partitions',
] as const;

export type DatabaseFunction = (typeof DATABASE_FUNCTIONS)[number];

/** The function's `create or replace function …` statement, read from its .sql file. */
export function functionDefinition(name: DatabaseFunction): string {
  return readFileSync(definitionFile(`${name}.sql`), 'utf8');
}

/**
 * Beside this module in the source tree. Compiled output (dist/, or a test's build) holds no
 * .sql files: there it is the nearest migrations/functions/ up from the compiled module.
 */
function definitionFile(file: string): string {
  const beside = join(__dirname, file);
  if (existsSync(beside)) return beside;
  for (let dir = dirname(__dirname); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'migrations', 'functions', file);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${file} not found beside ${__dirname} nor in a migrations/functions/ above it`);
}
