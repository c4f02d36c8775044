import { builtinCatalog, parseCatalog } from '../../src/domain/catalog/catalog';
import { loadConfig } from '../../src/config';
import { configuredVendorEndpoints } from '../../src/config/vendors';
import { ProviderError } from '../../src/domain/generation/errors';
import { isDeploymentFailure } from '../../src/domain/routing/failover';
import { DeploymentHealth, type SharedHealth } from '../../src/domain/routing/health';
import { conversationKey } from '../../src/domain/routing/affinity';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const text = (extra: Record<string, unknown> = {}) => ({
  kind: 'text',
  id: 'acme/m',
  vendor: 'openai',
  created: 1,
  context_length: 1000,
  max_output_tokens: 100,
  pricing: { input: '1', output: '2' },
  ...extra,
});

const image = (extra: Record<string, unknown> = {}) => ({
  kind: 'image',
  id: 'acme/img',
  vendor: 'openai',
  created: 1,
  modes: ['generate'],
  sizes: ['1024x1024'],
  max_input_images: 0,
  pricing: { per_image: '0.04' },
  ...extra,
});

describe('catalog deployments', () => {
  test('an image model lists deployments as a text model does: OpenAI and Azure OpenAI accounts, by priority', () => {
    const catalog = parseCatalog(
      {
        vendors: { azure_east: { protocol: 'azure-openai', base_url: 'https://east.openai.azure.com' } },
        models: [image({ deployments: [{ vendor: 'azure_east', vendor_model_id: 'img-dep', priority: 1 }, { vendor: 'openai' }] })],
      },
      'test',
    );
    const [model] = catalog.images;
    expect(model!.routed).toBe(true);
    expect(model!.deployments.map((d) => [d.name, d.protocol, d.vendorModelId, d.priority])).toEqual([
      ['openai', 'openai', 'img', 0],
      ['azure_east', 'azure-openai', 'img-dep', 1],
    ]);
    for (const builtin of builtinCatalog().images) expect(builtin.routed).toBe(false);
  });

  test('a model without a list has its own vendor as its one deployment and is not routed (the built-in catalog)', () => {
    for (const model of builtinCatalog().text) {
      expect(model.routed).toBe(false);
      expect(model.deployments).toEqual([
        { name: model.vendor, vendor: model.vendor, protocol: model.protocol, vendorModelId: model.vendorModelId, priority: 0, weight: 1 },
      ]);
    }
  });

  test("deployments are ordered by priority, take protocols from the vendors section, and their vendors are the catalog's", () => {
    const catalog = parseCatalog(
      {
        vendors: {
          azure_east: { protocol: 'azure-openai', base_url: 'https://east.openai.azure.com/', api_key_env: 'AZ_KEY' },
          bedrock_us: { protocol: 'bedrock', region: 'us-east-1' },
        },
        models: [
          text({
            deployments: [
              { vendor: 'azure_east', vendor_model_id: 'dep-1', priority: 2 },
              { vendor: 'openai', priority: 1, weight: 3 },
            ],
          }),
          text({
            id: 'acme/claude',
            vendor: 'anthropic',
            deployments: [{ vendor: 'bedrock_us', vendor_model_id: 'anthropic.claude-x-v1:0' }],
          }),
        ],
      },
      'test',
    );
    const [gpt, claude] = catalog.text;
    expect(gpt!.routed).toBe(true);
    expect(gpt!.deployments.map((d) => [d.name, d.protocol, d.vendorModelId, d.priority, d.weight])).toEqual([
      ['openai', 'openai', 'm', 1, 3],
      ['azure_east', 'azure-openai', 'dep-1', 2, 1],
    ]);
    expect(claude!.deployments[0]!.protocol).toBe('bedrock');
    expect(catalog.vendors.get('azure_east')).toBe('azure-openai');
    expect(catalog.vendorDefaults.get('azure_east')).toMatchObject({ baseUrl: 'https://east.openai.azure.com', apiKeyEnv: 'AZ_KEY' });
    // Bedrock's cache-write prices follow Anthropic's rule (1.25x and 2x input).
    expect(claude!.pricing!.cacheWrite5mPerMTokMicro).toBe(1_250_000n);
  });

  test.each([
    [
      { models: [text({ deployments: [{ vendor: 'openai' }, { vendor: 'openai' }] })] },
      'test: models[0].deployments[1].vendor repeats the vendor "openai"',
    ],
    [{ models: [text({ deployments: [] })] }, 'test: models[0].deployments must not be empty'],
    [
      { models: [text({ deployments: [{ vendor: 'openai', weight: 0 }] })] },
      'test: models[0].deployments[0].weight must be a positive integer',
    ],
    [{ vendors: { b: { protocol: 'bedrock' } }, models: [] }, 'test: vendors.b.region is required for a bedrock vendor without base_url'],
    [
      { vendors: { a: { protocol: 'openai', api_key_env: 'lower' } }, models: [] },
      'test: vendors.a.api_key_env must be an environment variable name',
    ],
    [
      { vendors: { openai: { protocol: 'anthropic' } }, models: [text({ protocol: 'openai' })] },
      'test: models[0].protocol must be "anthropic" as the vendors section says of "openai"',
    ],
    [
      { models: [text(), text({ id: 'acme/n', protocol: 'anthropic' })] },
      'test: models[1].protocol must be "openai" like the other models of vendor "openai"',
    ],
    [{ models: [text({ fallback: 'acme/n' }), text({ id: 'acme/n' })] }, 'test: models[0].fallback needs a deployments list'],
    [
      { models: [text({ deployments: [{ vendor: 'openai' }], fallback: 'acme/none' })] },
      'test: models[0].fallback must be the id of a text model in the catalog',
    ],
    [{ models: [text({ deployments: [{ vendor: 'openai' }], fallback: 'acme/m' })] }, 'test: models[0].fallback must name another model'],
    [
      { models: [text({ deployments: [{ vendor: 'openai' }], fallback: 'acme/n' }), text({ id: 'acme/n', pricing: null })] },
      'test: models[0].fallback must name a priced model',
    ],
    [
      { models: [image({ deployments: [{ vendor: 'openai' }, { vendor: 'anthropic' }] })] },
      'test: models[0].deployments[1].vendor must be an "openai" or "azure-openai" vendor',
    ],
    [
      // Named by its place in the file, not by its place once sorted by priority.
      {
        models: [
          image({
            deployments: [
              { vendor: 'openai', priority: 2 },
              { vendor: 'anthropic', priority: 1 },
            ],
          }),
        ],
      },
      'test: models[0].deployments[1].vendor must be an "openai" or "azure-openai" vendor',
    ],
  ])('a bad catalog names the field: %j', (source, message) => {
    expect(() => parseCatalog(source, 'test')).toThrow(message);
  });
});

