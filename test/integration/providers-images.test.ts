import sharp from 'sharp';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { VendorEndpoint } from '../../src/domain/catalog/vendors';
import { Cancellation } from '../../src/domain/generation/cancellation';
import { ProviderError } from '../../src/domain/generation/errors';
import type { ImageProviderRequest } from '../../src/domain/images/ports';
import { createImageProviders, type ImageProviders } from '../../src/providers/images/registry';
import { imageFromContent } from '../../src/protocols/gemini-images/vendor-answer';
import { parseImageDirectives, SandboxImageProvider } from '../../src/providers/images/sandbox';
import { startFakeOpenAIImages, type ImageFake } from '../fakes/openai-images';
import { startFakeImagen } from '../fakes/imagen';
import { startFakeGeminiImages } from '../fakes/gemini-images';
import { openaiClient, startTextHarness, textAccount } from '../support/text';
import { decodeImages, pngOf } from '../support/images';

/** Each image vendor adapter over real HTTP against a local server speaking that vendor's protocol. */

const catalog = builtinCatalog();
const gptImage = findModel(catalog, 'openai/gpt-image-1', 'image')!;
const imagen = findModel(catalog, 'google/imagen-4', 'image')!;
const geminiImage = findModel(catalog, 'google/gemini-2.5-flash-image', 'image')!;
const sandboxImage = findModel(catalog, 'sandbox/image', 'image')!;

const request = (overrides: Partial<ImageProviderRequest> & Pick<ImageProviderRequest, 'model'>): ImageProviderRequest => ({
  mode: 'generate',
  prompt: 'a red fox',
  size: { width: 1024, height: 1024 },
  images: [],
  index: 0,
  signal: new Cancellation(),
  ...overrides,
});

const endpoint = (vendor: string, protocol: VendorEndpoint['protocol'], fake: ImageFake): [string, VendorEndpoint] => [
  vendor,
  { vendor, protocol, apiKey: fake.apiKey, baseUrl: fake.url },
];
const sizeOf = async (data: Buffer) => {
  const meta = await sharp(data).metadata();
  return { width: meta.width, height: meta.height, format: meta.format };
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as ProviderError,
  );

describe('OpenAI Images adapter', () => {
  let fake: ImageFake;
  let providers: ImageProviders;
  beforeAll(async () => {
    fake = await startFakeOpenAIImages();
    providers = createImageProviders(new Map([endpoint('openai', 'openai', fake)]), {
      http: { timeouts: { connectMs: 1000, headersMs: 1000, bodyIdleMs: 1000 } },
    });
  });
  afterAll(async () => {
    await providers.close();
    await fake.close();
  });
  beforeEach(() => fake.script());

  it('generates with one JSON call (n: 1, the size asked, the bearer key) and reads usage', async () => {
    const image = await providers.forModel(gptImage).generateImage(request({ model: gptImage, size: { width: 1536, height: 1024 } }));
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/v1/images/generations',
      json: { model: 'gpt-image-1', prompt: 'a red fox', n: 1, size: '1536x1024', quality: 'medium' },
    });
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(image.format).toBe('png');
    expect(await sizeOf(image.data)).toEqual({ width: 1536, height: 1024, format: 'png' });
    expect(image.usage).toEqual({ inputTokens: 50, outputTokens: 272 });
  });

  it('edits with one multipart call: `image` for one input, `image[]` for several, bytes unchanged', async () => {
    const one = await pngOf(20, 20);
    await providers.forModel(gptImage).generateImage(request({ model: gptImage, mode: 'edit', images: [{ data: one, format: 'png' }] }));
    expect(fake.requests.at(-1)!.path).toBe('/v1/images/edits');
    expect(fake.requests.at(-1)!.files.map((f) => [f.field, f.mimeType, f.data.equals(one)])).toEqual([['image', 'image/png', true]]);
    const jpeg = await sharp(one).jpeg().toBuffer();
    await providers.forModel(gptImage).generateImage(
      request({
        model: gptImage,
        mode: 'edit',
        images: [
          { data: one, format: 'png' },
          { data: jpeg, format: 'jpeg' },
        ],
      }),
    );
    expect(fake.requests.at(-1)!.files.map((f) => [f.field, f.mimeType, f.filename])).toEqual([
      ['image[]', 'image/png', 'image-1.png'],
      ['image[]', 'image/jpeg', 'image-2.jpg'],
    ]);
    expect(fake.requests.at(-1)!.fields).toEqual({
      model: 'gpt-image-1',
      prompt: 'a red fox',
      n: '1',
      size: '1024x1024',
      quality: 'medium',
    });
  });

  it("turns the vendor's error answers and non-images into ProviderError (502) with its message, never the key", async () => {
    fake.script({ status: 400, errorMessage: 'Your request was rejected by the safety system.' });
    const refused = await failure(providers.forModel(gptImage).generateImage(request({ model: gptImage })));
    expect(refused).toBeInstanceOf(ProviderError);
    expect(refused).toMatchObject({ status: 502, vendorStatus: 400, message: expect.stringContaining('safety system') });
    fake.script({ notAnImage: true });
    expect(await failure(providers.forModel(gptImage).generateImage(request({ model: gptImage })))).toMatchObject({
      status: 502,
      message: expect.stringMatching(/not PNG, JPEG or WebP/),
    });
    const wrongKey = createImageProviders(
      new Map([['openai', { vendor: 'openai', protocol: 'openai', apiKey: 'sk-wrong-secret', baseUrl: fake.url }]]),
    );
    const denied = await failure(wrongKey.forModel(gptImage).generateImage(request({ model: gptImage })));
    expect(denied).toMatchObject({ status: 502, vendorStatus: 401 });
    expect(denied!.message).not.toContain('sk-wrong-secret');
    await wrongKey.close();
  });

  it('a cancelled call aborts the upstream request', async () => {
    fake.script({ delayMs: 3_000 });
    const signal = new Cancellation();
    const before = fake.requests.length;
    const pending = failure(providers.forModel(gptImage).generateImage(request({ model: gptImage, signal })));
    const deadline = Date.now() + 2_000;
    while (fake.requests.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const last = fake.requests.at(-1)!;
    signal.cancel();
    expect(await pending).toMatchObject({ code: 'client_cancelled' });
    while (!last.aborted && Date.now() < deadline + 1_000) await new Promise((r) => setTimeout(r, 10));
    expect(fake.requests.length).toBe(before + 1);
    expect(last.aborted).toBe(true);
  });
});

