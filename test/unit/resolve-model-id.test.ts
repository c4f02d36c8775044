import { builtinCatalog, parseCatalog } from '../../src/domain/catalog/catalog';
import { canonicalModelName, resolveModelId } from '../../src/domain/catalog/resolve';
import type { CatalogSource } from '../../src/domain/catalog/schema';
import type { ModelAccess, ModelKind } from '../../src/domain/catalog/types';
import { ApiError } from '../../src/domain/shared/errors';

const catalog = builtinCatalog();

const prepaid = (...vendors: string[]): ModelAccess => ({
  keyKind: 'prepaid',
  configuredVendors: new Set(vendors.length > 0 ? vendors : ['openai', 'anthropic', 'gemini', 'sandbox']),
});
const plan = (planModels?: string[]): ModelAccess => ({
  keyKind: 'plan',
  planModels,
  configuredVendors: new Set(['openai', 'anthropic', 'gemini', 'sandbox']),
});
const everything = prepaid();

function expectNotAvailable(run: () => unknown, sentId: string): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ApiError);
  expect(thrown).toMatchObject({ status: 404, code: 'model_not_available' });
  expect((thrown as ApiError).message).toContain(`'${sentId}'`);
}

const SONNET = 'anthropic/claude-sonnet-4-5';
const HAIKU = 'anthropic/claude-haiku-4-5';
const FLASH = 'google/gemini-2.5-flash';
const PRO = 'google/gemini-2.5-pro';

