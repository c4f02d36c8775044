import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usableImageModels, usableTextModels, usableVideoModels } from '../../src/domain/catalog/access';
import { BUILTIN_CATALOG_SOURCE } from '../../src/domain/catalog/builtin';
import { builtinCatalog, findModel, loadCatalog, priceTokensMicro } from '../../src/domain/catalog/catalog';
import { renderImageModelList, renderTextModelList, renderVideoModelList } from '../../src/domain/catalog/render';
import { resolveModelId } from '../../src/domain/catalog/resolve';
import type { ModelAccess } from '../../src/domain/catalog/types';

const catalog = builtinCatalog();
const ALL_VENDORS = new Set(['openai', 'anthropic', 'gemini', 'sandbox']);
const prepaid: ModelAccess = { keyKind: 'prepaid', configuredVendors: ALL_VENDORS };
const sandboxOnly: ModelAccess = { keyKind: 'prepaid', configuredVendors: new Set(['sandbox']) };

const ids = (models: readonly { id: string }[]) => models.map((model) => model.id);

describe('built-in catalog', () => {
  test('holds the minimum models of every kind', () => {
    expect(ids(catalog.text)).toEqual([
      'openai/gpt-4o-mini',
      'openai/gpt-4.1',
      'openai/o4-mini',
      'anthropic/claude-sonnet-4-5',
      'anthropic/claude-haiku-4-5',
      'google/gemini-2.5-flash',
      'google/gemini-2.5-pro',
      'sandbox/echo',
      'sandbox/reasoner',
    ]);
    expect(ids(catalog.images)).toEqual([
      'openai/gpt-image-1',
      'google/imagen-4',
      'google/gemini-2.5-flash-image',
      'sandbox/image',
      'sandbox/image-fixed',
    ]);
    expect(ids(catalog.videos)).toEqual(['openai/sora-2', 'google/veo-3', 'sandbox/video']);
    expect(loadCatalog()).toBe(catalog);
    expect(loadCatalog('')).toBe(catalog);
  });

  // Cache writes: Anthropic's published 1.25x (5 minutes) and 2x (1 hour) input; other vendors bill writes as input.
  test.each<[string, bigint, bigint, bigint, bigint, bigint]>([
    ['openai/gpt-4o-mini', 150_000n, 75_000n, 150_000n, 150_000n, 600_000n],
    ['openai/gpt-4.1', 2_000_000n, 500_000n, 2_000_000n, 2_000_000n, 8_000_000n],
    ['openai/o4-mini', 1_100_000n, 275_000n, 1_100_000n, 1_100_000n, 4_400_000n],
    ['anthropic/claude-sonnet-4-5', 3_000_000n, 300_000n, 3_750_000n, 6_000_000n, 15_000_000n],
    ['anthropic/claude-haiku-4-5', 1_000_000n, 100_000n, 1_250_000n, 2_000_000n, 5_000_000n],
    ['google/gemini-2.5-flash', 300_000n, 30_000n, 300_000n, 300_000n, 2_500_000n],
    ['google/gemini-2.5-pro', 1_250_000n, 125_000n, 1_250_000n, 1_250_000n, 10_000_000n],
    ['sandbox/echo', 1_000_000n, 100_000n, 1_000_000n, 1_000_000n, 2_000_000n],
  ])('%s prices are exact micro-dollars per 1M tokens', (id, input, cached, write5m, write1h, output) => {
    expect(findModel(catalog, id, 'text')?.pricing).toEqual({
      inputPerMTokMicro: input,
      cachedInputPerMTokMicro: cached,
      cacheWrite5mPerMTokMicro: write5m,
      cacheWrite1hPerMTokMicro: write1h,
      outputPerMTokMicro: output,
    });
  });

  test.each([
    ['openai/gpt-4o-mini', 'openai', 'openai', 'gpt-4o-mini', 'none', 128000, 16384, 1721260800],
    ['openai/gpt-4.1', 'openai', 'openai', 'gpt-4.1', 'none', 1047576, 32768, 1744588800],
    ['openai/o4-mini', 'openai', 'openai', 'o4-mini', 'openai-effort', 200000, 100000, 1744761600],
    [
      'anthropic/claude-sonnet-4-5',
      'anthropic',
      'anthropic',
      'claude-sonnet-4-5-20250929',
      'anthropic-thinking',
      200000,
      64000,
      1759104000,
    ],
    ['anthropic/claude-haiku-4-5', 'anthropic', 'anthropic', 'claude-haiku-4-5-20251001', 'anthropic-thinking', 200000, 64000, 1760486400],
    ['google/gemini-2.5-flash', 'gemini', 'gemini', 'gemini-2.5-flash', 'gemini-thinking', 1048576, 65536, 1750118400],
    ['google/gemini-2.5-pro', 'gemini', 'gemini', 'gemini-2.5-pro', 'gemini-thinking', 1048576, 65536, 1750118400],
    ['sandbox/echo', 'sandbox', 'sandbox', 'echo', 'none', 128000, 8192, 1735689600],
    ['sandbox/reasoner', 'sandbox', 'sandbox', 'reasoner', 'openai-effort', 128000, 32768, 1735689600],
  ])('%s: vendor %s, protocol %s, upstream id %s, effort %s', (id, vendor, protocol, vendorModelId, effort, ctx, out, created) => {
    expect(findModel(catalog, id, 'text')).toMatchObject({
      vendor,
      protocol,
      vendorModelId,
      effort,
      contextLength: ctx,
      maxOutputTokens: out,
      created,
      namespace: id.split('/')[0],
    });
  });

  test('media models carry their options and exact prices', () => {
    expect(findModel(catalog, 'openai/gpt-image-1', 'image')).toMatchObject({
      modes: ['generate', 'edit'],
      sizes: ['1024x1024', '1024x1536', '1536x1024'],
      maxInputImages: 16,
      fixedOption: null,
      pricing: { perImageMicro: 42_000n },
    });
    expect(findModel(catalog, 'google/imagen-4', 'image')).toMatchObject({
      vendor: 'gemini',
      modes: ['generate'],
      sizes: ['1024x1024', '896x1280', '1280x896', '768x1408', '1408x768'],
      maxInputImages: 0,
      pricing: { perImageMicro: 40_000n },
    });
    expect(findModel(catalog, 'sandbox/image-fixed', 'image')).toMatchObject({
      sizes: ['low:1024x1024'],
      fixedOption: { quality: 'low', size: '1024x1024' },
    });
    expect(findModel(catalog, 'openai/sora-2', 'video')).toMatchObject({
      modes: ['text-to-video', 'image-to-video'],
      resolutions: ['720p'],
      ratios: ['16:9', '9:16'],
      durations: [4, 8, 12],
      maxInputImages: 1,
      pricing: { perSecondMicro: 100_000n },
    });
    expect(findModel(catalog, 'google/veo-3', 'video')).toMatchObject({
      resolutions: ['720p', '1080p'],
      ratios: ['16:9'],
      durations: [8],
      pricing: { perSecondMicro: 400_000n },
    });
    expect(findModel(catalog, 'sandbox/video', 'video')).toMatchObject({ durations: [2, 4, 8], resolutions: ['480p', '720p'] });
  });

  test('vendors map to their protocols; retired ids name existing successors', () => {
    expect(Object.fromEntries(catalog.vendors)).toEqual({
      openai: 'openai',
      anthropic: 'anthropic',
      gemini: 'gemini',
      sandbox: 'sandbox',
    });
    expect(catalog.retired.find((entry) => entry.id === 'anthropic/claude-3-5-sonnet')).toMatchObject({
      successor: 'anthropic/claude-sonnet-4-5',
      aliases: ['claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20241022', 'claude-3-5-sonnet-latest'],
    });
    for (const entry of catalog.retired) expect(catalog.byId.has(entry.successor)).toBe(true);
  });

  test('findModel takes exact service ids only, optionally of one kind', () => {
    expect(findModel(catalog, 'openai/sora-2')?.kind).toBe('video');
    expect(findModel(catalog, 'openai/sora-2', 'text')).toBeUndefined();
    expect(findModel(catalog, 'gpt-4o-mini')).toBeUndefined();
    expect(findModel(catalog, 'OpenAI/gpt-4o-mini')).toBeUndefined();
  });

  test('the catalog is immutable', () => {
    expect(Object.isFrozen(catalog)).toBe(true);
    expect(Object.isFrozen(catalog.text)).toBe(true);
    expect(Object.isFrozen(catalog.text[0])).toBe(true);
  });
});

