import OpenAI, { toFile } from 'openai';
import { call, createKey, graphql, provisionAccount } from '../support/tollgate';
import { openaiClient, startTextHarness, textAccount, type TextAccount, type TextHarness } from '../support/text';
import { accountLedger, decodeImages, pngOf } from '../support/images';
import { startFakeOpenAIImages, type ImageFake } from '../fakes/openai-images';

/**
 * The image endpoints through the official `openai` SDK: the sandbox vendor and OpenAI's
 * Images API (a local fake) behind Tollgate; images decoded and measured; money read from
 * PostgreSQL to the micro-dollar.
 */

const GPT_IMAGE = 42_000n; // openai/gpt-image-1, $0.042 per image
const SANDBOX_IMAGE = 1_000n; // sandbox/image, $0.001 per image

let h: TextHarness;
let fake: ImageFake;
let a: TextAccount;

beforeAll(async () => {
  fake = await startFakeOpenAIImages();
  h = await startTextHarness({ OPENAI_API_KEY: fake.apiKey, OPENAI_BASE_URL: fake.url });
  a = await textAccount(h.t, { fundsMicro: '100000000' });
});
afterAll(async () => {
  await h?.stop();
  await fake?.close();
});
beforeEach(() => fake.script());

/** A fresh funded prepaid account (money assertions per test start from zero activity). */
const freshAccount = (fundsMicro = '10000000') => textAccount(h.t, { fundsMicro });

