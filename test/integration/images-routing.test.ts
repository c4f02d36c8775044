import { toFile } from 'openai';
import { startFakeAzureOpenAIImages } from '../fakes/azure-openai';
import { startFakeOpenAIImages, type ImageFake } from '../fakes/openai-images';
import { accountLedger, decodeImages, pngOf } from '../support/images';
import { startRoutingHarness, type RoutingHarness } from '../support/routing';
import { ADMIN_TOKEN, graphql } from '../support/tollgate';
import { eventually, requestId, textAccount, withId } from '../support/text';

/**
 * An image model served through routing, over real HTTP with the official `openai` SDK: two
 * Azure OpenAI resources (fakes) as the model's deployments, east first; money read from
 * PostgreSQL to the micro-dollar.
 */

const PER_IMAGE = 40_000n; // $0.04, the model's price whichever deployment serves
let east: ImageFake;
let west: ImageFake;
/** The fallback model's vendor (OpenAI). */
let openai: ImageFake;
const ROUTED = 'acme/gpt-image-fb-routed';
const FALLBACK = 'acme/gpt-image-fallback';
const FALLBACK_PER_IMAGE = 60_000n; // $0.06: dearer than the asked model, so the price that serves shows
let h: RoutingHarness;

beforeAll(async () => {
  east = await startFakeAzureOpenAIImages({ apiKey: 'east-key', deployments: ['painter-east'] });
  west = await startFakeAzureOpenAIImages({ apiKey: 'west-key', deployments: ['painter-west'] });
  openai = await startFakeOpenAIImages({ apiKey: 'openai-key' });
  const catalog = {
    vendors: {
      azure_east: { protocol: 'azure-openai', base_url: east.url, api_key_env: 'AZURE_EAST_KEY', api_version: '2025-04-01-preview' },
      azure_west: { protocol: 'azure-openai', base_url: west.url, api_key_env: 'AZURE_WEST_KEY' },
      openai_fb: { protocol: 'openai', base_url: openai.url, api_key_env: 'OPENAI_FB_KEY' },
    },
    models: [
      {
        kind: 'image',
        id: 'acme/gpt-image-routed',
        vendor: 'azure_east',
        vendor_model_id: 'gpt-image-1',
        created: 1745366400,
        modes: ['generate'],
        sizes: ['1024x1024', '1536x1024'],
        max_input_images: 0,
        pricing: { per_image: '0.04' },
        deployments: [
          { vendor: 'azure_east', vendor_model_id: 'painter-east', priority: 0 },
          { vendor: 'azure_west', vendor_model_id: 'painter-west', priority: 1 },
        ],
      },
      {
        kind: 'image',
        id: 'acme/gpt-image-edit-routed',
        vendor: 'azure_east',
        vendor_model_id: 'gpt-image-1',
        created: 1745366400,
        modes: ['generate', 'edit'],
        sizes: ['1024x1024'],
        max_input_images: 2,
        pricing: { per_image: '0.04' },
        deployments: [
          { vendor: 'azure_east', vendor_model_id: 'painter-east', priority: 0 },
          { vendor: 'azure_west', vendor_model_id: 'painter-west', priority: 1 },
        ],
      },
      {
        kind: 'image',
        id: ROUTED,
        vendor: 'azure_east',
        vendor_model_id: 'gpt-image-1',
        created: 1745366400,
        modes: ['generate'],
        sizes: ['1024x1024'],
        max_input_images: 0,
        pricing: { per_image: '0.04' },
        fallback: FALLBACK,
        deployments: [
          { vendor: 'azure_east', vendor_model_id: 'painter-east', priority: 0 },
          { vendor: 'azure_west', vendor_model_id: 'painter-west', priority: 1 },
        ],
      },
      {
        kind: 'image',
        id: FALLBACK,
        vendor: 'openai_fb',
        vendor_model_id: 'gpt-image-1',
        created: 1745366400,
        modes: ['generate'],
        sizes: ['1024x1024', '1536x1024'],
        max_input_images: 0,
        pricing: { per_image: '0.06' },
      },
    ],
  };
  h = await startRoutingHarness(catalog, {
    AZURE_EAST_KEY: 'east-key',
    AZURE_WEST_KEY: 'west-key',
    OPENAI_FB_KEY: 'openai-key',
  });
});
afterAll(async () => {
  await h?.stop();
  await east?.close();
  await west?.close();
  await openai?.close();
});

