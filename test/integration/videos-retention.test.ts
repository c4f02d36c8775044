import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../src/domain/shared/clock';
import { call, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

const DAY_MS = 24 * 3600_000;

let t: TestTollgate;
let files: ReturnType<typeof videoTestEnv>;
const clock = new ManualClock(new Date('2026-11-25T12:00:00.000Z'));

beforeAll(async () => {
  files = videoTestEnv({ TOLLGATE_VIDEO_SWEEP_INTERVAL_MS: '3600000' }); // swept by hand below
  t = await startTestTollgate({ env: files.env, clock });
});

afterAll(async () => {
  await t.stop();
  files.cleanup();
});

test('files are deleted 7 days after completion: the content answers 410 video_expired, the job row stays', async () => {
  const { apiKey } = await provisionVideoAccount(t.url);
  const created = await call(`${t.url}/v1/videos`, { token: apiKey, body: { model: 'sandbox/video', prompt: 'kept a week' } });
  const done = await waitForVideo(t.url, apiKey, created.body.id);
  expect(done.expires_at).toBe(Math.floor(clock.now().getTime() / 1000) + 7 * 24 * 3600);
  const path = join(files.env.TOLLGATE_VIDEO_DIR!, 'videos', `${created.body.id}.mp4`);
  expect(existsSync(path)).toBe(true);

  clock.advance(7 * DAY_MS - 60_000);
  expect((await t.tollgate.services.videoSweeper.sweep()).filesDeleted).toBe(0);
  expect((await call(`${t.url}/v1/videos/${created.body.id}/content`, { token: apiKey })).status).toBe(200);

  clock.advance(120_000);
  expect((await t.tollgate.services.videoSweeper.sweep()).filesDeleted).toBe(1);
  expect(existsSync(path)).toBe(false);
  const content = await call(`${t.url}/v1/videos/${created.body.id}/content`, { token: apiKey });
  expect(content.status).toBe(410);
  expect(content.body.error.code).toBe('video_expired');
  const row = await call(`${t.url}/v1/videos/${created.body.id}`, { token: apiKey });
  expect(row.status).toBe(200);
  expect(row.body.status).toBe('completed');
});

test('an idempotency key is kept 7 days, then forgotten', async () => {
  const { apiKey } = await provisionVideoAccount(t.url);
  const first = await call(`${t.url}/v1/videos`, {
    token: apiKey,
    body: { model: 'sandbox/video', prompt: 'week one' },
    headers: { 'Idempotency-Key': 'weekly' },
  });
  expect(first.status).toBe(202);
  clock.advance(6 * DAY_MS);
  expect(
    (
      await call(`${t.url}/v1/videos`, {
        token: apiKey,
        body: { model: 'sandbox/video', prompt: 'week two' },
        headers: { 'Idempotency-Key': 'weekly' },
      })
    ).status,
  ).toBe(409);
  clock.advance(DAY_MS + 1_000);
  const later = await call(`${t.url}/v1/videos`, {
    token: apiKey,
    body: { model: 'sandbox/video', prompt: 'week two' },
    headers: { 'Idempotency-Key': 'weekly' },
  });
  expect(later.status).toBe(202);
  expect(later.body.id).not.toBe(first.body.id);
  expect((await t.tollgate.services.videoSweeper.sweep()).keysForgotten).toBe(0); // the expired one was replaced in place
  clock.advance(7 * DAY_MS + 1_000);
  expect((await t.tollgate.services.videoSweeper.sweep()).keysForgotten).toBe(1);
});

test('a job past its deadline fails as timed out, releasing its hold and its slot', async () => {
  const { apiKey, accountId } = await provisionVideoAccount(t.url);
  const created = await call(`${t.url}/v1/videos`, {
    token: apiKey,
    body: { model: 'sandbox/video', prompt: 'never ends [sandbox:delay=600000]' },
  });
  await waitForVideo(t.url, apiKey, created.body.id, (v) => v.status === 'in_progress');
  clock.advance(3600_000 + 1_000); // the default deadline is an hour
  await t.tollgate.services.videoSweeper.sweep();
  const failed = await waitForVideo(t.url, apiKey, created.body.id);
  expect(failed).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
  expect(await t.tollgate.services.billing.listActiveHolds(accountId)).toEqual([]);
  expect(await t.tollgate.services.admission.slotsInUse(accountId)).toBe(0);
});
