import { call, createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

let t: TestTollgate;
let prepaid: string;
let plan: string;

beforeAll(async () => {
  // OpenAI is configured (key set); Anthropic and Gemini are not, so their models are not usable.
  t = await startTestTollgate({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
  const p = await provisionAccount(t.url, { fundsMicro: '1000000', plan: 'starter' });
  prepaid = (await createKey(t.url, p.sessionToken)).secret;
  plan = (await createKey(t.url, p.sessionToken, { name: 'plan', kind: 'plan' })).secret;
});
afterAll(async () => t?.stop());

test('GET /v1/models lists configured, priced models with exact per-token prices for prepaid keys', async () => {
  const r = await call(`${t.url}/v1/models`, { token: prepaid });
  expect(r.status).toBe(200);
  const ids = r.body.data.map((m: { id: string }) => m.id);
  expect(ids).toEqual(expect.arrayContaining(['openai/gpt-4o-mini', 'openai/gpt-4.1', 'openai/o4-mini', 'sandbox/echo']));
  expect(ids.some((id: string) => id.startsWith('anthropic/') || id.startsWith('google/'))).toBe(false);
  const mini = r.body.data.find((m: { id: string }) => m.id === 'openai/gpt-4o-mini');
  expect(mini).toMatchObject({
    object: 'model',
    context_length: 128000,
    top_provider: { max_completion_tokens: 16384 },
    pricing: { prompt: '0.00000015', completion: '0.0000006', input_cache_read: '0.000000075' },
  });
  expect(typeof mini.created).toBe('number');
});

test('plan keys see only their plan models and no pricing', async () => {
  const r = await call(`${t.url}/v1/models`, { token: plan });
  expect(r.status).toBe(200);
  const ids = r.body.data.map((m: { id: string }) => m.id).sort();
  // starter includes gpt-4o-mini (configured) but not gpt-4.1; its Anthropic/Gemini models are not configured.
  expect(ids).toEqual(['openai/gpt-4o-mini', 'sandbox/echo', 'sandbox/reasoner']);
  for (const model of r.body.data) expect(model).not.toHaveProperty('pricing');
});

test('media model lists are prepaid-only and carry their options and prices', async () => {
  const images = await call(`${t.url}/v1/images/models`, { token: prepaid });
  expect(images.status).toBe(200);
  const gptImage = images.body.data.find((m: { id: string }) => m.id === 'openai/gpt-image-1');
  expect(gptImage).toMatchObject({ modes: ['generate', 'edit'], sizes: expect.arrayContaining(['1024x1024']), max_input_images: 16, pricing: { per_image: expect.stringMatching(/^0\.\d+$/) } });
  const fixed = images.body.data.find((m: { id: string }) => m.id === 'sandbox/image-fixed');
  expect(fixed.sizes).toEqual(['low:1024x1024']);
  const videos = await call(`${t.url}/v1/videos/models`, { token: prepaid });
  const sora = videos.body.data.find((m: { id: string }) => m.id === 'openai/sora-2');
  expect(sora).toMatchObject({ resolutions: ['720p'], durations: [4, 8, 12], pricing: { per_second: '0.1' } });
  for (const path of ['/v1/images/models', '/v1/videos/models']) {
    const refused = await call(`${t.url}${path}`, { token: plan });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('api_wallet_key_required');
  }
});