describe('deployment credentials from the environment', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-routing-unit-'));
    file = join(dir, 'catalog.json');
    writeFileSync(
      file,
      JSON.stringify({
        vendors: {
          azure_east: { protocol: 'azure-openai', base_url: 'https://east.openai.azure.com', api_key_env: 'AZ_KEY' },
          bedrock_us: { protocol: 'bedrock', region: 'us-west-2' },
        },
        models: [text({ deployments: [{ vendor: 'azure_east' }, { vendor: 'bedrock_us' }] })],
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the named variable holds the key; Bedrock needs its access key id and secret; unset is not configured', () => {
    const config = loadConfig({ TOLLGATE_CATALOG: file, AZ_KEY: 'k1', BEDROCK_US_ACCESS_KEY_ID: 'AKID' });
    const endpoints = configuredVendorEndpoints(config.catalog, config.vendors);
    expect(endpoints.get('azure_east')).toMatchObject({
      protocol: 'azure-openai',
      apiKey: 'k1',
      baseUrl: 'https://east.openai.azure.com',
      apiVersion: '2024-10-21',
    });
    expect(endpoints.has('bedrock_us')).toBe(false);
    const both = loadConfig({ TOLLGATE_CATALOG: file, BEDROCK_US_ACCESS_KEY_ID: 'AKID', BEDROCK_US_SECRET_ACCESS_KEY: 'secret' });
    expect(configuredVendorEndpoints(both.catalog, both.vendors).get('bedrock_us')).toMatchObject({
      apiKey: 'AKID',
      secretKey: 'secret',
      region: 'us-west-2',
      baseUrl: 'https://bedrock-runtime.us-west-2.amazonaws.com',
    });
  });

  test('a credential with spaces stops the start, naming its variable', () => {
    expect(() => loadConfig({ TOLLGATE_CATALOG: file, AZ_KEY: 'a b' })).toThrow('AZ_KEY must not contain spaces');
    expect(() => loadConfig({ TOLLGATE_ROUTING_MAX_ATTEMPTS: '0' })).toThrow(
      'TOLLGATE_ROUTING_MAX_ATTEMPTS must be an integer from 1 to 10',
    );
  });
});

describe('which failures move a request to another deployment', () => {
  test.each([
    [new ProviderError('x', 'v', 503), true],
    [new ProviderError('x', 'v', 529), true],
    [new ProviderError('x', 'v', 429), true],
    [new ProviderError('x', 'v', 401), true],
    [new ProviderError('x', 'v', 404), true],
    [new ProviderError('x', 'v', null, undefined, 'connect'), true],
    [new ProviderError('x', 'v', null, undefined, 'timeout'), true],
    [new ProviderError('x', 'v', 400), false],
    [new ProviderError('x', 'v', 413), false],
    [new ProviderError('x', 'v', 422), false],
    [new ProviderError('x', 'v', null, 'client_cancelled'), false],
    [new Error('a defect'), false],
  ])('%s: %s', (error, moves) => {
    expect(isDeploymentFailure(error)).toBe(moves);
  });
});

