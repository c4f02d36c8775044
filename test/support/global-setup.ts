import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/infra/embedded-postgres';

/**
 * Tests need a PostgreSQL server: `DATABASE_URL` names one (CI: the machine's server);
 * without it an embedded one is started for the run. Each test file then makes its own
 * database on that server (test/support/database.ts), so files can run in parallel.
 *
 * Every temporary file of the run goes under one directory of its own (TMPDIR for the test
 * workers): the global teardown removes it, and fails the run when a test left something there.
 */
declare global {
  var __embeddedPostgres: EmbeddedDatabase | undefined;
  var __tollgateTestRun: { dir: string; embeddedDir: string | null } | undefined;
}

export default async function globalSetup(): Promise<void> {
  const runDir = mkdtempSync(join(tmpdir(), 'tollgate-test-run-'));
  // The embedded server runs as the `postgres` OS user when we are root: it must reach its directory.
  chmodSync(runDir, 0o755);
  const tests = join(runDir, 'tmp');
  mkdirSync(tests);
  process.env.TMPDIR = tests;
  globalThis.__tollgateTestRun = { dir: runDir, embeddedDir: null };
  if (process.env.DATABASE_URL) return;
  const dir = join(runDir, 'embedded-pg');
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  const db = await startEmbeddedPostgres(dir);
  globalThis.__embeddedPostgres = db;
  globalThis.__tollgateTestRun.embeddedDir = dir;
  process.env.DATABASE_URL = db.url;
  process.env.TOLLGATE_TEST_EMBEDDED = '1';
}