describe('priceTokensMicro', () => {
  test.each<[bigint, bigint, 'up' | 'nearest', bigint]>([
    [1000n, 150_000n, 'up', 150n],
    [1n, 150_000n, 'up', 1n],
    [1n, 150_000n, 'nearest', 0n],
    [4n, 150_000n, 'nearest', 1n],
    [3n, 150_000n, 'nearest', 0n],
    [1_000_000n, 15_000_000n, 'nearest', 15_000_000n],
    [0n, 15_000_000n, 'up', 0n],
    [1_234_567n, 275_000n, 'up', 339_506n],
    [1_234_567n, 275_000n, 'nearest', 339_506n],
  ])('%s tokens × %s/M rounded %s = %s', (tokens, price, rounding, expected) => {
    expect(priceTokensMicro(tokens, price, rounding)).toBe(expected);
  });
});

describe('access', () => {
  test('a prepaid key uses every priced model of a configured vendor', () => {
    expect(usableTextModels(catalog, prepaid)).toHaveLength(catalog.text.length);
    expect(ids(usableTextModels(catalog, { keyKind: 'prepaid', configuredVendors: new Set(['anthropic']) }))).toEqual([
      'anthropic/claude-sonnet-4-5',
      'anthropic/claude-haiku-4-5',
      'sandbox/echo',
      'sandbox/reasoner',
    ]);
  });

  test('the sandbox is always configured', () => {
    const none: ModelAccess = { keyKind: 'prepaid', configuredVendors: new Set() };
    expect(ids(usableTextModels(catalog, none))).toEqual(['sandbox/echo', 'sandbox/reasoner']);
    expect(ids(usableImageModels(catalog, none))).toEqual(['sandbox/image', 'sandbox/image-fixed']);
    expect(ids(usableVideoModels(catalog, none))).toEqual(['sandbox/video']);
  });

  test('a plan key uses only what its plan includes, of configured vendors', () => {
    const planModels = ['anthropic/claude-haiku-4-5', 'openai/gpt-4o-mini', 'sandbox/echo'];
    expect(ids(usableTextModels(catalog, { keyKind: 'plan', planModels, configuredVendors: new Set(['anthropic']) }))).toEqual([
      'anthropic/claude-haiku-4-5',
      'sandbox/echo',
    ]);
    expect(usableTextModels(catalog, { keyKind: 'plan', configuredVendors: ALL_VENDORS })).toEqual([]);
  });
});