it('moves an image to the second deployment when the first answers 503, and charges one image at the model price', async () => {
  const acct = await textAccount(h.t, { fundsMicro: '10000000' });
  east.script({ status: 503, errorMessage: 'The east resource is overloaded.' });
  const id = requestId();
  const response = await acct.openai.images.generate(
    { model: 'acme/gpt-image-routed', prompt: 'a harbour at dawn', size: '1536x1024' },
    withId(id),
  );
  expect(await decodeImages(response)).toEqual([{ width: 1536, height: 1024, format: 'png' }]);

  // East was asked as Azure is: its deployment's path, the catalog's api-version, the api-key header, no model in the body.
  expect(east.requests).toHaveLength(1);
  const [first] = east.requests;
  expect(first).toMatchObject({ method: 'POST', path: '/openai/deployments/painter-east/images/generations' });
  expect(first!.query).toEqual({ 'api-version': '2025-04-01-preview' });
  expect(first!.headers['api-key']).toBe('east-key');
  expect(first!.headers.authorization).toBeUndefined();
  // (medium quality: the price is medium's; the catalog model is a gpt-image model, whatever the deployment's name.)
  expect(first!.json).toEqual({ prompt: 'a harbour at dawn', n: 1, size: '1536x1024', quality: 'medium' });
  // West served it, on its own deployment and key.
  expect(west.requests).toHaveLength(1);
  expect(west.requests[0]).toMatchObject({ path: '/openai/deployments/painter-west/images/generations' });
  expect(west.requests[0]!.headers['api-key']).toBe('west-key');
  expect(west.requests[0]!.query['api-version']).toEqual(expect.any(String));

  const ledger = await accountLedger(h.db, acct.accountId);
  expect(ledger.charges).toEqual([-PER_IMAGE]);
  expect(ledger.usage).toEqual([['ok', 1, '40000']]);
  expect(ledger.balance).toBe(10_000_000n - PER_IMAGE);
  expect(ledger.reserved).toBe(0n);

  // The access log names the deployment that served and the attempts it took, as for text.
  await eventually(() => h.logLines.some((line) => line.request_id === id));
  expect(h.logLines.find((line) => line.request_id === id)).toMatchObject({
    status: 200,
    model: 'acme/gpt-image-routed',
    deployment: 'azure_west',
    attempts: 2,
  });
  // The routing metrics count the image's attempts and its failover, with the text models' labels.
  const metrics = await (await fetch(`${h.t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const model = 'model="acme/gpt-image-routed"';
  expect(metrics).toContain(`tollgate_routing_attempts_total{${model},deployment="azure_east",outcome="failed"} 1`);
  expect(metrics).toContain(`tollgate_routing_failovers_total{${model},deployment="azure_east"} 1`);
  expect(metrics).toContain(`tollgate_routing_attempts_total{${model},deployment="azure_west",outcome="served"} 1`);
  expect(metrics).toContain(`tollgate_routing_deployment_state{${model},deployment="azure_east"} 0`);
  // The operator's listing has the image model's deployments, with their health.
  const listed = await graphql(
    h.t.url,
    '{ deployments { model kind deployment protocol vendorModelId priority state consecutiveFailures lastError } }',
    {},
    ADMIN_TOKEN,
  );
  expect(listed.errors).toBeUndefined();
  expect(listed.data.deployments.filter((d: { model: string }) => d.model === 'acme/gpt-image-routed')).toEqual([
    {
      model: 'acme/gpt-image-routed',
      kind: 'image',
      deployment: 'azure_east',
      protocol: 'azure-openai',
      vendorModelId: 'painter-east',
      priority: 0,
      state: 'closed',
      consecutiveFailures: 1,
      lastError: expect.stringContaining('overloaded'),
    },
    {
      model: 'acme/gpt-image-routed',
      kind: 'image',
      deployment: 'azure_west',
      protocol: 'azure-openai',
      vendorModelId: 'painter-west',
      priority: 1,
      state: 'closed',
      consecutiveFailures: 0,
      lastError: null,
    },
  ]);
});

it('does not retry a 400 the request itself causes, and charges nothing', async () => {
  const acct = await textAccount(h.t, { fundsMicro: '10000000' });
  const [eastBefore, westBefore] = [east.requests.length, west.requests.length];
  east.script({ status: 400, errorMessage: 'Your request was rejected by the safety system.' });
  await expect(acct.openai.images.generate({ model: 'acme/gpt-image-routed', prompt: 'refused', size: '1024x1024' })).rejects.toMatchObject(
    {
      status: 502,
    },
  );
  expect(east.requests.length - eastBefore).toBe(1);
  expect(west.requests.length - westBefore).toBe(0);
  const ledger = await accountLedger(h.db, acct.accountId);
  expect(ledger.charges).toEqual([]);
  expect(ledger.balance).toBe(10_000_000n);
  expect(ledger.reserved).toBe(0n);
});

it('moves an edit (multipart) to the second deployment when the first answers 503: one charge per delivered image', async () => {
  const acct = await textAccount(h.t, { fundsMicro: '10000000' });
  const [eastBefore, westBefore] = [east.requests.length, west.requests.length];
  east.script({ status: 503, errorMessage: 'The east resource is overloaded.' });
  west.script({});
  const id = requestId();
  const response = await acct.openai.images.edit(
    {
      model: 'acme/gpt-image-edit-routed',
      prompt: 'paint the boat red',
      image: await toFile(await pngOf(300, 200), 'boat.png', { type: 'image/png' }),
      size: '1024x1024',
      n: 2,
    },
    withId(id),
  );
  expect(await decodeImages(response)).toEqual([
    { width: 1024, height: 1024, format: 'png' },
    { width: 1024, height: 1024, format: 'png' },
  ]);

  // Each image was asked of the east first, as Azure takes an edit: the deployment's edits path,
  // the api-version, the api-key header, OpenAI's multipart form without `model`, the upload as `image`.
  const eastCalls = east.requests.slice(eastBefore);
  expect(eastCalls).toHaveLength(2);
  for (const call of eastCalls) {
    expect(call).toMatchObject({ method: 'POST', path: '/openai/deployments/painter-east/images/edits' });
    expect(call.query).toEqual({ 'api-version': '2025-04-01-preview' });
    expect(call.headers['api-key']).toBe('east-key');
    expect(call.fields).toEqual({ prompt: 'paint the boat red', n: '1', size: '1024x1024', quality: 'medium' });
    expect(call.files.map((f) => [f.field, f.mimeType])).toEqual([['image', 'image/png']]);
  }
  // West made both images, on its own deployment and key.
  const westCalls = west.requests.slice(westBefore);
  expect(westCalls).toHaveLength(2);
  for (const call of westCalls) {
    expect(call).toMatchObject({ path: '/openai/deployments/painter-west/images/edits' });
    expect(call.headers['api-key']).toBe('west-key');
    expect(call.fields.model).toBeUndefined();
    expect(call.files).toHaveLength(1);
  }

  const ledger = await accountLedger(h.db, acct.accountId);
  expect(ledger.charges).toEqual([-2n * PER_IMAGE]);
  expect(ledger.usage).toEqual([['ok', 2, '80000']]);
  expect(ledger.balance).toBe(10_000_000n - 2n * PER_IMAGE);
  expect(ledger.reserved).toBe(0n);
  await eventually(() => h.logLines.some((line) => line.request_id === id));
  // Two images, two attempts each.
  expect(h.logLines.find((line) => line.request_id === id)).toMatchObject({ status: 200, deployment: 'azure_west', attempts: 4 });
  east.script({});
});

/** The usage records of an account: [model, status, images, cost]. */
async function usageByModel(accountId: string): Promise<[string, string, number, string][]> {
  const { rows } = await h.db.query<{ model: string; status: string; images: number; cost: string }>(
    'select model, status, images, cost_micro::text as cost from usage_records where account_id = $1 order by created_at',
    [accountId],
  );
  return rows.map((r) => [r.model, r.status, r.images, r.cost]);
}

/** Calls each fake got during `run`. */
async function callsDuring(run: () => Promise<unknown>): Promise<{ east: number; west: number; openai: number }> {
  const before = [east.requests.length, west.requests.length, openai.requests.length];
  await run();
  return { east: east.requests.length - before[0]!, west: west.requests.length - before[1]!, openai: openai.requests.length - before[2]! };
}

// In order: each test leaves the routed model's deployments as the next expects (failed once, then cooled).
describe('fallback model', () => {
  afterAll(() => {
    east.script({});
    west.script({});
    openai.script({});
  });

  test("no room for the fallback's hold: the model's own failure, nothing charged, the fallback not called", async () => {
    const acct = await textAccount(h.t, { fundsMicro: '40000' }); // the asked model's one image, not the fallback's
    east.script({ status: 503 });
    west.script({ status: 503 });
    const calls = await callsDuring(() =>
      expect(acct.openai.images.generate({ model: ROUTED, prompt: 'a lighthouse' })).rejects.toMatchObject({ status: 502 }),
    );
    expect(calls).toEqual({ east: 1, west: 1, openai: 0 });
    const ledger = await accountLedger(h.db, acct.accountId);
    expect([ledger.charges, ledger.balance, ledger.reserved]).toEqual([[], 40_000n, 0n]);
    expect(await usageByModel(acct.accountId)).toEqual([[ROUTED, 'failed', 0, '0']]);
  });

  test('every deployment fails during the request: the fallback serves, charged at its price, answered with x-service-model-routed-from', async () => {
    const acct = await textAccount(h.t, { fundsMicro: '10000000' });
    east.script({ status: 429, retryAfter: '60' });
    west.script({ status: 429, retryAfter: '60' });
    openai.script({});
    const id = requestId();
    let answer: Awaited<ReturnType<typeof fetchImages>> | undefined;
    const fetchImages = () => acct.openai.images.generate({ model: ROUTED, prompt: 'a lighthouse', n: 2 }, withId(id)).withResponse();
    const calls = await callsDuring(async () => (answer = await fetchImages()));
    // Both images were asked of the east at once; the west may have cooled before the second reached it.
    expect(calls).toMatchObject({ east: 2, openai: 2 });
    expect(calls.west).toBeGreaterThanOrEqual(1);
    expect(answer!.response.headers.get('x-service-model-routed-from')).toBe(ROUTED);
    expect(await decodeImages(answer!.data)).toEqual([
      { width: 1024, height: 1024, format: 'png' },
      { width: 1024, height: 1024, format: 'png' },
    ]);
    // One charge, the fallback's price for the two images; the asked model's hold given back, no record of it.
    const ledger = await accountLedger(h.db, acct.accountId);
    expect(ledger.charges).toEqual([-2n * FALLBACK_PER_IMAGE]);
    expect([ledger.balance, ledger.reserved]).toEqual([10_000_000n - 2n * FALLBACK_PER_IMAGE, 0n]);
    expect(await usageByModel(acct.accountId)).toEqual([[FALLBACK, 'ok', 2, '120000']]);
    await eventually(() => h.logLines.some((line) => line.request_id === id));
    expect(h.logLines.find((line) => line.request_id === id)).toMatchObject({ status: 200, model: FALLBACK });
  });

  test('every deployment cooled: the fallback serves at once, one hold at its price, no deployment called', async () => {
    const acct = await textAccount(h.t, { fundsMicro: '10000000' });
    east.script({});
    west.script({});
    let answer: { response: Response } | undefined;
    const calls = await callsDuring(
      async () => (answer = await acct.openai.images.generate({ model: ROUTED, prompt: 'a pier' }).withResponse()),
    );
    expect(calls).toEqual({ east: 0, west: 0, openai: 1 });
    expect(answer!.response.headers.get('x-service-model-routed-from')).toBe(ROUTED);
    const ledger = await accountLedger(h.db, acct.accountId);
    expect([ledger.holds, ledger.charges, ledger.reserved]).toEqual([1, [-FALLBACK_PER_IMAGE], 0n]);
    expect(await usageByModel(acct.accountId)).toEqual([[FALLBACK, 'ok', 1, '60000']]);
  });

  test('the fallback failing too: its error, nothing charged', async () => {
    const acct = await textAccount(h.t, { fundsMicro: '10000000' });
    openai.script({ status: 500, errorMessage: 'the fallback broke too' });
    await expect(acct.openai.images.generate({ model: ROUTED, prompt: 'a pier' })).rejects.toMatchObject({ status: 502 });
    const ledger = await accountLedger(h.db, acct.accountId);
    expect([ledger.charges, ledger.balance, ledger.reserved]).toEqual([[], 10_000_000n, 0n]);
    expect(await usageByModel(acct.accountId)).toEqual([[FALLBACK, 'failed', 0, '0']]);
  });
});
