import { call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/** The dashboard's models query lists what /v1/models lists for a prepaid key of the account, at the same prices. */
let t: TestTollgate;
let sessionToken: string;
let secret: string;

beforeAll(async () => {
  // OpenAI is configured; Anthropic and Gemini are not, so their models are left out of both lists.
  t = await startTestTollgate({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
  const owner = await provisionAccount(t.url, { fundsMicro: '1000000' });
  sessionToken = owner.sessionToken;
  secret = (await createKey(t.url, sessionToken)).secret;
});
afterAll(async () => t?.stop());

const MODELS =
  '{ models { id modality ownedBy inputPerMTokMicro cachedInputPerMTokMicro cacheWrite5mPerMTokMicro cacheWrite1hPerMTokMicro outputPerMTokMicro perImageMicro perVideoSecondMicro } }';

/** An exact decimal string of dollars, scaled by 10^places, as an integer string ("0.00000015", 12 → "150000"). */
function scaled(decimal: string, places: number): string {
  const [whole, fraction = ''] = decimal.split('.');
  expect(fraction.length).toBeLessThanOrEqual(places);
  return (BigInt(whole!) * 10n ** BigInt(places) + BigInt(fraction.padEnd(places, '0') || '0')).toString();
}

test('models: the same models as /v1/models, /v1/images/models and /v1/videos/models, at the same prices', async () => {
  const answer = await graphql(t.url, MODELS, {}, sessionToken);
  expect(answer.errors).toBeUndefined();
  const models: Record<string, string | null>[] = answer.data.models;
  const text = await call(`${t.url}/v1/models`, { token: secret });
  const images = await call(`${t.url}/v1/images/models`, { token: secret });
  const videos = await call(`${t.url}/v1/videos/models`, { token: secret });
  for (const r of [text, images, videos]) expect(r.status).toBe(200);

  const expected = [
    ...text.body.data.map((m: { id: string; owned_by: string; pricing: Record<string, string> }) => ({
      id: m.id,
      modality: 'text',
      ownedBy: m.owned_by,
      inputPerMTokMicro: scaled(m.pricing.prompt!, 12),
      cachedInputPerMTokMicro: scaled(m.pricing.input_cache_read!, 12),
      cacheWrite5mPerMTokMicro: scaled(m.pricing.input_cache_write_5m!, 12),
      cacheWrite1hPerMTokMicro: scaled(m.pricing.input_cache_write_1h!, 12),
      outputPerMTokMicro: scaled(m.pricing.completion!, 12),
      perImageMicro: null,
      perVideoSecondMicro: null,
    })),
    ...images.body.data.map((m: { id: string; owned_by: string; pricing: { per_image: string } }) => ({
      id: m.id,
      modality: 'image',
      ownedBy: m.owned_by,
      ...NO_TOKENS,
      perImageMicro: scaled(m.pricing.per_image, 6),
      perVideoSecondMicro: null,
    })),
    ...videos.body.data.map((m: { id: string; owned_by: string; pricing: { per_second: string } }) => ({
      id: m.id,
      modality: 'video',
      ownedBy: m.owned_by,
      ...NO_TOKENS,
      perImageMicro: null,
      perVideoSecondMicro: scaled(m.pricing.per_second, 6),
    })),
  ];
  expect(models).toEqual(expected);
  expect(models.filter((m) => m.modality === 'image').length).toBeGreaterThan(0);
  expect(models.filter((m) => m.modality === 'video').length).toBeGreaterThan(0);
  // A known price as a person reads it: gpt-4o-mini input is $0.15 per million tokens.
  expect(models.find((m) => m.id === 'openai/gpt-4o-mini')).toMatchObject({ inputPerMTokMicro: '150000', outputPerMTokMicro: '600000' });
  expect(models.some((m) => m.id!.startsWith('anthropic/'))).toBe(false);
});

const NO_TOKENS = {
  inputPerMTokMicro: null,
  cachedInputPerMTokMicro: null,
  cacheWrite5mPerMTokMicro: null,
  cacheWrite1hPerMTokMicro: null,
  outputPerMTokMicro: null,
};

test('models needs a session: no credential or an API key is refused', async () => {
  for (const token of [undefined, secret]) {
    const refused = await graphql(t.url, MODELS, {}, token);
    expect(refused.data?.models ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions.code).toMatch(/^(session_required|invalid_token)$/);
  }
});