describe('model list bodies', () => {
  test('text entries carry exact per-token USD prices for prepaid keys', () => {
    const body = renderTextModelList(catalog, prepaid);
    expect(body.object).toBe('list');
    expect(body.data.find((entry) => entry.id === 'openai/gpt-4o-mini')).toEqual({
      id: 'openai/gpt-4o-mini',
      object: 'model',
      created: 1721260800,
      owned_by: 'openai',
      context_length: 128000,
      top_provider: { context_length: 128000, max_completion_tokens: 16384 },
      pricing: {
        prompt: '0.00000015',
        completion: '0.0000006',
        input_cache_read: '0.000000075',
        input_cache_write_5m: '0.00000015',
        input_cache_write_1h: '0.00000015',
      },
    });
    const pricing = Object.fromEntries(body.data.map((entry) => [entry.id, entry.pricing]));
    expect(pricing['anthropic/claude-sonnet-4-5']).toEqual({
      prompt: '0.000003',
      completion: '0.000015',
      input_cache_read: '0.0000003',
      input_cache_write_5m: '0.00000375',
      input_cache_write_1h: '0.000006',
    });
    expect(pricing['anthropic/claude-haiku-4-5']).toEqual({
      prompt: '0.000001',
      completion: '0.000005',
      input_cache_read: '0.0000001',
      input_cache_write_5m: '0.00000125',
      input_cache_write_1h: '0.000002',
    });
    expect(pricing['openai/gpt-4.1']).toEqual({
      prompt: '0.000002',
      completion: '0.000008',
      input_cache_read: '0.0000005',
      input_cache_write_5m: '0.000002',
      input_cache_write_1h: '0.000002',
    });
    expect(pricing['openai/o4-mini']).toEqual({
      prompt: '0.0000011',
      completion: '0.0000044',
      input_cache_read: '0.000000275',
      input_cache_write_5m: '0.0000011',
      input_cache_write_1h: '0.0000011',
    });
    expect(pricing['google/gemini-2.5-pro']).toEqual({
      prompt: '0.00000125',
      completion: '0.00001',
      input_cache_read: '0.000000125',
      input_cache_write_5m: '0.00000125',
      input_cache_write_1h: '0.00000125',
    });
    expect(pricing['google/gemini-2.5-flash']).toEqual({
      prompt: '0.0000003',
      completion: '0.0000025',
      input_cache_read: '0.00000003',
      input_cache_write_5m: '0.0000003',
      input_cache_write_1h: '0.0000003',
    });
    // Plain JSON: serialisable, no bigint, no float exponent.
    expect(JSON.stringify(body)).not.toMatch(/e-\d/);
  });

  test('text entries omit pricing for plan keys and list only usable models', () => {
    const body = renderTextModelList(catalog, {
      keyKind: 'plan',
      planModels: ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'],
      configuredVendors: new Set(['anthropic']),
    });
    expect(body.data.map((entry) => entry.id)).toEqual(['anthropic/claude-sonnet-4-5']);
    expect('pricing' in body.data[0]).toBe(false);
    expect(body.data[0].top_provider.max_completion_tokens).toBe(64000);
  });

  test('image and video entries', () => {
    const images = renderImageModelList(catalog, prepaid);
    expect(images.data.find((entry) => entry.id === 'openai/gpt-image-1')).toEqual({
      id: 'openai/gpt-image-1',
      object: 'model',
      created: 1745366400,
      owned_by: 'openai',
      modes: ['generate', 'edit'],
      sizes: ['1024x1024', '1024x1536', '1536x1024'],
      max_input_images: 16,
      pricing: { per_image: '0.042' },
    });
    expect(images.data.find((entry) => entry.id === 'google/imagen-4')?.pricing).toEqual({ per_image: '0.04' });
    expect(images.data.find((entry) => entry.id === 'sandbox/image-fixed')?.sizes).toEqual(['low:1024x1024']);

    const videos = renderVideoModelList(catalog, prepaid);
    expect(videos.data.find((entry) => entry.id === 'openai/sora-2')).toEqual({
      id: 'openai/sora-2',
      object: 'model',
      created: 1759190400,
      owned_by: 'openai',
      modes: ['text-to-video', 'image-to-video'],
      resolutions: ['720p'],
      ratios: ['16:9', '9:16'],
      durations: [4, 8, 12],
      max_input_images: 1,
      pricing: { per_second: '0.1' },
    });
    expect(videos.data.find((entry) => entry.id === 'google/veo-3')?.pricing).toEqual({ per_second: '0.4' });

    expect(ids(renderImageModelList(catalog, sandboxOnly).data)).toEqual(['sandbox/image', 'sandbox/image-fixed']);
    const plan: ModelAccess = { keyKind: 'plan', planModels: ['sandbox/video', 'sandbox/image'], configuredVendors: ALL_VENDORS };
    expect(renderVideoModelList(catalog, plan).data.map((entry) => 'pricing' in entry)).toEqual([false]);
    expect(renderImageModelList(catalog, plan).data.map((entry) => 'pricing' in entry)).toEqual([false]);
  });
});

