import { existsSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Client } from 'pg';
import { call, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

const PRICE_PER_SECOND_MICRO = 1_000n; // sandbox/video: $0.001 per second

let t: TestTollgate;
let cleanup: () => void;
let videoDir: string;
let apiKey: string;
let accountId: string;

beforeAll(async () => {
  const env = videoTestEnv();
  cleanup = env.cleanup;
  videoDir = env.env.TOLLGATE_VIDEO_DIR!;
  t = await startTestTollgate({ env: env.env });
  const account = await provisionVideoAccount(t.url);
  accountId = account.accountId;
  apiKey = account.apiKey;
});

afterAll(async () => {
  await t.stop();
  cleanup();
});

const create = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(`${t.url}/v1/videos`, { token: apiKey, body, headers });

test('a created sandbox video is answered 202, completes, is charged seconds × price once, and downloads as an MP4 through the openai SDK', async () => {
  const before = await t.tollgate.services.billing.auditAccount(accountId);
  const created = await create({ model: 'sandbox/video', prompt: 'a lighthouse at dusk', seconds: 4, resolution: '720p', ratio: '16:9' });
  expect(created.status).toBe(202);
  expect(created.body).toMatchObject({
    object: 'video',
    status: 'queued',
    model: 'sandbox/video',
    seconds: 4,
    resolution: '720p',
    ratio: '16:9',
    progress: 0,
    completed_at: null,
    expires_at: null,
    error: null,
  });
  expect(created.body.id).toMatch(/^vid_/);

  await waitForVideo(t.url, apiKey, created.body.id);
  const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey });
  const video = await client.videos.retrieve(created.body.id);
  expect(video.status).toBe('completed');
  expect(video.progress).toBe(100);
  expect(video.expires_at! - video.completed_at!).toBe(7 * 24 * 3600);

  const content = await client.videos.downloadContent(created.body.id);
  expect(content.headers.get('content-type')).toBe('video/mp4');
  expect(content.headers.get('accept-ranges')).toBe('bytes');
  const bytes = Buffer.from(await content.arrayBuffer());
  expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  expect(bytes.includes(Buffer.from('avc1'))).toBe(true);

  const after = await t.tollgate.services.billing.auditAccount(accountId);
  expect(BigInt(before.balanceMicro) - BigInt(after.balanceMicro)).toBe(4n * PRICE_PER_SECOND_MICRO);
  expect((await t.tollgate.services.billing.listActiveHolds(accountId)).length).toBe(0);
  expect(await t.tollgate.services.admission.slotsInUse(accountId)).toBe(0);
});

test('the list pages newest first by default, oldest first with order=asc, after a video id, through the SDK', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await create({ model: 'sandbox/video', prompt: `list ${i}` })).body.id);
  const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey });
  const page = await client.videos.list({ limit: 2 });
  expect(page.data.map((v) => v.id)).toEqual([ids[2], ids[1]]);
  expect(page.has_more).toBe(true);
  const raw = await call(`${t.url}/v1/videos?limit=2&order=asc&after=${ids[0]}`, { token: apiKey });
  expect(raw.body.data.map((v: { id: string }) => v.id)).toEqual([ids[1], ids[2]]);
  expect(raw.body).toMatchObject({ first_id: ids[1], last_id: ids[2], has_more: false });
  const all: string[] = [];
  for await (const video of client.videos.list({ limit: 2 })) all.push(video.id);
  expect(all.slice(0, 3)).toEqual([ids[2], ids[1], ids[0]]);
  expect((await call(`${t.url}/v1/videos?limit=101`, { token: apiKey })).body.error).toMatchObject({
    code: 'bad_request',
    details: { field: 'limit' },
  });
  expect((await call(`${t.url}/v1/videos?order=up`, { token: apiKey })).body.error.message).toContain('order');
});

