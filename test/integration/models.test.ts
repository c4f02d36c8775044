import OpenAI from 'openai';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

let t: TestTollgate;
let prepaid: string;
let plan: string;

beforeAll(async () => {
  // OpenAI is configured (key set); Anthropic and Gemini are not, so their models are not usable.
  t = await startTestTollgate({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
  const p = await provisionAccount(t.url, { fundsMicro: '1000000', plan: 'starter' });
  // Tier 5: the retrieve tests send more requests in a second than tier 1 admits.
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: p.accountId }, ADMIN_TOKEN);
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
  expect(gptImage).toMatchObject({
    modes: ['generate', 'edit'],
    sizes: expect.arrayContaining(['1024x1024']),
    max_input_images: 16,
    pricing: { per_image: expect.stringMatching(/^0\.\d+$/) },
  });
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

describe('GET /v1/models/{id} (openai SDK models.retrieve)', () => {
  const sdk = (key: string) => new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 });

  test('a service id answers the entry its list shows, with no routed-from header', async () => {
    const { data, response } = await sdk(prepaid).models.retrieve('openai/gpt-4o-mini').withResponse();
    const listed = (await call(`${t.url}/v1/models`, { token: prepaid })).body.data.find(
      (m: { id: string }) => m.id === 'openai/gpt-4o-mini',
    );
    expect(data).toEqual(listed);
    expect(response.headers.get('x-service-model-routed-from')).toBeNull();
  });

  test('any id that resolves for the key answers the catalog model, with the id sent in x-service-model-routed-from', async () => {
    const { data, response } = await sdk(prepaid).models.retrieve('gpt-4o-mini-2024-07-18').withResponse();
    expect(data.id).toBe('openai/gpt-4o-mini');
    expect(response.headers.get('x-service-model-routed-from')).toBe('gpt-4o-mini-2024-07-18');
  });

  test('an unencoded vendor/model path resolves too; image and video models answer their own entries', async () => {
    const plain = await call(`${t.url}/v1/models/sandbox/echo`, { token: prepaid });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ id: 'sandbox/echo', object: 'model', pricing: expect.any(Object) });
    expect((await sdk(prepaid).models.retrieve('sandbox/image')) as unknown).toMatchObject({
      id: 'sandbox/image',
      sizes: expect.any(Array),
    });
    expect((await sdk(prepaid).models.retrieve('sandbox/video')) as unknown).toMatchObject({
      id: 'sandbox/video',
      durations: expect.any(Array),
    });
  });

  test('an id the key cannot use is 404 model_not_available naming it: unknown, unconfigured vendor, outside the plan', async () => {
    for (const [key, id] of [
      [prepaid, 'no-such-model'],
      [prepaid, 'anthropic/claude-sonnet-4-5'],
      [plan, 'openai/gpt-4.1'],
      [plan, 'sandbox/image'],
    ] as const) {
      const error = await sdk(key)
        .models.retrieve(id)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ code: 'model_not_available' });
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).message).toContain(id);
    }
    // The plan key sees pricing nowhere, here neither.
    expect(await sdk(plan).models.retrieve('gpt-4o-mini')).not.toHaveProperty('pricing');
  });

  test('no key is 401, as on the list', async () => {
    expect((await call(`${t.url}/v1/models/sandbox%2Fecho`)).status).toBe(401);
  });
});
