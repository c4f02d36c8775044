import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/infra/embedded-postgres';
import { startS3rver } from './s3';

/**
 * Tests need a PostgreSQL server: `DATABASE_URL` names one (CI: the machine's server);
 * without it an embedded one is started for the run. Each test file then makes its own
 * database on that server (test/support/database.ts), so files can run in parallel.
 * Likewise an S3-compatible server for the video storage: `TOLLGATE_TEST_S3_ENDPOINT`, or
 * s3rver started here (test/support/s3.ts); each file makes its own bucket.
 *
 * Every temporary file of the run goes under one directory of its own (TMPDIR for the test
 * workers): the global teardown removes it, and fails the run when a test left something there.
 */
declare global {
  var __embeddedPostgres: EmbeddedDatabase | undefined;
  var __s3rver: { stop(): Promise<void> } | undefined;
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
  // The pinned AWS SDK supports Node 20 and says at each start that later releases will not (docs/videos.md).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (!process.env.TOLLGATE_TEST_S3_ENDPOINT) {
    const s3 = await startS3rver();
    globalThis.__s3rver = s3;
    process.env.TOLLGATE_TEST_S3_ENDPOINT = s3.endpoint;
  }
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