describe('circuit breaker', () => {
  let now = 1_000_000;
  const clock = () => now;
  const fail = (status = 503, retryAfterMs: number | null = null) =>
    new ProviderError('down', 'v', status, undefined, undefined, retryAfterMs);

  test('cools after failures in a row, lets one probe through after the cooldown, doubles it when the probe fails, closes when one succeeds', () => {
    const health = new DeploymentHealth({ failureThreshold: 3, cooldownMs: 1_000, maxCooldownMs: 10_000, maxRetryAfterMs: 60_000 }, clock);
    health.failed('m/a', fail());
    health.failed('m/a', fail());
    expect(health.admit('m/a')).toBe('closed');
    health.failed('m/a', fail());
    expect(health.admit('m/a')).toBeNull();
    expect(health.view('m/a')).toMatchObject({ state: 'cooled', consecutiveFailures: 3, cooledUntil: now + 1_000 });
    now += 1_000;
    expect(health.admit('m/a')).toBe('probe');
    expect(health.admit('m/a')).toBeNull(); // one probe at a time
    health.failed('m/a', fail());
    expect(health.view('m/a').cooledUntil).toBe(now + 2_000);
    now += 2_000;
    expect(health.admit('m/a')).toBe('probe');
    health.succeeded('m/a');
    expect(health.view('m/a')).toEqual({ state: 'closed', consecutiveFailures: 0, cooledUntil: null, lastError: null });
    expect(health.admit('m/a')).toBe('closed');
  });

  test('a 429 cools at once for its Retry-After; a success in between resets the count', () => {
    const health = new DeploymentHealth(undefined, clock);
    health.failed('m/b', fail(429, 7_000));
    expect(health.view('m/b').cooledUntil).toBe(now + 7_000);
    health.failed('m/c', fail());
    health.failed('m/c', fail());
    health.succeeded('m/c');
    health.failed('m/c', fail());
    expect(health.admit('m/c')).toBe('closed');
  });

  test('an abandoned probe frees the slot', () => {
    const health = new DeploymentHealth({ failureThreshold: 1, cooldownMs: 10, maxCooldownMs: 10, maxRetryAfterMs: 10 }, clock);
    health.failed('m/d', fail());
    now += 10;
    expect(health.admit('m/d')).toBe('probe');
    health.abandoned('m/d');
    expect(health.admit('m/d')).toBe('probe');
  });

  test("a shared store: cooling is published, another instance's cooling applies here, its recovery too", () => {
    const published: [string, number][] = [];
    let deliver: (cooled: ReadonlyMap<string, number>) => void = () => undefined;
    const shared: SharedHealth = {
      publish: (key, until) => published.push([key, until]),
      start: (onSnapshot) => (deliver = onSnapshot),
      close: async () => undefined,
    };
    const health = new DeploymentHealth({ failureThreshold: 1, cooldownMs: 500, maxCooldownMs: 500, maxRetryAfterMs: 500 }, clock, shared);
    health.failed('m/e', fail());
    expect(published).toEqual([['m/e', now + 500]]);
    deliver(new Map([['m/f', now + 5_000]]));
    expect(health.admit('m/f')).toBeNull();
    expect(health.view('m/f').state).toBe('cooled');
    now += 5_000;
    deliver(new Map([['m/f', now - 1]]));
    expect(health.view('m/f').state).toBe('half-open');
    deliver(new Map());
    expect(health.admit('m/f')).toBe('closed');
    // Listed past its cooldown before this instance knew it: half-open, a probe goes first.
    deliver(new Map([['m/g', now - 1]]));
    expect(health.admit('m/g')).toBe('probe');
  });
});

describe('conversation keys', () => {
  const model = builtinCatalog().text[0]!;
  const req = (messages: { role: 'system' | 'user' | 'assistant'; content: string }[]) =>
    ({
      model,
      messages: messages.map((m) => (m.role === 'assistant' ? { ...m, toolCalls: [], reasoning: [] } : m)),
      tools: [],
      maxOutputTokens: 10,
      reasoning: { mode: 'default' },
    }) as never;

  test('the leading messages name a conversation as it grows; a session header names it alone; one message names none', () => {
    const start = [
      { role: 'system' as const, content: 'Tutor.' },
      { role: 'user' as const, content: 'Fractions?' },
    ];
    const key = conversationKey(req(start), null);
    expect(key).toMatch(/^h:/);
    expect(conversationKey(req([...start, { role: 'assistant', content: 'Sure.' }, { role: 'user', content: 'More.' }]), null)).toBe(key);
    expect(
      conversationKey(
        req([
          { role: 'system', content: 'Tutor.' },
          { role: 'user', content: 'Decimals?' },
        ]),
        null,
      ),
    ).not.toBe(key);
    expect(conversationKey(req([{ role: 'user', content: 'Hi' }]), null)).toBeNull();
    expect(conversationKey(req([{ role: 'user', content: 'Hi' }]), 'sess-1')).toBe(`s:${model.id}:sess-1`);
  });
});