test('unknown and foreign ids are 404 not_found; the content of a job in flight is 409 video_not_ready with its status', async () => {
  expect((await call(`${t.url}/v1/videos/vid_nope`, { token: apiKey })).body.error.code).toBe('not_found');
  const otherKey = (await provisionVideoAccount(t.url)).apiKey;
  const mine = await create({ model: 'sandbox/video', prompt: 'private [sandbox:slow]' });
  const foreign = await call(`${t.url}/v1/videos/${mine.body.id}`, { token: otherKey });
  expect(foreign.status).toBe(404);
  expect(foreign.body.error.code).toBe('not_found');
  expect((await call(`${t.url}/v1/videos/${mine.body.id}/content`, { token: otherKey })).status).toBe(404);
  const early = await call(`${t.url}/v1/videos/${mine.body.id}/content`, { token: apiKey });
  expect(early.status).toBe(409);
  expect(early.body.error.code).toBe('video_not_ready');
  expect(['queued', 'in_progress']).toContain(early.body.error.details.status);
  await waitForVideo(t.url, apiKey, mine.body.id);
});

test('videos.delete: a finished job and its file are deleted (404 from then on), its billing records stay; a job in flight is 409', async () => {
  const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey, maxRetries: 0 });
  const running = await create({ model: 'sandbox/video', prompt: 'deleted too early [sandbox:slow]' });
  const early = await client.videos.delete(running.body.id).catch((e: unknown) => e);
  expect(early).toBeInstanceOf(OpenAI.ConflictError);
  expect((early as InstanceType<typeof OpenAI.ConflictError>).error).toMatchObject({
    code: 'video_not_ready',
    details: { status: expect.stringMatching(/^(queued|in_progress)$/) },
  });

  const done = await create({ model: 'sandbox/video', prompt: 'to delete', seconds: 4 });
  await waitForVideo(t.url, apiKey, done.body.id);
  const charged = await t.tollgate.services.billing.auditAccount(accountId);
  const file = join(videoDir, 'videos', `${done.body.id}.mp4`);
  expect(existsSync(file)).toBe(true);

  expect(await client.videos.delete(done.body.id)).toEqual({ id: done.body.id, object: 'video.deleted', deleted: true });
  expect(existsSync(file)).toBe(false);
  for (const path of [`/v1/videos/${done.body.id}`, `/v1/videos/${done.body.id}/content`])
    expect((await call(`${t.url}${path}`, { token: apiKey })).status).toBe(404);
  expect((await client.videos.list({ limit: 100 })).data.map((v) => v.id)).not.toContain(done.body.id);
  expect((await call(`${t.url}/v1/videos/${done.body.id}`, { method: 'DELETE', token: apiKey })).status).toBe(404);

  // Billing records stay: the balance is unchanged by the deletion, and the charge is still in the ledger.
  const after = await t.tollgate.services.billing.auditAccount(accountId);
  expect(after.balanceMicro).toBe(charged.balanceMicro);
  expect(after.consistent).toBe(true);
  const db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(
      'select v.deleted_at, l.amount_micro::text from videos v join ledger_entries l on l.hold_id = v.hold_id where v.id = $1 and l.kind = $2',
      [done.body.id, 'charge'],
    );
    expect(rows).toEqual([{ deleted_at: expect.any(Date), amount_micro: String(-4n * PRICE_PER_SECOND_MICRO) }]);
  } finally {
    await db.end();
  }

  // Another account's job is not found, and so is an unknown id.
  const otherKey = (await provisionVideoAccount(t.url)).apiKey;
  const mine = await create({ model: 'sandbox/video', prompt: 'mine' });
  await waitForVideo(t.url, apiKey, mine.body.id);
  expect((await call(`${t.url}/v1/videos/${mine.body.id}`, { method: 'DELETE', token: otherKey })).status).toBe(404);
  expect((await call(`${t.url}/v1/videos/vid_nope`, { method: 'DELETE', token: apiKey })).body.error.code).toBe('not_found');
  await waitForVideo(t.url, apiKey, running.body.id);
});
