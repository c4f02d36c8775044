import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/config/env';
import { configuredVendorEndpoints } from '../../src/config/vendors';
import { DEFAULT_TIERS } from '../../src/domain/limits/tiers';

test('defaults serve the embedded setup', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    port: 8080,
    databaseUrl: null,
    redisUrl: null,
    adminToken: null,
    catalogFile: null,
    logLevel: 'info',
    redisKeyPrefix: 'tollgate:',
  });
  expect(config.dataDir).toMatch(/\.tollgate$/);
  expect(config.vendorTimeouts).toEqual({ connectMs: 10_000, headersMs: 120_000, bodyIdleMs: 120_000 });
});

test.each([
  ['PORT', 'eighty'],
  ['PORT', '70000'],
  ['DATABASE_URL', 'mysql://localhost/db'],
  ['REDIS_URL', 'localhost:6379'],
  ['TOLLGATE_ADMIN_TOKEN', 'short'],
  ['LOG_LEVEL', 'loud'],
  ['TOLLGATE_MAX_BODY_BYTES', '12'],
  ['TOLLGATE_SESSION_TTL_SECONDS', '1.5'],
  ['TOLLGATE_VENDOR_CONNECT_TIMEOUT_MS', '0'],
  ['TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS', 'soon'],
  ['TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS', '-1'],
  ['TOLLGATE_SETTLEMENT', 'eventually'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
  ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'grpc://collector:4317'],
])('%s=%s stops the start with a message naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});

test('set values are taken', () => {
  const config = loadConfig({
    PORT: '9090',
    DATABASE_URL: 'postgres://u@h:5432/d',
    REDIS_URL: 'redis://127.0.0.1:6379',
    TOLLGATE_ADMIN_TOKEN: 'x'.repeat(16),
    LOG_LEVEL: 'warn',
    TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS: '500',
  });
  expect(config).toMatchObject({ port: 9090, databaseUrl: 'postgres://u@h:5432/d', redisUrl: 'redis://127.0.0.1:6379', logLevel: 'warn' });
  expect(config.vendorTimeouts.headersMs).toBe(500);
});

describe('vendor settings', () => {
  test('are parsed once for every vendor of the catalog; the domain gets them, not the environment', () => {
    const config = loadConfig({ OPENAI_API_KEY: ' sk-1 ', OPENAI_BASE_URL: 'http://127.0.0.1:9000/v1/', ANTHROPIC_API_KEY: 'ak' });
    expect(config.vendors.get('openai')).toEqual({ apiKey: 'sk-1', baseUrl: 'http://127.0.0.1:9000/v1' });
    expect(config.vendors.get('anthropic')).toEqual({ apiKey: 'ak', baseUrl: null });
    expect(config.vendors.get('gemini')).toEqual({ apiKey: null, baseUrl: null });
    expect(config.vendors.has('sandbox')).toBe(false);
    expect(config).not.toHaveProperty('env');
  });

  test('configured endpoints follow the settings and each vendor SDK default', () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'sk-1',
      ANTHROPIC_API_KEY: 'ak',
      ANTHROPIC_BASE_URL: 'https://proxy.example.com/anthropic',
    });
    const endpoints = configuredVendorEndpoints(config.catalog, config.vendors);
    expect(endpoints.get('openai')).toMatchObject({ apiKey: 'sk-1', baseUrl: 'https://api.openai.com/v1' });
    expect(endpoints.get('anthropic')).toMatchObject({ apiKey: 'ak', baseUrl: 'https://proxy.example.com/anthropic' });
    expect(endpoints.has('gemini')).toBe(false); // no key: not configured
    expect(endpoints.has('sandbox')).toBe(true);
  });

  test.each([
    ['OPENAI_BASE_URL', 'api.openai.com/v1'],
    ['OPENAI_BASE_URL', 'ftp://api.openai.com/v1'],
    ['ANTHROPIC_BASE_URL', 'https://api.anthropic.com?x=1'],
    ['GEMINI_BASE_URL', 'https://user:pw@example.com'],
    ['GEMINI_BASE_URL', 'http://'],
    ['OPENAI_API_KEY', 'sk one'],
  ])('%s=%s stops the start naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  test('an OpenAI-compatible vendor named in a catalog file gets its own variables', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'));
    try {
      const file = join(dir, 'catalog.json');
      const model = {
        kind: 'text',
        id: 'local/llama',
        vendor: 'local_llm',
        protocol: 'openai-compatible',
        created: 1,
        context_length: 8192,
        max_output_tokens: 1024,
        pricing: { input: '0.1', output: '0.2' },
      };
      writeFileSync(file, JSON.stringify({ models: [model] }));
      expect(loadConfig({ TOLLGATE_CATALOG: file, LOCAL_LLM_BASE_URL: 'http://127.0.0.1:11434/v1' }).vendors.get('local_llm')).toEqual({
        apiKey: null,
        baseUrl: 'http://127.0.0.1:11434/v1',
      });
      expect(() => loadConfig({ TOLLGATE_CATALOG: file, LOCAL_LLM_BASE_URL: 'localhost:11434' })).toThrow('LOCAL_LLM_BASE_URL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('limits file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-limits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: unknown): string => {
    const file = join(dir, name);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };
  const tier = (n: number, from: string) => ({
    tier: n,
    lifetime_top_ups_from_micro: from,
    requests_per_second: n,
    requests_per_minute: 60 * n,
    tokens_per_minute: 1000 * n,
    concurrent_requests: n,
  });
  const plan = { name: 'team', models: ['sandbox/echo'], monthly_allowance_micro: '7000000', requests_per_minute: 9 };

  test('without one, the built-in tiers and plans apply', () => {
    const config = loadConfig({});
    expect(config.limitsFile).toBeNull();
    expect(config.limits.tiers).toEqual(DEFAULT_TIERS);
    expect(config.limits.plans.map((p) => p.name)).toEqual(['starter', 'pro']);
  });

  test('replaces the tiers and plans it names; a section left out keeps the defaults', () => {
    const both = loadConfig({ TOLLGATE_LIMITS_FILE: write('both.json', { tiers: [tier(1, '0'), tier(2, '1000000')], plans: [plan] }) });
    expect(both.limits.tiers).toEqual([
      { tier: 1, fromMicro: 0n, requestsPerSecond: 1, requestsPerMinute: 60, tokensPerMinute: 1000, concurrentRequests: 1 },
      { tier: 2, fromMicro: 1_000_000n, requestsPerSecond: 2, requestsPerMinute: 120, tokensPerMinute: 2000, concurrentRequests: 2 },
    ]);
    expect(both.limits.plans).toEqual([
      { name: 'team', models: ['sandbox/echo'], monthlyAllowanceMicro: 7_000_000n, requestsPerMinute: 9 },
    ]);
    const plansOnly = loadConfig({ TOLLGATE_LIMITS_FILE: write('plans.json', { plans: [plan] }) });
    expect(plansOnly.limits.tiers).toEqual(DEFAULT_TIERS);
  });

  test.each([
    ['missing.json', null, 'cannot be read: ENOENT'],
    ['broken.json', '{"tiers": [', 'not valid JSON'],
    ['array.json', [], 'the file must be a JSON object'],
    ['typo.json', { tier: [] }, 'tier is not a known field'],
    ['empty-tiers.json', { tiers: [] }, 'tiers must not be empty'],
    ['first-tier.json', { tiers: [tier(1, '5')] }, 'tiers[0].lifetime_top_ups_from_micro must be "0"'],
    ['order.json', { tiers: [tier(2, '0'), tier(1, '10')] }, 'tiers[1].tier must be greater than the previous tier'],
    ['thresholds.json', { tiers: [tier(1, '0'), tier(2, '0')] }, 'tiers[1].lifetime_top_ups_from_micro must be greater'],
    ['rps.json', { tiers: [{ ...tier(1, '0'), requests_per_second: 0 }] }, 'tiers[0].requests_per_second must be a positive integer'],
    [
      'money.json',
      { plans: [{ ...plan, monthly_allowance_micro: 7 }] },
      'plans[0].monthly_allowance_micro must be a decimal string of micro-dollars',
    ],
    ['plan-name.json', { plans: [{ ...plan, name: 'Team A' }] }, 'plans[0].name must be a lowercase name'],
    ['dupe.json', { plans: [plan, plan] }, "plans[1].name repeats the plan 'team'"],
    ['no-models.json', { plans: [{ ...plan, models: [] }] }, 'plans[0].models must not be empty'],
    [
      'unknown-model.json',
      { plans: [{ ...plan, models: ['sandbox/echo', 'openai/gpt-9'] }] },
      "plans[0].models[1] 'openai/gpt-9' is not a model of the catalog",
    ],
  ])('%s stops the start naming the variable and the field', (name, content, message) => {
    const file = content === null ? join(dir, name) : write(name, content);
    let error: unknown;
    try {
      loadConfig({ TOLLGATE_LIMITS_FILE: file });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`TOLLGATE_LIMITS_FILE ${file}`);
    expect((error as Error).message).toContain(message);
  });
});

