import { mkdtempSync, chmodSync } from 'node:fs';
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
 */
declare global {
   
  var __embeddedPostgres: EmbeddedDatabase | undefined;
  var __s3rver: { stop(): Promise<void> } | undefined;
}

export default async function globalSetup(): Promise<void> {
  // The pinned AWS SDK supports Node 20 and says at each start that later releases will not (docs/videos.md).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (!process.env.TOLLGATE_TEST_S3_ENDPOINT) {
    const s3 = await startS3rver();
    globalThis.__s3rver = s3;
    process.env.TOLLGATE_TEST_S3_ENDPOINT = s3.endpoint;
  }
  if (process.env.DATABASE_URL) return;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-pg-'));
  chmodSync(dir, 0o755);
  const db = await startEmbeddedPostgres(dir);
  globalThis.__embeddedPostgres = db;
  process.env.DATABASE_URL = db.url;
  process.env.TOLLGATE_TEST_EMBEDDED = '1';
}
