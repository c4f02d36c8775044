import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { ManualClock } from '../../src/domain/shared/clock';
import { makeSandboxMp4 } from '../../src/providers/videos/mp4';
import { createTestDatabase } from '../support/database';
import { createTestBucket, type TestBucket } from '../support/s3';
import { call, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

/**
 * Video files in an S3 bucket (TOLLGATE_VIDEO_STORAGE=s3) on a real S3 server: two instances
 * that share the database and the bucket, and no directory. One runs the jobs, the other only
 * serves the API: it reads what the first wrote, by byte range, and its retention sweep
 * deletes the objects.
 */

const DAY_MS = 24 * 3600_000;
// A 1×1 PNG (image inputs are checked by their bytes).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

let database: { url: string; drop(): Promise<void> };
let bucket: TestBucket;
let worker: TestTollgate;
let api: TestTollgate;
const clock = new ManualClock(new Date('2026-12-06T12:00:00.000Z'));

const exists = (key: string) =>
  bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: key })).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  database = await createTestDatabase();
  bucket = await createTestBucket();
  // Fast sandbox jobs (as every video test), minus the local directory: the bucket replaces it.
  const fileEnv = videoTestEnv();
  fileEnv.cleanup();
  const { TOLLGATE_VIDEO_DIR: _dir, ...fast } = fileEnv.env;
  const env = { ...fast, ...bucket.env, TOLLGATE_VIDEO_SWEEP_INTERVAL_MS: '3600000' }; // swept by hand below
  worker = await startTestTollgate({ env, databaseUrl: database.url, clock });
  api = await startTestTollgate({ env: { ...env, TOLLGATE_VIDEO_WORKERS: '0' }, databaseUrl: database.url, clock });
});

afterAll(async () => {
  await api?.tollgate.close(2_000);
  await worker?.tollgate.close(2_000);
  await database.drop();
  await bucket.drop();
});

test('a job made on one instance is read from the other by byte range; its input images leave the bucket when it ends', async () => {
  const { apiKey } = await provisionVideoAccount(worker.url);
  const form = new FormData();
  form.append('model', 'sandbox/video');
  form.append('prompt', 'a clip kept in a bucket');
  form.append('seconds', '4');
  form.append('ratio', '16:9');
  form.append('first_frame', new Blob([PNG], { type: 'image/png' }), 'first.png');
  const created = await fetch(`${worker.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
  expect(created.status).toBe(202);
  const id = ((await created.json()) as { id: string }).id;
  expect((await waitForVideo(api.url, apiKey, id)).status).toBe('completed');

  const clip = makeSandboxMp4({ prompt: 'a clip kept in a bucket', seconds: 4, ratio: '16:9' });
  expect(await exists(`videos/${id}.mp4`)).toBe(true);
  expect(await exists(`inputs/${id}/0`)).toBe(false);

  const get = (range?: string) =>
    fetch(`${api.url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${apiKey}`, ...(range ? { range } : {}) } });
  const whole = await get();
  expect(whole.status).toBe(200);
  expect(whole.headers.get('accept-ranges')).toBe('bytes');
  expect(Buffer.from(await whole.arrayBuffer()).equals(clip)).toBe(true);

  const first = await get('bytes=0-0');
  expect(first.status).toBe(206);
  expect(first.headers.get('content-range')).toBe(`bytes 0-0/${clip.length}`);
  expect(Buffer.from(await first.arrayBuffer()).equals(clip.subarray(0, 1))).toBe(true);

  const middle = await get('bytes=100-1099');
  expect(middle.status).toBe(206);
  expect(Buffer.from(await middle.arrayBuffer()).equals(clip.subarray(100, 1100))).toBe(true);

  const tail = await get('bytes=-500');
  expect(tail.status).toBe(206);
  expect(tail.headers.get('content-range')).toBe(`bytes ${clip.length - 500}-${clip.length - 1}/${clip.length}`);
  expect(Buffer.from(await tail.arrayBuffer()).equals(clip.subarray(clip.length - 500))).toBe(true);

  const beyond = await get(`bytes=${clip.length}-`);
  expect(beyond.status).toBe(416);
  expect(beyond.headers.get('content-range')).toBe(`bytes */${clip.length}`);
});

test('retention deletes the object 7 days after completion, whichever instance sweeps: the content answers 410, the job stays', async () => {
  const { apiKey } = await provisionVideoAccount(worker.url);
  const created = await call(`${worker.url}/v1/videos`, {
    token: apiKey,
    body: { model: 'sandbox/video', prompt: 'kept a week in a bucket' },
  });
  const done = await waitForVideo(worker.url, apiKey, created.body.id);
  expect(done.expires_at).toBe(Math.floor(clock.now().getTime() / 1000) + 7 * 24 * 3600);
  const key = `videos/${created.body.id}.mp4`;
  expect(await exists(key)).toBe(true);

  clock.advance(7 * DAY_MS - 60_000);
  expect((await api.tollgate.services.videoSweeper.sweep()).filesDeleted).toBe(0);
  expect((await call(`${api.url}/v1/videos/${created.body.id}/content`, { token: apiKey })).status).toBe(200);

  clock.advance(120_000);
  expect((await api.tollgate.services.videoSweeper.sweep()).filesDeleted).toBeGreaterThanOrEqual(1); // the first test's clip expires too
  expect(await exists(key)).toBe(false);
  const content = await call(`${worker.url}/v1/videos/${created.body.id}/content`, { token: apiKey });
  expect(content.status).toBe(410);
  expect(content.body.error.code).toBe('video_expired');
  expect((await call(`${worker.url}/v1/videos/${created.body.id}`, { token: apiKey })).body.status).toBe('completed');
});