describe('Imagen adapter (:predict)', () => {
  let fake: ImageFake;
  let providers: ImageProviders;
  beforeAll(async () => {
    fake = await startFakeImagen();
    providers = createImageProviders(new Map([endpoint('gemini', 'gemini', fake)]));
  });
  afterAll(async () => {
    await providers.close();
    await fake.close();
  });
  beforeEach(() => fake.script());

  it.each([
    [{ width: 1024, height: 1024 }, '1:1', { width: 1024, height: 1024 }],
    [{ width: 896, height: 1280 }, '3:4', { width: 896, height: 1280 }],
    [{ width: 1408, height: 768 }, '16:9', { width: 1408, height: 768 }],
    [{ width: 1536, height: 1024 }, '4:3', { width: 1280, height: 896 }],
  ])('asks for the aspect ratio nearest to %j (%s) and answers the vendor image', async (size, ratio, answered) => {
    const image = await providers.forModel(imagen).generateImage(request({ model: imagen, size }));
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/v1beta/models/imagen-4.0-generate-001:predict',
      json: { instances: [{ prompt: 'a red fox' }], parameters: { sampleCount: 1, aspectRatio: ratio } },
    });
    expect(fake.requests.at(-1)!.headers['x-goog-api-key']).toBe(fake.apiKey);
    expect(await sizeOf(image.data)).toEqual({ ...answered, format: 'png' });
  });

  it('keeps the format the vendor sent (JPEG) and maps errors to ProviderError', async () => {
    fake.script({ format: 'jpeg' });
    expect((await providers.forModel(imagen).generateImage(request({ model: imagen }))).format).toBe('jpeg');
    fake.script({ status: 429, errorMessage: 'Quota exceeded for imagen' });
    expect(await failure(providers.forModel(imagen).generateImage(request({ model: imagen })))).toMatchObject({
      status: 502,
      vendorStatus: 429,
      message: expect.stringContaining('Quota exceeded'),
    });
  });
});