describe('catalog files (TOLLGATE_CATALOG)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-catalog-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let counter = 0;
  const writeCatalog = (content: unknown): string => {
    const file = join(dir, `catalog-${++counter}.json`);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };

  const validDocument = () => ({
    models: [
      {
        kind: 'text',
        id: 'acme/llama-3.3-70b',
        vendor: 'acme',
        vendor_model_id: 'meta-llama/Llama-3.3-70B-Instruct',
        created: 1733443200,
        context_length: 131072,
        max_output_tokens: 8192,
        pricing: { input: '0.88', output: '0.88' },
      },
      {
        kind: 'image',
        id: 'sandbox/image',
        vendor: 'sandbox',
        created: 0,
        modes: ['generate', 'edit'],
        sizes: ['512x512'],
        max_input_images: 2,
        pricing: { per_image: '0.001' },
      },
      {
        kind: 'video',
        id: 'sandbox/video',
        vendor: 'sandbox',
        created: 0,
        modes: ['text-to-video'],
        resolutions: ['480p'],
        ratios: ['16:9'],
        durations: [2],
        max_input_images: 0,
        pricing: { per_second: '0.001' },
      },
      {
        kind: 'text',
        id: 'acme/secret-model',
        vendor: 'acme',
        created: 0,
        context_length: 1000,
        max_output_tokens: 100,
        effort: 'openai-effort',
        pricing: null,
      },
    ],
    retired: [{ id: 'acme/llama-3.1-70b', successor: 'acme/llama-3.3-70b', aliases: ['meta-llama/Llama-3.1-70B-Instruct'] }],
  });

  test('a good file replaces the built-in catalog', () => {
    const loaded = loadCatalog(writeCatalog(validDocument()));
    expect(ids(loaded.text)).toEqual(['acme/llama-3.3-70b', 'acme/secret-model']);
    expect(findModel(loaded, 'openai/gpt-4o-mini')).toBeUndefined();
    expect(loaded.vendors.get('acme')).toBe('openai-compatible');
    expect(findModel(loaded, 'acme/llama-3.3-70b', 'text')).toMatchObject({
      protocol: 'openai-compatible',
      effort: 'none',
      aliases: [],
      pricing: {
        inputPerMTokMicro: 880_000n,
        cachedInputPerMTokMicro: 880_000n,
        cacheWrite5mPerMTokMicro: 880_000n,
        cacheWrite1hPerMTokMicro: 880_000n,
        outputPerMTokMicro: 880_000n,
      },
    });
    expect(findModel(loaded, 'sandbox/video', 'video')?.vendorModelId).toBe('video');

    const access: ModelAccess = { keyKind: 'prepaid', configuredVendors: new Set(['acme']) };
    expect(resolveModelId(loaded, 'meta-llama/Llama-3.3-70B-Instruct', 'text', access).model.id).toBe('acme/llama-3.3-70b');
    expect(resolveModelId(loaded, 'meta-llama/Llama-3.1-70B-Instruct', 'text', access).model.id).toBe('acme/llama-3.3-70b');
    expect(() => resolveModelId(loaded, 'gpt-4o-mini', 'text', access)).toThrow(/model_not_available|does not exist/);
    // No published price: known, but never listed or resolved.
    expect(ids(usableTextModels(loaded, access))).toEqual(['acme/llama-3.3-70b']);
    expect(() => resolveModelId(loaded, 'acme/secret-model', 'text', access)).toThrow();
  });

  test("cache-write prices: set in the file, or by the vendor's rule when left out (files written before them still load)", () => {
    const claude = (pricing: Record<string, string>, id = 'anthropic/claude-x') => ({
      kind: 'text',
      id,
      vendor: 'anthropic',
      created: 0,
      context_length: 1000,
      max_output_tokens: 100,
      pricing,
    });
    const loaded = loadCatalog(
      writeCatalog({
        models: [
          claude({ input: '3.00', output: '15.00' }),
          claude({ input: '0.000003', output: '1' }, 'anthropic/claude-odd'),
          claude({ input: '3.00', cache_write_5m: '3.50', cache_write_1h: '5.00', output: '15.00' }, 'anthropic/claude-negotiated'),
        ],
      }),
    );
    expect(findModel(loaded, 'anthropic/claude-x', 'text')?.pricing).toMatchObject({
      cacheWrite5mPerMTokMicro: 3_750_000n,
      cacheWrite1hPerMTokMicro: 6_000_000n,
    });
    // 1.25 × 3 micro-dollars per million tokens is 3.75: rounded up, never under the vendor's price.
    expect(findModel(loaded, 'anthropic/claude-odd', 'text')?.pricing).toMatchObject({
      cacheWrite5mPerMTokMicro: 4n,
      cacheWrite1hPerMTokMicro: 6n,
    });
    expect(findModel(loaded, 'anthropic/claude-negotiated', 'text')?.pricing).toMatchObject({
      cacheWrite5mPerMTokMicro: 3_500_000n,
      cacheWrite1hPerMTokMicro: 5_000_000n,
    });
    const doc = validDocument();
    (doc.models[0].pricing as Record<string, unknown>).cache_write_1h = 2;
    const file = writeCatalog(doc);
    expect(() => loadCatalog(file)).toThrow(`TOLLGATE_CATALOG ${file}: models[0].pricing.cache_write_1h must be a decimal string`);
  });

  type Doc = ReturnType<typeof validDocument>;
  test.each<[string, (doc: Doc) => unknown, string]>([
    [
      'price as a number',
      (d) => ((d.models[0].pricing as { input: unknown }).input = 0.88),
      'models[0].pricing.input must be a decimal string',
    ],
    [
      'price with exponent',
      (d) => ((d.models[0].pricing as { input: unknown }).input = '1e-7'),
      'models[0].pricing.input must be a decimal string of USD',
    ],
    [
      'price too precise',
      (d) => ((d.models[0].pricing as { output: unknown }).output = '0.0000001'),
      'models[0].pricing.output must be a decimal string of USD with at most 6 decimal places',
    ],
    [
      'negative price',
      (d) => ((d.models[1].pricing as { per_image: unknown }).per_image = '-1'),
      'models[1].pricing.per_image must be a decimal string',
    ],
    ['missing pricing', (d) => delete (d.models[0] as { pricing?: unknown }).pricing, 'models[0].pricing must be an object or null'],
    ['id without vendor', (d) => (d.models[0].id = 'llama'), 'models[0].id must be a lowercase "<vendor>/<model>" id'],
    ['id in upper case', (d) => (d.models[0].id = 'Acme/llama'), 'models[0].id must be a lowercase'],
    ['duplicate id', (d) => (d.models[3].id = 'acme/llama-3.3-70b'), 'models[3].id repeats the id "acme/llama-3.3-70b" of models[0]'],
    ['retired id that is a model', (d) => (d.retired[0].id = 'acme/llama-3.3-70b'), 'retired[0].id repeats the id'],
    ['missing successor', (d) => (d.retired[0].successor = 'acme/nope'), 'retired[0].successor must be the id of a model in the catalog'],
    ['unknown kind', (d) => (d.models[0].kind = 'audio'), 'models[0].kind must be one of text, image, video'],
    ['unknown field', (d) => ((d.models[0] as Record<string, unknown>).pricng = {}), 'models[0].pricng is not a known field'],
    ['unknown top-level field', (d) => ((d as Record<string, unknown>).extra = 1), 'extra is not a known field'],
    [
      'bad effort',
      (d) => ((d.models[0] as Record<string, unknown>).effort = 'high'),
      'models[0].effort must be one of none, openai-effort, anthropic-thinking, gemini-thinking',
    ],
    ['bad protocol', (d) => ((d.models[0] as Record<string, unknown>).protocol = 'soap'), 'models[0].protocol must be one of'],
    ['bad vendor name', (d) => (d.models[0].vendor = 'Acme AI'), 'models[0].vendor must be a lowercase vendor name'],
    [
      'sandbox protocol for a real vendor',
      (d) => ((d.models[0] as Record<string, unknown>).protocol = 'sandbox'),
      'models[0].protocol must be "sandbox" exactly when vendor is "sandbox"',
    ],
    [
      'vendor with two protocols',
      (d) => ((d.models[3] as Record<string, unknown>).protocol = 'anthropic'),
      'models[3].protocol must be "openai-compatible" like the other models of vendor "acme"',
    ],
    ['zero context length', (d) => (d.models[0].context_length = 0), 'models[0].context_length must be a positive integer'],
    ['fractional output limit', (d) => (d.models[0].max_output_tokens = 1.5), 'models[0].max_output_tokens must be a positive integer'],
    [
      'output limit above context',
      (d) => (d.models[0].max_output_tokens = 200000),
      'models[0].max_output_tokens must not exceed context_length',
    ],
    ['negative created', (d) => (d.models[0].created = -1), 'models[0].created must be a non-negative integer'],
    ['malformed size', (d) => (d.models[1].sizes = ['512x512', '1024x']), 'models[1].sizes[1] must be a size like "1024x1024"'],
    ['fixed option among sizes', (d) => (d.models[1].sizes = ['low:1024x1024', '512x512']), 'models[1].sizes[0] must be a size'],
    ['repeated size', (d) => (d.models[1].sizes = ['512x512', '512x512']), 'models[1].sizes[1] repeats "512x512"'],
    ['empty sizes', (d) => (d.models[1].sizes = []), 'models[1].sizes must not be empty'],
    ['bad image mode', (d) => (d.models[1].modes = ['paint']), 'models[1].modes[0] must be one of generate, edit'],
    [
      'edit without input images',
      (d) => (d.models[1].max_input_images = 0),
      'models[1].max_input_images must be at least 1 for a model with mode "edit"',
    ],
    ['malformed resolution', (d) => (d.models[2].resolutions = ['720']), 'models[2].resolutions[0] must be a resolution like "720p"'],
    ['malformed ratio', (d) => (d.models[2].ratios = ['16x9']), 'models[2].ratios[0] must be a ratio like "16:9"'],
    ['zero duration', (d) => (d.models[2].durations = [0]), 'models[2].durations[0] must be a positive integer'],
    [
      'image-to-video without input images',
      (d) => (d.models[2].modes = ['image-to-video']),
      'models[2].max_input_images must be at least 1',
    ],
    ['models not a list', (d) => ((d as Record<string, unknown>).models = {}), 'models must be a list'],
  ])('%s', (_name, mutate, message) => {
    const doc = validDocument();
    mutate(doc);
    const file = writeCatalog(doc);
    expect(() => loadCatalog(file)).toThrow(`TOLLGATE_CATALOG ${file}: ${message}`);
  });

  test('a file that is not a JSON object, not JSON, or not there', () => {
    const array = writeCatalog([]);
    expect(() => loadCatalog(array)).toThrow(`TOLLGATE_CATALOG ${array}: the catalog must be a JSON object`);
    const broken = writeCatalog('{"models": [');
    expect(() => loadCatalog(broken)).toThrow(`TOLLGATE_CATALOG ${broken}: is not valid JSON`);
    const missing = join(dir, 'missing.json');
    expect(() => loadCatalog(missing)).toThrow(`TOLLGATE_CATALOG ${missing}: cannot read the file (ENOENT)`);
  });

  test('the built-in source round-trips through a file', () => {
    const loaded = loadCatalog(writeCatalog(BUILTIN_CATALOG_SOURCE));
    expect(loaded).not.toBe(catalog);
    expect(renderTextModelList(loaded, prepaid)).toEqual(renderTextModelList(catalog, prepaid));
    expect(renderImageModelList(loaded, prepaid)).toEqual(renderImageModelList(catalog, prepaid));
    expect(renderVideoModelList(loaded, prepaid)).toEqual(renderVideoModelList(catalog, prepaid));
  });
});