describe('resolveModelId: forms that resolve', () => {
  test.each<[string, ModelKind, string]>([
    // exact and case
    ['openai/gpt-4o-mini', 'text', 'openai/gpt-4o-mini'],
    ['OpenAI/GPT-4o-mini', 'text', 'openai/gpt-4o-mini'],
    ['gpt-4o-mini', 'text', 'openai/gpt-4o-mini'],
    ['GPT-4O-MINI', 'text', 'openai/gpt-4o-mini'],
    ['gpt_4o_mini', 'text', 'openai/gpt-4o-mini'],
    ['gpt-4o-mini-2024-07-18', 'text', 'openai/gpt-4o-mini'],
    ['openai/gpt-4o-mini-2024-07-18', 'text', 'openai/gpt-4o-mini'],
    ['gpt-4o-mini-latest', 'text', 'openai/gpt-4o-mini'],
    ['openrouter/openai/gpt-4o-mini', 'text', 'openai/gpt-4o-mini'],
    ['gpt-4.1', 'text', 'openai/gpt-4.1'],
    ['gpt-4-1', 'text', 'openai/gpt-4.1'],
    ['gpt_4_1', 'text', 'openai/gpt-4.1'],
    ['gpt-4.1-2025-04-14', 'text', 'openai/gpt-4.1'],
    ['OpenAI/GPT-4.1', 'text', 'openai/gpt-4.1'],
    ['o4-mini', 'text', 'openai/o4-mini'],
    ['O4-Mini', 'text', 'openai/o4-mini'],
    ['o4-mini-2025-04-16', 'text', 'openai/o4-mini'],
    // Anthropic, Bedrock, Vertex
    ['claude-sonnet-4-5', 'text', SONNET],
    ['claude-sonnet-4.5', 'text', SONNET],
    ['claude_sonnet_4_5', 'text', SONNET],
    ['claude-sonnet-4-5-20250929', 'text', SONNET],
    ['claude-sonnet-4-5-latest', 'text', SONNET],
    ['Anthropic/Claude-Sonnet-4.5', 'text', SONNET],
    ['anthropic/claude-sonnet-4.5', 'text', SONNET],
    ['claude-sonnet-4-5@20250929', 'text', SONNET],
    ['anthropic.claude-sonnet-4-5-20250929-v1:0', 'text', SONNET],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'text', SONNET],
    ['eu.anthropic.claude-sonnet-4-5-20250929-v1:0', 'text', SONNET],
    ['global.anthropic.claude-sonnet-4-5-20250929-v1:0', 'text', SONNET],
    ['bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'text', SONNET],
    ['publishers/anthropic/models/claude-sonnet-4-5@20250929', 'text', SONNET],
    ['projects/p1/locations/global/publishers/anthropic/models/claude-sonnet-4-5', 'text', SONNET],
    ['claude-haiku-4-5', 'text', HAIKU],
    ['claude-haiku-4.5', 'text', HAIKU],
    ['claude-haiku-4-5-20251001', 'text', HAIKU],
    ['claude-haiku-4-5@20251001', 'text', HAIKU],
    ['apac.anthropic.claude-haiku-4-5-20251001-v1:0', 'text', HAIKU],
    ['anthropic.claude-haiku-4-5-20251001-v1:0', 'text', HAIKU],
    // Google
    ['gemini-2.5-flash', 'text', FLASH],
    ['Gemini-2.5-Flash', 'text', FLASH],
    ['gemini_2_5_flash', 'text', FLASH],
    ['models/gemini-2.5-flash', 'text', FLASH],
    ['google/gemini-2.5-flash-preview-05-20', 'text', FLASH],
    ['gemini-2.5-flash-preview-04-17', 'text', FLASH],
    ['gemini-2.5-flash-preview-09-2025', 'text', FLASH],
    ['models/gemini-2.5-flash-preview-09-2025', 'text', FLASH],
    ['gemini-2.5-flash-001', 'text', FLASH],
    ['gemini-2.5-flash-latest', 'text', FLASH],
    ['gemini-2.5-flash-exp', 'text', FLASH],
    ['gemini/gemini-2.5-flash', 'text', FLASH],
    ['vertex_ai/gemini-2.5-flash', 'text', FLASH],
    ['publishers/google/models/gemini-2.5-flash', 'text', FLASH],
    ['projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash', 'text', FLASH],
    ['gemini-2.5-pro', 'text', PRO],
    ['gemini-2.5-pro-exp-03-25', 'text', PRO],
    ['models/gemini-2.5-pro-preview-06-05', 'text', PRO],
    ['gemini-2.5-pro-preview-05-06', 'text', PRO],
    ['GOOGLE/GEMINI-2.5-PRO', 'text', PRO],
    // retired ids → successor, in every form
    ['anthropic/claude-3-5-sonnet', 'text', SONNET],
    ['claude-3-5-sonnet-20240620', 'text', SONNET],
    ['claude-3-5-sonnet-20241022', 'text', SONNET],
    ['claude-3-5-sonnet-latest', 'text', SONNET],
    ['claude-3.5-sonnet', 'text', SONNET],
    ['anthropic/claude-3.5-sonnet', 'text', SONNET],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'text', SONNET],
    ['us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'text', SONNET],
    ['claude-3-5-sonnet@20240620', 'text', SONNET],
    ['claude-3-7-sonnet-20250219', 'text', SONNET],
    ['us.anthropic.claude-3-7-sonnet-20250219-v1:0', 'text', SONNET],
    ['claude-3-5-haiku-latest', 'text', HAIKU],
    ['claude-3-5-haiku-20241022', 'text', HAIKU],
    ['gemini-1.5-flash-002', 'text', FLASH],
    ['models/gemini-1.5-flash-latest', 'text', FLASH],
    ['models/gemini-1.5-pro-latest', 'text', PRO],
    ['gpt-4.5-preview-2025-02-27', 'text', 'openai/gpt-4.1'],
    ['o1-mini', 'text', 'openai/o4-mini'],
    ['o1-mini-2024-09-12', 'text', 'openai/o4-mini'],
    // sandbox
    ['sandbox/echo', 'text', 'sandbox/echo'],
    ['echo', 'text', 'sandbox/echo'],
    ['Sandbox/Reasoner', 'text', 'sandbox/reasoner'],
    // images
    ['openai/gpt-image-1', 'image', 'openai/gpt-image-1'],
    ['gpt-image-1', 'image', 'openai/gpt-image-1'],
    ['GPT_Image_1', 'image', 'openai/gpt-image-1'],
    ['google/imagen-4', 'image', 'google/imagen-4'],
    ['imagen-4.0-generate-001', 'image', 'google/imagen-4'],
    ['models/imagen-4.0-generate-preview-06-06', 'image', 'google/imagen-4'],
    ['sandbox/image-fixed', 'image', 'sandbox/image-fixed'],
    ['sandbox/image', 'image', 'sandbox/image'],
    // videos
    ['openai/sora-2', 'video', 'openai/sora-2'],
    ['sora-2', 'video', 'openai/sora-2'],
    ['google/veo-3', 'video', 'google/veo-3'],
    ['veo-3.0-generate-001', 'video', 'google/veo-3'],
    ['veo-3.0-generate-preview', 'video', 'google/veo-3'],
    ['models/veo-3.0-generate-001', 'video', 'google/veo-3'],
    ['sandbox/video', 'video', 'sandbox/video'],
  ])('%s (%s) → %s', (sent, kind, expected) => {
    const resolved = resolveModelId(catalog, sent, kind, everything);
    expect(resolved.model.id).toBe(expected);
    expect(resolved.model.kind).toBe(kind);
    expect(resolved.routedFrom).toBe(sent === expected ? null : sent);
  });
});

