import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/config/env';
import { configuredVendorEndpoints } from '../../src/config/vendors';
import { loadCatalog } from '../../src/domain/catalog/catalog';
import { ProviderError } from '../../src/domain/generation/errors';
import { isDeploymentFailure } from '../../src/domain/routing/failover';
import { VendorTransport } from '../../src/providers/transport/client';
import { ServiceAccountTokens } from '../../src/providers/transport/google-token';
import { startFakeVertex, testServiceAccount, type FakeVertex } from '../fakes/vertex';

/**
 * A Vertex AI vendor's setup: the catalog's checks, the service account key read at start (its
 * JSON or a path), and the access tokens it mints (over real HTTP against the fake's token
 * endpoint, with an injected clock for expiry).
 */

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-vertex-setup-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const claude = (vendor: string, vendorModelId: string) => ({
  kind: 'text',
  id: 'anthropic/claude-haiku-4-5',
  vendor,
  vendor_model_id: vendorModelId,
  created: 1,
  context_length: 200000,
  max_output_tokens: 8192,
  pricing: { input: '1.00', output: '5.00' },
});

function catalogFile(source: unknown): string {
  const file = join(dir, `catalog-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(source));
  return file;
}

describe('catalog', () => {
  test('a vertex vendor needs its region', () => {
    const file = catalogFile({
      vendors: { vertex_us: { protocol: 'vertex' } },
      models: [claude('vertex_us', 'claude-haiku-4-5@20251001')],
    });
    expect(() => loadCatalog(file)).toThrow(/vendors\.vertex_us\.region.*required for a vertex vendor/);
  });

  test('a model on a vertex vendor must be Claude, Gemini or an open model ("publisher/model"), as its id says', () => {
    const vendors = { vertex_us: { protocol: 'vertex', region: 'us-east5' } };
    const file = catalogFile({ vendors, models: [claude('vertex_us', 'llama-4-maverick')] });
    expect(() => loadCatalog(file)).toThrow(/vendor_model_id.*Claude \("claude-…"\) or Gemini/);
    const open = catalogFile({ vendors, models: [claude('vertex_us', 'meta/llama-4-maverick-17b-128e-instruct-maas')] });
    expect(loadCatalog(open).byId.get('anthropic/claude-haiku-4-5')).toMatchObject({
      vendorModelId: 'meta/llama-4-maverick-17b-128e-instruct-maas',
    });
  });

  test('a vertex vendor serves text models only', () => {
    const file = catalogFile({
      vendors: { vertex_us: { protocol: 'vertex', region: 'us-east5' } },
      models: [
        {
          kind: 'image',
          id: 'google/imagen-4',
          vendor: 'vertex_us',
          created: 1,
          modes: ['generate'],
          sizes: ['1024x1024'],
          max_input_images: 0,
          pricing: null,
        },
      ],
    });
    expect(() => loadCatalog(file)).toThrow(/vertex vendor, which serves text models only/);
  });

  test("Claude on Vertex is priced by Anthropic's cache-write rule, Gemini by input", () => {
    const file = catalogFile({
      vendors: { vertex_us: { protocol: 'vertex', region: 'global', project: 'my-project-1' } },
      models: [
        claude('vertex_us', 'claude-haiku-4-5@20251001'),
        { ...claude('vertex_us', 'gemini-2.5-flash'), id: 'google/gemini-2.5-flash' },
      ],
    });
    const catalog = loadCatalog(file);
    const [haiku, gemini] = catalog.text;
    expect(haiku!.pricing!.cacheWrite5mPerMTokMicro).toBe(1_250_000n);
    expect(gemini!.pricing!.cacheWrite5mPerMTokMicro).toBe(1_000_000n);
    expect(catalog.vendorDefaults.get('vertex_us')).toMatchObject({ region: 'global', project: 'my-project-1' });
  });
});

describe('service account key at start', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = (fields: Record<string, unknown> = {}) =>
    JSON.stringify({
      type: 'service_account',
      project_id: 'key-project',
      client_email: 'sa@key-project.iam.gserviceaccount.com',
      private_key: pem,
      ...fields,
    });
  const config = (region: string, credentials: string, project?: string) =>
    loadConfig({
      TOLLGATE_CATALOG: catalogFile({
        vendors: { vertex_eu: { protocol: 'vertex', region, ...(project ? { project } : {}) } },
        models: [claude('vertex_eu', 'claude-haiku-4-5@20251001')],
      }),
      VERTEX_EU_CREDENTIALS: credentials,
    });

  test('the variable holds the key file’s path, or its JSON; the endpoint is the region’s', () => {
    const file = join(dir, 'key.json');
    writeFileSync(file, key());
    for (const credentials of [file, key()]) {
      const loaded = config('europe-west1', credentials);
      const endpoint = configuredVendorEndpoints(loaded.catalog, loaded.vendors).get('vertex_eu');
      expect(endpoint).toMatchObject({
        protocol: 'vertex',
        baseUrl: 'https://europe-west1-aiplatform.googleapis.com',
        region: 'europe-west1',
        project: 'key-project',
        serviceAccount: { clientEmail: 'sa@key-project.iam.gserviceaccount.com', tokenUri: 'https://oauth2.googleapis.com/token' },
      });
    }
    const global = config('global', key(), 'catalog-project');
    expect(configuredVendorEndpoints(global.catalog, global.vendors).get('vertex_eu')).toMatchObject({
      baseUrl: 'https://aiplatform.googleapis.com',
      project: 'catalog-project',
    });
  });

  test('without the variable the vendor is not configured', () => {
    const loaded = loadConfig({
      TOLLGATE_CATALOG: catalogFile({
        vendors: { vertex_eu: { protocol: 'vertex', region: 'us-east5' } },
        models: [claude('vertex_eu', 'claude-haiku-4-5@20251001')],
      }),
    });
    expect(configuredVendorEndpoints(loaded.catalog, loaded.vendors).has('vertex_eu')).toBe(false);
  });

  test.each([
    ['a missing file', join(tmpdir(), 'no-such-dir-tollgate', 'key.json'), /cannot read/],
    ['not JSON', '{not json', /not JSON/],
    ['another kind of key', key({ type: 'authorized_user' }), /"type": "service_account"/],
    ['no private key', key({ private_key: undefined }), /client_email and private_key/],
    [
      'a private key that is not one',
      key({ private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }),
      /not an RSA private key/,
    ],
    ['no project anywhere', key({ project_id: undefined }), /no project_id.*vendors\.vertex_eu\.project/],
  ])('%s stops the start naming the variable, never quoting the key', (_, credentials, message) => {
    let error: unknown;
    try {
      config('us-east5', credentials);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^VERTEX_EU_CREDENTIALS/);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('PRIVATE KEY');
  });
});

describe('access tokens', () => {
  let vertex: FakeVertex;
  let http: VendorTransport;
  beforeAll(async () => {
    vertex = await startFakeVertex((uri) => testServiceAccount(uri));
    http = new VendorTransport();
  });
  afterAll(async () => {
    await http.close();
    await vertex.close();
  });
  beforeEach(() => {
    vertex.tokenRequests.length = 0;
  });

  const keyOf = (json: string) => {
    const parsed = JSON.parse(json) as { client_email: string; private_key: string; token_uri: string };
    return { clientEmail: parsed.client_email, privateKey: parsed.private_key, tokenUri: parsed.token_uri, projectId: null };
  };

  test('a token is kept until 5 minutes before it expires, then replaced', async () => {
    // Starts 56 minutes back, so that every assertion's iat is in the past for the fake's own clock.
    let now = Date.now() - 56 * 60_000;
    const tokens = new ServiceAccountTokens('vertex_us', keyOf(vertex.account.json), http, () => now);
    const first = await tokens.get();
    now += 54 * 60_000;
    expect(await tokens.get()).toBe(first);
    now += 2 * 60_000; // 56 minutes: within 5 minutes of the hour
    const second = await tokens.get();
    expect(second).not.toBe(first);
    expect(vertex.tokenRequests.map((r) => r.status)).toEqual([200, 200]);
  });

  test('callers waiting together share one token request', async () => {
    const tokens = new ServiceAccountTokens('vertex_us', keyOf(vertex.account.json), http);
    const got = await Promise.all(Array.from({ length: 10 }, () => tokens.get()));
    expect(new Set(got).size).toBe(1);
    expect(vertex.tokenRequests).toHaveLength(1);
  });

  test("a key the token endpoint refuses is the deployment's failure (401), its message without the assertion", async () => {
    const stranger = testServiceAccount(vertex.tokenUri); // signed with another private key
    const tokens = new ServiceAccountTokens('vertex_us', keyOf(stranger.json), http);
    const error = await tokens.get().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ vendorStatus: 401, message: expect.stringMatching(/access token.*invalid_grant/) });
    expect(isDeploymentFailure(error)).toBe(true);
    expect((error as Error).message).not.toContain(vertex.tokenRequests[0]!.form.assertion!);
    // Not kept: the next call asks again.
    await tokens.get().catch(() => undefined);
    expect(vertex.tokenRequests).toHaveLength(2);
  });
});