describe('Gemini image output adapter (generateContent)', () => {
  let fake: ImageFake;
  let providers: ImageProviders;
  beforeAll(async () => {
    fake = await startFakeGeminiImages();
    providers = createImageProviders(new Map([endpoint('gemini', 'gemini', fake)]));
  });
  afterAll(async () => {
    await providers.close();
    await fake.close();
  });
  beforeEach(() => fake.script());

  it('generates: IMAGE modality, nearest aspect ratio, the inlineData part decoded', async () => {
    const image = await providers.forModel(geminiImage).generateImage(request({ model: geminiImage, size: { width: 1344, height: 768 } }));
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/v1beta/models/gemini-2.5-flash-image:generateContent',
      json: {
        contents: [{ role: 'user', parts: [{ text: 'a red fox' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9' } },
      },
    });
    expect(await sizeOf(image.data)).toEqual({ width: 1344, height: 768, format: 'png' });
  });

  it('edits: the input images go inline before the prompt', async () => {
    const input = await pngOf(10, 10);
    await providers
      .forModel(geminiImage)
      .generateImage(request({ model: geminiImage, mode: 'edit', images: [{ data: input, format: 'png' }] }));
    expect(fake.requests.at(-1)!.json.contents[0].parts).toEqual([
      { inlineData: { mimeType: 'image/png', data: input.toString('base64') } },
      { text: 'a red fox' },
    ]);
  });

  it('an error answer, or an answer without an image part, is a ProviderError', async () => {
    fake.script({ status: 500, errorMessage: 'Internal error encountered.' });
    expect(await failure(providers.forModel(geminiImage).generateImage(request({ model: geminiImage })))).toMatchObject({
      status: 502,
      vendorStatus: 500,
    });
    const textOnly = { candidates: [{ content: { parts: [{ text: 'I cannot draw that.' }] }, finishReason: 'IMAGE_SAFETY' }] };
    expect(() => imageFromContent(textOnly, 'gemini')).toThrow(/IMAGE_SAFETY.*I cannot draw that/);
  });

  it('serves google/gemini-2.5-flash-image through the gateway with exact sizes', async () => {
    const h = await startTextHarness({ GEMINI_API_KEY: fake.apiKey, GEMINI_BASE_URL: fake.url });
    try {
      const account = await textAccount(h.t, { fundsMicro: '1000000' });
      const client = openaiClient(h.t.url, account.secret);
      const generated = await client.images.generate({ model: 'gemini-2.5-flash-image', prompt: 'wide', size: '1536x672' as never, n: 2 });
      expect(await decodeImages(generated)).toEqual(Array(2).fill({ width: 1536, height: 672, format: 'png' }));
      const charges = await h.db.query(`select amount_micro::text as a from ledger_entries where account_id = $1 and kind = 'charge'`, [
        account.accountId,
      ]);
      expect(charges.rows).toEqual([{ a: '-78000' }]);
    } finally {
      await h.stop();
    }
  });
});

describe('sandbox image vendor', () => {
  const sandbox = new SandboxImageProvider();

  it('is served by the registry with no endpoint', async () => {
    const providers = createImageProviders(new Map());
    expect(providers.forModel(sandboxImage)).toBeInstanceOf(SandboxImageProvider);
    await providers.close();
  });

  it('makes real PNGs, deterministic from the prompt, distinct per index', async () => {
    const a = await sandbox.generateImage(request({ model: sandboxImage, size: { width: 512, height: 512 } }));
    const b = await sandbox.generateImage(request({ model: sandboxImage, size: { width: 512, height: 512 } }));
    const c = await sandbox.generateImage(request({ model: sandboxImage, size: { width: 512, height: 512 }, index: 1 }));
    expect(await sizeOf(a.data)).toEqual({ width: 512, height: 512, format: 'png' });
    expect(a.data.equals(b.data)).toBe(true);
    expect(a.data.equals(c.data)).toBe(false);
  });

  it('edits by tinting the first input, and obeys its magic words', async () => {
    const edited = await sandbox.generateImage(
      request({
        model: sandboxImage,
        mode: 'edit',
        size: { width: 300, height: 200 },
        images: [{ data: await pngOf(64, 64), format: 'png' }],
      }),
    );
    expect(await sizeOf(edited.data)).toEqual({ width: 300, height: 200, format: 'png' });
    expect(await sizeOf((await sandbox.generateImage(request({ model: sandboxImage, prompt: 'x [sandbox:size=100x50]' }))).data)).toEqual({
      width: 100,
      height: 50,
      format: 'png',
    });
    expect(await failure(sandbox.generateImage(request({ model: sandboxImage, prompt: '[sandbox:fail]' })))).toMatchObject({
      status: 502,
      vendorStatus: 500,
    });
    expect(await failure(sandbox.generateImage(request({ model: sandboxImage, prompt: '[sandbox:fail-one]' })))).toBeInstanceOf(
      ProviderError,
    );
    expect(await failure(sandbox.generateImage(request({ model: sandboxImage, prompt: '[sandbox:fail-one]', index: 1 })))).toBeNull();
    const signal = new Cancellation();
    const slow = failure(sandbox.generateImage(request({ model: sandboxImage, prompt: '[sandbox:delay=5000]', signal })));
    signal.cancel();
    expect(await slow).toMatchObject({ code: 'client_cancelled' });
    expect(parseImageDirectives('[SANDBOX:DELAY=25] [sandbox:size=bad]')).toEqual({ fail: false, failOne: false, delayMs: 25 });
  });
});