describe('resolveModelId: forms that do not resolve (no fuzzy or prefix matching)', () => {
  test.each<[string, ModelKind]>([
    ['gpt-4o', 'text'],
    ['openai/gpt-4o', 'text'],
    ['gpt-4o-2024-08-06', 'text'],
    ['gpt-4', 'text'],
    ['gpt-4-0613', 'text'],
    ['gpt-4.1-mini', 'text'],
    ['gpt-4.1-nano', 'text'],
    ['gpt-4o-mini-search-preview', 'text'],
    ['gpt-4o-mini:free', 'text'],
    ['o4', 'text'],
    ['o3-mini', 'text'],
    ['o4-mini-high', 'text'],
    ['claude-sonnet-4', 'text'],
    ['claude-sonnet-4-20250514', 'text'],
    ['anthropic.claude-sonnet-4-20250514-v1:0', 'text'],
    ['claude-opus-4-1', 'text'],
    ['claude-haiku-4', 'text'],
    ['claude', 'text'],
    ['sonnet', 'text'],
    ['gemini-2.5', 'text'],
    ['gemini-2', 'text'],
    ['gemini', 'text'],
    ['gemini-2.5-flash-lite', 'text'],
    ['gemini-2.0-flash', 'text'],
    ['gemini-2.5-flash-image-preview', 'text'],
    // a known vendor prefix that does not own the model
    ['anthropic/gpt-4o-mini', 'text'],
    ['openai/claude-sonnet-4-5', 'text'],
    ['us.anthropic.gpt-4o-mini', 'text'],
    ['publishers/google/models/claude-sonnet-4-5', 'text'],
    // malformed
    ['', 'text'],
    ['/', 'text'],
    ['models/', 'text'],
    ['openai//gpt-4o-mini', 'text'],
    ['gpt-4o-mini ', 'text'],
    ['2024-07-18', 'text'],
    ['x'.repeat(300), 'text'],
    // the wrong kind
    ['sandbox/image', 'text'],
    ['gpt-image-1', 'text'],
    ['sora-2', 'text'],
    ['gpt-4o-mini', 'image'],
    ['sora-2', 'image'],
    ['gpt-image', 'image'],
    ['imagen-4-ultra', 'image'],
    ['imagen-4.0-ultra-generate-001', 'image'],
    ['sandbox/video', 'image'],
    ['gpt-image-1', 'video'],
    ['sora-2-pro', 'video'],
    ['veo-3.0-fast-generate-001', 'video'],
    ['veo-2', 'video'],
  ])('%j (%s) → 404', (sent, kind) => {
    expectNotAvailable(() => resolveModelId(catalog, sent, kind, everything), sent);
  });
});

