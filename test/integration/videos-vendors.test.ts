import { makeSandboxMp4 } from '../../src/providers/videos/mp4';
import { startFakeOpenAIVideos, type FakeOpenAIVideos } from '../fakes/openai-videos';
import { startFakeVeo, type FakeVeo } from '../fakes/veo';
import { call, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

// A tiny PNG (1×1): image inputs are checked by their bytes.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
const CLIP = makeSandboxMp4({ prompt: 'from the vendor', seconds: 4, ratio: '16:9' });

let t: TestTollgate;
let openai: FakeOpenAIVideos;
let veo: FakeVeo;
let cleanup: () => void;
let apiKey: string;
let accountId: string;

beforeAll(async () => {
  openai = await startFakeOpenAIVideos({ apiKey: 'sk-video-test', content: CLIP, pollsToFinish: 3 });
  veo = await startFakeVeo({ apiKey: 'veo-test-key', content: CLIP, pollsToFinish: 2 });
  // A download that stalls this long mid-file is a failed step (retried), not a hung one.
  const env = videoTestEnv({
    OPENAI_API_KEY: 'sk-video-test',
    OPENAI_BASE_URL: openai.url,
    GEMINI_API_KEY: 'veo-test-key',
    GEMINI_BASE_URL: veo.url,
    TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS: '500',
  });
  cleanup = env.cleanup;
  t = await startTestTollgate({ env: env.env });
  ({ apiKey, accountId } = await provisionVideoAccount(t.url, '50000000'));
});

afterAll(async () => {
  await t.stop();
  await openai.close();
  await veo.close();
  cleanup();
});

const download = async (id: string) =>
  Buffer.from(await (await fetch(`${t.url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${apiKey}` } })).arrayBuffer());