describe('POST /v1/images/generations', () => {
  it('generates one sandbox image of exactly the size asked and charges one image', async () => {
    const acct = await freshAccount();
    const response = await acct.openai.images.generate({ model: 'sandbox/image', prompt: 'a lighthouse at dusk', size: '1536x1024' });
    expect(response.data).toHaveLength(1);
    expect(await decodeImages(response)).toEqual([{ width: 1536, height: 1024, format: 'png' }]);
    expect(response).toMatchObject({ size: '1536x1024', quality: 'auto', output_format: 'png' });
    expect(typeof response.created).toBe('number');
    const ledger = await accountLedger(h.db, acct.accountId);
    expect(ledger.charges).toEqual([-SANDBOX_IMAGE]);
    expect(ledger.usage).toEqual([['ok', 1, '1000']]);
    expect(ledger.balance).toBe(10_000_000n - SANDBOX_IMAGE);
    expect(ledger.reserved).toBe(0n);
  });

  it('is deterministic: the same prompt gives the same image', async () => {
    const one = await a.openai.images.generate({ model: 'sandbox/image', prompt: 'same prompt', size: '512x512' });
    const two = await a.openai.images.generate({ model: 'sandbox/image', prompt: 'same prompt', size: '512x512' });
    expect(one.data![0]!.b64_json).toBe(two.data![0]!.b64_json);
  });

  it('makes n = 3 images with three parallel vendor calls (one image each) and charges three', async () => {
    const acct = await freshAccount();
    const before = fake.requests.length;
    fake.script({ delayMs: 300 });
    const response = await acct.openai.images.generate({ model: 'openai/gpt-image-1', prompt: 'three cats', n: 3, size: '1024x1536' });
    expect(await decodeImages(response)).toEqual(Array(3).fill({ width: 1024, height: 1536, format: 'png' }));
    const calls = fake.requests.slice(before);
    expect(calls).toHaveLength(3);
    for (const c of calls)
      expect(c.json).toEqual({ model: 'gpt-image-1', prompt: 'three cats', n: 1, size: '1024x1536', quality: 'medium' });
    // In parallel: all three calls had arrived before the first was answered.
    expect(Math.max(...calls.map((c) => c.receivedAt))).toBeLessThan(Math.min(...calls.map((c) => c.answeredAt!)));
    expect(response.usage).toEqual({
      input_tokens: 150,
      output_tokens: 816,
      total_tokens: 966,
      cost: 0.126,
      cost_micro: '126000',
      cost_details: { images: 0.126 },
    });
    const ledger = await accountLedger(h.db, acct.accountId);
    expect(ledger.charges).toEqual([-3n * GPT_IMAGE]);
    expect(ledger.usage).toEqual([['ok', 3, '126000']]);
  });

  it('fits a vendor image of another size to exactly the size asked, keeping its format', async () => {
    fake.script({ width: 1000, height: 700, format: 'jpeg' });
    const response = await a.openai.images.generate({ model: 'openai/gpt-image-1', prompt: 'wrong size', size: '1024x1536' });
    expect(await decodeImages(response)).toEqual([{ width: 1024, height: 1536, format: 'jpeg' }]);
    expect(response.output_format).toBe('jpeg');
  });

  it('one of three vendor calls failing: two images returned, two charged', async () => {
    const acct = await freshAccount();
    fake.script({}, { status: 500, errorMessage: 'boom' }, {});
    const response = await acct.openai.images.generate({ model: 'openai/gpt-image-1', prompt: 'partial', n: 3 });
    expect(response.data).toHaveLength(2);
    const ledger = await accountLedger(h.db, acct.accountId);
    expect(ledger.charges).toEqual([-2n * GPT_IMAGE]);
    expect(ledger.usage).toEqual([['partial', 2, '84000']]);
    expect(ledger.balance).toBe(10_000_000n - 2n * GPT_IMAGE);
    expect(ledger.reserved).toBe(0n);
  });

  it('the sandbox fails one image of n on [sandbox:fail-one]', async () => {
    const acct = await freshAccount();
    const response = await acct.openai.images.generate({ model: 'sandbox/image', prompt: 'two of three [sandbox:fail-one]', n: 3 });
    expect(response.data).toHaveLength(2);
    expect((await accountLedger(h.db, acct.accountId)).charges).toEqual([-2n * SANDBOX_IMAGE]);
  });

  it('all vendor calls failing: 502 with the vendor failure, nothing charged', async () => {
    const acct = await freshAccount();
    fake.script({ status: 500, errorMessage: 'image backend down' });
    const error = await acct.openai.images.generate({ model: 'openai/gpt-image-1', prompt: 'doomed', n: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: 'provider_error',
      message: expect.stringContaining('image backend down'),
    });
    const ledger = await accountLedger(h.db, acct.accountId);
    expect(ledger.charges).toEqual([]);
    expect(ledger.usage).toEqual([['failed', 0, '0']]);
    expect(ledger.balance).toBe(10_000_000n);
    expect(ledger.reserved).toBe(0n);

    const sandbox = await acct.openai.images.generate({ model: 'sandbox/image', prompt: '[sandbox:fail]', n: 2 }).catch((e: unknown) => e);
    expect((sandbox as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((await accountLedger(h.db, acct.accountId)).charges).toEqual([]);
  });

  it('resolves vendor ids like every model id and says so in x-service-model-routed-from', async () => {
    const raw = await call(`${h.t.url}/v1/images/generations`, { token: a.secret, body: { model: 'gpt-image-1', prompt: 'routed' } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('x-service-model-routed-from')).toBe('gpt-image-1');
    expect(raw.headers.get('x-ratelimit-limit-requests')).not.toBeNull();
    const direct = await call(`${h.t.url}/v1/images/generations`, { token: a.secret, body: { model: 'sandbox/image', prompt: 'direct' } });
    expect(direct.headers.get('x-service-model-routed-from')).toBeNull();
    const unknown = await call(`${h.t.url}/v1/images/generations`, {
      token: a.secret,
      body: { model: 'openai/gpt-4o-mini', prompt: 'a text model' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('model_not_available');
  });

  it('serves a fixed-option model at its one size and quality', async () => {
    const response = await a.openai.images.generate({ model: 'sandbox/image-fixed', prompt: 'fixed', quality: 'low' });
    expect(await decodeImages(response)).toEqual([{ width: 1024, height: 1024, format: 'png' }]);
    expect(response.quality).toBe('low');
  });
});

describe('POST /v1/images/edits', () => {
  it('edits one image sent with toFile (the SDK sends it as `image`)', async () => {
    const acct = await freshAccount();
    const response = await acct.openai.images.edit({
      model: 'sandbox/image',
      prompt: 'make it warmer',
      image: await toFile(await pngOf(300, 200), 'in.png', { type: 'image/png' }),
      size: '512x512',
    });
    expect(await decodeImages(response)).toEqual([{ width: 512, height: 512, format: 'png' }]);
    expect((await accountLedger(h.db, acct.accountId)).charges).toEqual([-SANDBOX_IMAGE]);
  });

  it('edits several images (`image[]`) upstream with OpenAI, n = 2, the files passed on unchanged', async () => {
    const acct = await freshAccount();
    const inputs = [await pngOf(64, 64, '#ff0000'), await pngOf(80, 60, '#00ff00'), await pngOf(50, 90, '#0000ff')];
    const before = fake.requests.length;
    const response = await acct.openai.images.edit({
      model: 'openai/gpt-image-1',
      prompt: 'combine them',
      image: await Promise.all(inputs.map((bytes, i) => toFile(bytes, `in-${i}.png`, { type: 'image/png' }))),
      n: 2,
      size: '1536x1024',
      input_fidelity: 'high',
    });
    expect(await decodeImages(response)).toEqual(Array(2).fill({ width: 1536, height: 1024, format: 'png' }));
    const calls = fake.requests.slice(before);
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(c.path).toBe('/v1/images/edits');
      expect(c.fields).toEqual({ model: 'gpt-image-1', prompt: 'combine them', n: '1', size: '1536x1024', quality: 'medium' });
      expect(c.files.map((f) => [f.field, f.mimeType, f.data.equals(inputs[c.files.indexOf(f)]!)])).toEqual([
        ['image[]', 'image/png', true],
        ['image[]', 'image/png', true],
        ['image[]', 'image/png', true],
      ]);
    }
    expect((await accountLedger(h.db, acct.accountId)).charges).toEqual([-2n * GPT_IMAGE]);
  });
});

describe('refusals: 4xx naming the field, before anything is reserved or any vendor called', () => {
  const png = () => pngOf(16, 16);
  const file = async (name = 'a.png') => toFile(await png(), name, { type: 'image/png' });

  it.each([
    ['a size the model does not list', { model: 'sandbox/image', prompt: 'x', size: '256x256' }, 'size'],
    ['a quality other than low on a fixed-option model', { model: 'sandbox/image-fixed', prompt: 'x', quality: 'high' }, 'quality'],
    ['a quality that is no quality', { model: 'sandbox/image', prompt: 'x', quality: 'ultra' }, 'quality'],
    ['a prompt over 4,000 bytes of UTF-8 (1,334 characters)', { model: 'sandbox/image', prompt: '€'.repeat(1334) }, 'prompt'],
    ['n = 5', { model: 'sandbox/image', prompt: 'x', n: 5 }, 'n'],
    ['n = 0', { model: 'sandbox/image', prompt: 'x', n: 0 }, 'n'],
    ['n = 1.5', { model: 'sandbox/image', prompt: 'x', n: 1.5 }, 'n'],
    ["response_format 'url'", { model: 'sandbox/image', prompt: 'x', response_format: 'url' }, 'response_format'],
    ['stream: true', { model: 'sandbox/image', prompt: 'x', stream: true }, 'stream'],
    ['a missing prompt', { model: 'sandbox/image' }, 'prompt'],
    ['an unknown field', { model: 'sandbox/image', prompt: 'x', colour: 'red' }, 'colour'],
  ])('generations: %s', async (_what, body, field) => {
    const acct = await freshAccount();
    const before = fake.requests.length;
    const answer = await call(`${h.t.url}/v1/images/generations`, { token: acct.secret, body });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('bad_request');
    expect(answer.body.error.message).toContain(field);
    expect(answer.headers.get('x-ratelimit-remaining-requests')).not.toBeNull();
    expect(fake.requests.length).toBe(before);
    expect(await accountLedger(h.db, acct.accountId)).toMatchObject({
      holds: 0,
      charges: [],
      usage: [],
      reserved: 0n,
      balance: 10_000_000n,
    });
  });

  it('accepts the harmless fields the SDK sends (background, output_format, output_compression, moderation, user, style)', async () => {
    const response = await a.openai.images.generate({
      model: 'sandbox/image',
      prompt: 'x',
      background: 'opaque',
      output_format: 'png',
      output_compression: 80,
      moderation: 'low',
      user: 'u-1',
      style: 'vivid',
      quality: 'high',
      size: 'auto',
    });
    expect(await decodeImages(response)).toEqual([{ width: 1024, height: 1024, format: 'png' }]);
  });

  const editCases: [string, () => Promise<Parameters<OpenAI['images']['edit']>[0]>, string][] = [
    ['a mask', async () => ({ model: 'sandbox/image', prompt: 'x', image: await file(), mask: await file('mask.png') }), 'mask'],
    [
      'more images than the model takes (5 > 4)',
      async () => ({ model: 'sandbox/image', prompt: 'x', image: await Promise.all([1, 2, 3, 4, 5].map((i) => file(`${i}.png`))) }),
      'image',
    ],
    [
      'bytes that are no image',
      async () => ({
        model: 'sandbox/image',
        prompt: 'x',
        image: await toFile(Buffer.from('GIF89a not really'), 'x.png', { type: 'image/png' }),
      }),
      'image',
    ],
    ['a model that cannot edit', async () => ({ model: 'sandbox/image-fixed', prompt: 'x', image: await file() }), 'model'],
    [
      "response_format 'url'",
      async () => ({ model: 'sandbox/image', prompt: 'x', image: await file(), response_format: 'url' as const }),
      'response_format',
    ],
    [
      'a size the model does not list',
      async () => ({ model: 'openai/gpt-image-1', prompt: 'x', image: await file(), size: '512x512' as const }),
      'size',
    ],
  ];
  it.each(editCases)('edits: %s', async (_what, params, field) => {
    const acct = await freshAccount();
    const before = fake.requests.length;
    const error = await acct.openai.images.edit(await params()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const body = (error as InstanceType<typeof OpenAI.BadRequestError>).error as { code: string; message: string };
    expect(body.code).toBe('bad_request');
    expect(body.message).toContain(field);
    expect(fake.requests.length).toBe(before);
    expect(await accountLedger(h.db, acct.accountId)).toMatchObject({ holds: 0, charges: [], usage: [], reserved: 0n });
  });

  it('edits: no image part is 400 naming image', async () => {
    const form = new FormData();
    form.append('model', 'sandbox/image');
    form.append('prompt', 'x');
    const response = await fetch(`${h.t.url}/v1/images/edits`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${a.secret}` },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.message).toMatch(/^image:/);
  });

  it('each endpoint refuses the other body type with 415', async () => {
    const form = new FormData();
    form.append('model', 'sandbox/image');
    form.append('prompt', 'x');
    const multipart = await fetch(`${h.t.url}/v1/images/generations`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${a.secret}` },
    });
    expect(multipart.status).toBe(415);
    const json = await call(`${h.t.url}/v1/images/edits`, { token: a.secret, body: { model: 'sandbox/image', prompt: 'x' } });
    expect(json.status).toBe(415);
    expect(json.body.error.code).toBe('unsupported_media_type');
  });

  it('edits: an upload over the per-file limit is 413 naming the limit', async () => {
    const form = new FormData();
    form.append('model', 'sandbox/image');
    form.append('prompt', 'x');
    form.append('image', new Blob([new Uint8Array(26 * 1024 * 1024)]), 'huge.png');
    const response = await fetch(`${h.t.url}/v1/images/edits`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${a.secret}` },
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error).toMatchObject({ code: 'payload_too_large', details: { limit: 'max_file_bytes' } });
  });

  it('edits: the key is checked before the body is parsed (a wrong key with a malformed body is 401, not 400)', async () => {
    const malformed = { 'content-type': 'multipart/form-data; boundary=B' };
    const wrongKey = await call(`${h.t.url}/v1/images/edits`, {
      token: 'tg-wrong',
      rawBody: '--B\r\nContent-Disposition: form-data; name="prompt"\r\n\r\ncut short',
      headers: malformed,
    });
    expect(wrongKey.status).toBe(401);
    const goodKey = await call(`${h.t.url}/v1/images/edits`, {
      token: a.secret,
      rawBody: '--B\r\nContent-Disposition: form-data; name="prompt"\r\n\r\ncut short',
      headers: malformed,
    });
    expect(goodKey.status).toBe(400);
    expect(goodKey.body.error.message).toMatch(/malformed/);
  });

  it('a plan-billed key gets 403 api_wallet_key_required on both endpoints', async () => {
    const owner = await provisionAccount(h.t.url, { plan: 'pro' });
    const plan = await createKey(h.t.url, owner.sessionToken, { name: 'plan key', kind: 'plan' });
    const client = openaiClient(h.t.url, plan.secret);
    const generate = await client.images.generate({ model: 'sandbox/image', prompt: 'x' }).catch((e: unknown) => e);
    expect((generate as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect((generate as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'api_wallet_key_required' });
    const edit = await client.images.edit({ model: 'sandbox/image', prompt: 'x', image: await file() }).catch((e: unknown) => e);
    expect((edit as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
  });
});

describe('402s come before any vendor call', () => {
  it('insufficient balance: n × price does not fit, the vendor is not called', async () => {
    const acct = await freshAccount('50000'); // one gpt-image-1 image fits, two do not
    const before = fake.requests.length;
    const error = await acct.openai.images.generate({ model: 'openai/gpt-image-1', prompt: 'x', n: 2 }).catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: 'api_insufficient_balance',
      details: { required_micro: '84000', available_micro: '50000' },
    });
    expect(fake.requests.length).toBe(before);
    expect(await accountLedger(h.db, acct.accountId)).toMatchObject({ charges: [], reserved: 0n, balance: 50_000n });
  });

  it("the key's monthly limit: settled image charges count, the next hold that does not fit is refused", async () => {
    const acct = await freshAccount('100000000');
    const limited = await createKey(h.t.url, acct.sessionToken, { name: 'limited', monthly_spend_limit_micro: '1000000' });
    const client = openaiClient(h.t.url, limited.secret);
    for (let i = 0; i < 5; i++) await client.images.generate({ model: 'openai/gpt-image-1', prompt: `batch ${i}`, n: 4 }); // 5 × 168,000 = 840,000
    const before = fake.requests.length;
    const error = await client.images
      .generate({ model: 'openai/gpt-image-1', prompt: 'one batch too many', n: 4 })
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: 'api_key_spend_limit_reached',
      details: { limit_micro: '1000000', spent_micro: '840000' },
    });
    expect(fake.requests.length).toBe(before);
    // One image still fits under the limit.
    const one = await client.images.generate({ model: 'openai/gpt-image-1', prompt: 'fits', n: 3 });
    expect(one.data).toHaveLength(3);
    expect((await accountLedger(h.db, acct.accountId)).charges.reduce((s, c) => s + c, 0n)).toBe(-(840_000n + 3n * GPT_IMAGE));
  });
});

describe('cancellation and reporting', () => {
  it('a client that disconnects cancels the vendor calls still running and is not charged', async () => {
    const acct = await freshAccount();
    fake.script({ delayMs: 5_000 });
    const before = fake.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${h.t.url}/v1/images/generations`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-image-1', prompt: 'slow', n: 2 }),
    }).catch((e: unknown) => e);
    const deadline = Date.now() + 5_000;
    while (fake.requests.length < before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await pending;
    const calls = fake.requests.slice(before);
    while (
      !(calls.every((c) => c.aborted) && (await accountLedger(h.db, acct.accountId)).usage.length === 1) &&
      Date.now() < deadline + 3_000
    )
      await new Promise((r) => setTimeout(r, 20));
    expect(calls.map((c) => c.aborted)).toEqual([true, true]);
    expect(await accountLedger(h.db, acct.accountId)).toMatchObject({
      charges: [],
      reserved: 0n,
      balance: 10_000_000n,
      usage: [['failed', 0, '0']],
    });
  });

  it('a running image request holds a concurrency slot until it ends', async () => {
    // Tier 1 (not pinned): 5 concurrent requests.
    const owner = await provisionAccount(h.t.url, { fundsMicro: '10000000' });
    const key = await createKey(h.t.url, owner.sessionToken);
    const slow = Array.from({ length: 5 }, (_, i) =>
      call(`${h.t.url}/v1/images/generations`, {
        token: key.secret,
        body: { model: 'sandbox/image', prompt: `slow ${i} [sandbox:delay=8000]`, size: '512x512' },
      }),
    );
    // All five hold their slot before the sixth asks (a busy machine admits them late).
    const admission = h.t.tollgate.services.admission;
    for (const deadline = Date.now() + 8_000; (await admission.slotsInUse(owner.accountId)) < 5 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    expect(await admission.slotsInUse(owner.accountId)).toBe(5);
    // Five requests in a second fill the per-second window too: ask again (a refusal records nothing) until the window lets it reach the concurrency check.
    let sixth = await call(`${h.t.url}/v1/images/generations`, {
      token: key.secret,
      body: { model: 'sandbox/image', prompt: 'one too many', size: '512x512' },
    });
    for (const deadline = Date.now() + 10_000; sixth.body?.error?.code === 'rate_limited' && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 50));
      sixth = await call(`${h.t.url}/v1/images/generations`, {
        token: key.secret,
        body: { model: 'sandbox/image', prompt: 'one too many', size: '512x512' },
      });
    }
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.code).toBe('api_concurrency_limit');
    expect((await Promise.all(slow)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const after = await call(`${h.t.url}/v1/images/generations`, {
      token: key.secret,
      body: { model: 'sandbox/image', prompt: 'slots are free again', size: '512x512' },
    });
    expect(after.status).toBe(200);
  });

  it('usage records over GraphQL show the image count and spend', async () => {
    const acct = await freshAccount();
    await acct.openai.images.generate({ model: 'sandbox/image', prompt: 'counted', n: 4 });
    const records = await graphql(h.t.url, '{usageRecords{data{model images costMicro status}}}', {}, acct.sessionToken);
    expect(records.errors).toBeUndefined();
    expect(records.data.usageRecords.data).toEqual([{ model: 'sandbox/image', images: 4, costMicro: '4000', status: 'ok' }]);
  });
});