describe('resolveModelId: never to a model the key cannot use', () => {
  test.each<[string, ModelAccess, string]>([
    ['gpt-4o-mini', prepaid('sandbox', 'anthropic'), 'openai not configured'],
    ['openai/gpt-4o-mini', prepaid('sandbox'), 'exact id, openai not configured'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', prepaid('openai'), 'anthropic not configured'],
    ['models/gemini-2.5-flash', prepaid('openai', 'anthropic'), 'gemini not configured'],
    ['claude-sonnet-4-5', plan(['anthropic/claude-haiku-4-5']), 'plan lacks it'],
    ['anthropic/claude-3-5-sonnet', plan(['anthropic/claude-haiku-4-5']), 'retired id whose successor the plan lacks'],
    ['gpt-4o-mini', plan(), 'plan key without plan models'],
    ['sandbox/echo', plan([]), 'plan with no models'],
  ])('%s → 404 (%s)', (sent, access) => {
    expectNotAvailable(() => resolveModelId(catalog, sent, 'text', access), sent);
  });

  test('plan keys resolve what their plan includes', () => {
    const access = plan(['anthropic/claude-haiku-4-5', 'sandbox/echo']);
    expect(resolveModelId(catalog, 'claude-haiku-4-5-20251001', 'text', access).model.id).toBe(HAIKU);
    expect(resolveModelId(catalog, 'claude-3-5-haiku-latest', 'text', access).model.id).toBe(HAIKU);
    expect(resolveModelId(catalog, 'sandbox/echo', 'text', access).routedFrom).toBeNull();
  });

  test('the sandbox needs no configured vendor', () => {
    const access: ModelAccess = { keyKind: 'prepaid', configuredVendors: new Set() };
    expect(resolveModelId(catalog, 'sandbox/reasoner', 'text', access).model.id).toBe('sandbox/reasoner');
    expect(resolveModelId(catalog, 'sandbox/video', 'video', access).model.id).toBe('sandbox/video');
    expectNotAvailable(() => resolveModelId(catalog, 'gpt-4o-mini', 'text', access), 'gpt-4o-mini');
  });
});

describe('resolveModelId: several vendors, one name', () => {
  // An OpenAI-compatible reseller serving the same vendor id, and a dated snapshot listed
  // as its own model: shared names resolve only when one usable model remains.
  const source: CatalogSource = {
    models: [
      textModel('openai/gpt-4o-mini', 'openai', 'gpt-4o-mini'),
      textModel('acme/gpt-4o-mini', 'acme', 'gpt-4o-mini'),
      textModel('x/foo', 'x', 'foo'),
      textModel('x/foo-2024-05-13', 'x', 'foo-2024-05-13'),
      { ...textModel('x/unpriced', 'x', 'unpriced'), pricing: null },
    ],
  };
  const multi = parseCatalog(source, 'test');
  const both = prepaid('openai', 'acme', 'x');

  test.each<[string, ModelAccess, string | null]>([
    ['gpt-4o-mini', both, null],
    ['gpt-4o-mini', prepaid('acme'), 'acme/gpt-4o-mini'],
    ['gpt-4o-mini-2024-07-18', prepaid('openai'), 'openai/gpt-4o-mini'],
    ['acme/gpt-4o-mini', both, 'acme/gpt-4o-mini'],
    ['ACME/gpt-4o-mini', both, 'acme/gpt-4o-mini'],
    ['openai/gpt-4o-mini-2024-07-18', both, 'openai/gpt-4o-mini'],
    ['foo', both, 'x/foo'],
    ['foo-2024-05-13', both, 'x/foo-2024-05-13'],
    ['FOO-2024-05-13', both, 'x/foo-2024-05-13'],
    ['foo-latest', both, null],
    ['unpriced', both, null],
    ['x/unpriced', both, null],
  ])('%s → %s', (sent, access, expected) => {
    if (expected === null) expectNotAvailable(() => resolveModelId(multi, sent, 'text', access), sent);
    else expect(resolveModelId(multi, sent, 'text', access).model.id).toBe(expected);
  });

  test('each catalog has its own index', () => {
    expectNotAvailable(() => resolveModelId(catalog, 'foo', 'text', both), 'foo');
    expect(resolveModelId(multi, 'foo', 'text', both).model.id).toBe('x/foo');
  });

  test('repeated lookups (cached) give the same answer under different access', () => {
    for (let i = 0; i < 3; i++) {
      expect(resolveModelId(multi, 'gpt-4o-mini', 'text', prepaid('acme')).model.id).toBe('acme/gpt-4o-mini');
      expect(resolveModelId(multi, 'gpt-4o-mini', 'text', prepaid('openai')).model.id).toBe('openai/gpt-4o-mini');
    }
  });
});

describe('canonicalModelName', () => {
  test.each([
    ['Claude-Sonnet-4.5@20250929', 'claude-sonnet-4-5'],
    ['claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['gemini-2.5-flash-preview-05-20', 'gemini-2-5-flash'],
    ['gemini-2.5-flash-preview-09-2025', 'gemini-2-5-flash'],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-3.5-turbo-0613', 'gpt-3-5-turbo'],
    ['imagen-4.0-generate-001', 'imagen-4-0-generate'],
    ['gemini-exp-1206', 'gemini'],
    ['gpt-4o', 'gpt-4o'],
    ['2024-07-18', '2024-07-18'],
  ])('%s → %s', (name, canonical) => {
    expect(canonicalModelName(name)).toBe(canonical);
  });
});

function textModel(id: string, vendor: string, vendorModelId: string): CatalogSource['models'][number] {
  return {
    kind: 'text',
    id,
    vendor,
    vendor_model_id: vendorModelId,
    created: 0,
    context_length: 1000,
    max_output_tokens: 100,
    pricing: { input: '1', output: '2' },
  };
}
