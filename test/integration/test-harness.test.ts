import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestTollgate } from '../support/tollgate';
import { provisionVideoAccount, waitForVideo } from '../support/videos';

/** The test harness cleans up what it makes: nothing in the checkout, nothing left in /tmp. */
jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');

test('a gateway started by a test keeps its video files in a directory of its own, removed when it stops', async () => {
  const t = await startTestTollgate();
  const { apiKey } = await provisionVideoAccount(t.url);
  const created = await fetch(`${t.url}/v1/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sandbox/video', prompt: 'where does the file go', seconds: 2 }),
  }).then((r) => r.json() as Promise<{ id: string }>);
  expect((await waitForVideo(t.url, apiKey, created.id, undefined, 60_000)).status).toBe('completed');
  const own = readdirSync(tmpdir())
    .filter((name) => name.startsWith('tollgate-test-videos-'))
    .map((name) => join(tmpdir(), name));
  const holding = own.filter((dir) => existsSync(join(dir, 'videos', `${created.id}.mp4`)));
  expect(holding).toHaveLength(1);
  expect(existsSync(join(ROOT, '.tollgate', 'videos', 'videos', `${created.id}.mp4`))).toBe(false);
  await t.stop();
  expect(existsSync(holding[0]!)).toBe(false);
});

test('a test run without DATABASE_URL leaves nothing in the temporary directory: the embedded server and its data go with the run', async () => {
  // A run of its own (one small test file), with a temporary directory of its own to inspect.
  const tmp = mkdtempSync(join(tmpdir(), 'tollgate-nested-run-'));
  chmodSync(tmp, 0o755); // as root, the embedded server's OS user must reach it
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
    delete env.DATABASE_URL;
    delete env.TOLLGATE_TEST_EMBEDDED;
    delete env.JEST_WORKER_ID;
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci', 'test/integration/models.test.ts'],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 110_000 },
    );
    expect({ status: run.status, tail: run.status === 0 ? '' : run.stderr.slice(-2_000) }).toEqual({ status: 0, tail: '' });
    // jest_*: jest's own cache (it keeps it in the temporary directory on purpose), not the run's.
    expect(readdirSync(tmp).filter((name) => !name.startsWith('jest_'))).toEqual([]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