test('traces: off by default, on with an OTLP endpoint (the traces URL as the standard variables say)', () => {
  expect(loadConfig({}).otlpTracesUrl).toBeNull();
  expect(loadConfig({}).otelServiceName).toBe('tollgate');
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otlpTracesUrl).toBe('http://collector:4318/v1/traces');
  expect(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/custom/traces' })
      .otlpTracesUrl,
  ).toBe('https://b/custom/traces');
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }).otlpTracesUrl).toBeNull();
  expect(loadConfig({ OTEL_SERVICE_NAME: 'gateway-eu' }).otelServiceName).toBe('gateway-eu');
});

test('CORS: any origin on the API-key endpoints and none on the session planes by default; lists normalised; bad origins stop the start naming the variable', () => {
  expect(loadConfig({}).cors).toEqual({ apiOrigins: '*', sessionOrigins: [] });
  expect(
    loadConfig({ TOLLGATE_CORS_ORIGINS: 'https://Chat.Example.com/, http://localhost:5173', TOLLGATE_CORS_SESSION_ORIGINS: '*' }).cors,
  ).toEqual({
    apiOrigins: ['https://chat.example.com', 'http://localhost:5173'],
    sessionOrigins: '*',
  });
  expect(loadConfig({ TOLLGATE_CORS_ORIGINS: 'none' }).cors.apiOrigins).toEqual([]);
  for (const [name, value] of [
    ['TOLLGATE_CORS_ORIGINS', 'https://chat.example.com/app'],
    ['TOLLGATE_CORS_ORIGINS', 'chat.example.com'],
    ['TOLLGATE_CORS_SESSION_ORIGINS', 'ftp://files.example.com'],
  ]) {
    expect(() => loadConfig({ [name]: value })).toThrow(
      new ConfigError(`${name} must be '*', 'none' or comma-separated origins such as https://chat.example.com (no path), got '${value}'`),
    );
  }
});