describe('OpenAI (Sora)', () => {
  test('the job goes up as OpenAI forms (seconds "8", size 720x1280, vendor model id), is polled to completion and its file served', async () => {
    const created = await call(`${t.url}/v1/videos`, {
      token: apiKey,
      body: { model: 'sora-2', prompt: 'a paper boat', seconds: 8, resolution: '720p', ratio: '9:16' },
    });
    expect(created.status).toBe(202);
    expect(created.headers.get('x-service-model-routed-from')).toBe('sora-2');
    expect(created.body.model).toBe('openai/sora-2');
    const done = await waitForVideo(t.url, apiKey, created.body.id);
    expect(done.status).toBe('completed');
    const job = [...openai.jobs.values()].find((j) => j.prompt === 'a paper boat')!;
    expect(job).toMatchObject({ model: 'sora-2', seconds: '8', size: '720x1280', inputReference: null });
    expect(job.polls).toBeGreaterThanOrEqual(3);
    expect((await download(created.body.id)).equals(CLIP)).toBe(true);
    const holds = await t.tollgate.services.billing.listActiveHolds(accountId);
    expect(holds).toEqual([]);
  });

  test('an input image goes up as input_reference (multipart); transient vendor errors are retried; a vendor failure fails the job and charges nothing', async () => {
    const form = new FormData();
    form.append('model', 'openai/sora-2');
    form.append('prompt', 'the image, moving');
    form.append('seconds', '4');
    form.append('input_reference', new Blob([PNG], { type: 'image/png' }), 'frame.png');
    openai.failNextPolls(2, 503);
    const created = await fetch(`${t.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
    expect(created.status).toBe(202);
    const id = ((await created.json()) as { id: string }).id;
    expect((await waitForVideo(t.url, apiKey, id)).status).toBe('completed');
    const job = [...openai.jobs.values()].find((j) => j.prompt === 'the image, moving')!;
    expect(job.inputReference?.bytes.equals(PNG)).toBe(true);
    expect(job.inputReference?.mimeType).toBe('image/png');

    const before = await t.tollgate.services.billing.auditAccount(accountId);
    const failing = await call(`${t.url}/v1/videos`, {
      token: apiKey,
      body: { model: 'openai/sora-2', prompt: 'please fail', seconds: 4 },
    });
    const failed = await waitForVideo(t.url, apiKey, failing.body.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked' } });
    expect((await t.tollgate.services.billing.auditAccount(accountId)).balanceMicro).toBe(before.balanceMicro);
  });

  test('a download that stalls mid-file fails its step, which is retried: the stored file is whole and charged once', async () => {
    openai.stallNextDownloads(1);
    const downloadsBefore = openai.downloads;
    const created = await call(`${t.url}/v1/videos`, {
      token: apiKey,
      body: { model: 'openai/sora-2', prompt: 'a stalled download', seconds: 4 },
    });
    expect(created.status).toBe(202);
    expect((await waitForVideo(t.url, apiKey, created.body.id)).status).toBe('completed');
    expect(openai.downloads - downloadsBefore).toBe(2);
    expect((await download(created.body.id)).equals(CLIP)).toBe(true);
    const charges = await t.tollgate.services.billing.listUsageRecords(accountId, {
      limit: 100,
      after: null,
      keyId: null,
      from: null,
      to: null,
    });
    expect(charges.data.filter((r) => r.requestId === created.body.id)).toHaveLength(1);
  });
});

describe('Google Veo', () => {
  test('predictLongRunning with the Veo parameters, operation polling, then the file fetched with the key', async () => {
    const created = await call(`${t.url}/v1/videos`, {
      token: apiKey,
      body: { model: 'google/veo-3', prompt: 'rain on a window', resolution: '1080p' },
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ seconds: 8, resolution: '1080p', ratio: '16:9' });
    expect((await waitForVideo(t.url, apiKey, created.body.id)).status).toBe('completed');
    const operation = [...veo.operations.values()].find((o) => o.request.instances[0].prompt === 'rain on a window')!;
    expect(operation.model).toBe('veo-3.0-generate-001');
    expect(operation.request.parameters).toMatchObject({ aspectRatio: '16:9', resolution: '1080p', durationSeconds: 8 });
    expect(operation.polls).toBeGreaterThanOrEqual(2);
    // The file URI redirects to storage on another origin, which got the file asked without the key.
    expect(veo.downloads).toBeGreaterThanOrEqual(1);
    expect(veo.leakedKeys).toBe(0);
    expect((await download(created.body.id)).equals(CLIP)).toBe(true);
    const charges = await t.tollgate.services.billing.listUsageRecords(accountId, {
      limit: 100,
      after: null,
      keyId: null,
      from: null,
      to: null,
    });
    expect(charges.data.some((r) => r.model === 'google/veo-3' && r.costMicro === 3_200_000n)).toBe(true);
  });

  test('a first frame goes up as the instance image; a failed operation fails the job', async () => {
    const form = new FormData();
    form.append('model', 'google/veo-3');
    form.append('prompt', 'from this frame');
    form.append('first_frame', new Blob([PNG], { type: 'image/png' }), 'first.png');
    const created = await fetch(`${t.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
    expect(created.status).toBe(202);
    expect((await waitForVideo(t.url, apiKey, ((await created.json()) as { id: string }).id)).status).toBe('completed');
    const operation = [...veo.operations.values()].find((o) => o.request.instances[0].prompt === 'from this frame')!;
    expect(operation.request.instances[0].image).toEqual({ bytesBase64Encoded: PNG.toString('base64'), mimeType: 'image/png' });

    const failing = await call(`${t.url}/v1/videos`, { token: apiKey, body: { model: 'google/veo-3', prompt: 'please fail' } });
    expect(await waitForVideo(t.url, apiKey, failing.body.id)).toMatchObject({
      status: 'failed',
      error: { code: 'generation_failed', message: 'The prompt could not be processed.' },
    });
  });
});

describe('multipart refusals', () => {
  const post = (form: FormData) =>
    fetch(`${t.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as unknown,
    }));
  const base = () => {
    const form = new FormData();
    form.append('model', 'sandbox/video');
    form.append('prompt', 'p');
    return form;
  };

  test('a file that is not an image, too many images, an unknown file field or a repeated field are 400 naming it', async () => {
    const notImage = base();
    notImage.append('first_frame', new Blob([Buffer.from('GIF89a not really')], { type: 'image/png' }), 'x.png');
    expect(await post(notImage)).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request', message: expect.stringContaining('first_frame') } },
    });
    const tooMany = base();
    tooMany.append('reference', new Blob([PNG], { type: 'image/png' }), 'a.png');
    tooMany.append('reference', new Blob([PNG], { type: 'image/png' }), 'b.png');
    expect(await post(tooMany)).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('at most 1') } } });
    const unknownFile = base();
    unknownFile.append('mask', new Blob([PNG], { type: 'image/png' }), 'm.png');
    expect(await post(unknownFile)).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('mask') } } });
    const repeated = base();
    repeated.append('prompt', 'again');
    expect(await post(repeated)).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('prompt') } } });
    expect(
      (await t.tollgate.services.videos.list(accountId, { limit: 100, order: 'desc', after: null })).data.filter((v) => v.prompt === 'p'),
    ).toEqual([]);
  });
});
