import { mkdtempSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/infra/embedded-postgres';

/**
 * Tests need a PostgreSQL server: `DATABASE_URL` names one (CI: the machine's server);
 * without it an embedded one is started for the run. Each test file then makes its own
 * database on that server (test/support/database.ts), so files can run in parallel.
 */
declare global {
   
  var __embeddedPostgres: EmbeddedDatabase | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-pg-'));
  chmodSync(dir, 0o755);
  const db = await startEmbeddedPostgres(dir);
  globalThis.__embeddedPostgres = db;
  process.env.DATABASE_URL = db.url;
  process.env.TOLLGATE_TEST_EMBEDDED = '1';
}
