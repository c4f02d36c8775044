import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Stops the embedded server, removes the run's directory (its data too), and names what tests left behind. */
export default async function globalTeardown(): Promise<void> {
  await globalThis.__embeddedPostgres?.stop();
  await globalThis.__s3rver?.stop();
  const run = globalThis.__tollgateTestRun;
  if (!run) return;
  const left = readdirSync(join(run.dir, 'tmp'));
  rmSync(run.dir, { recursive: true, force: true });
  if (left.length > 0)
    throw new Error(`tests left temporary files behind (removed now; each test removes what it makes): ${left.join(', ')}`);
}
