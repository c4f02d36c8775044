import { createKey, call, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { pngOf } from '../support/images';

/**
 * Refusals that tell the truth: a 404 for a model says whether the id is unknown or what keeps
 * the catalog's model from this key; a 413 names the limit it hit; more images than a model
 * takes is that model's 400, not the upload limit's 413.
 */
const OPENAI_SECRET = 'sk-test-do-not-echo-0123456789';

let t: TestTollgate;
let small: TestTollgate;
let prepaid: string;
let planKey: string;
let session: string;

beforeAll(async () => {
  // OpenAI configured (its key must never show), Anthropic not.
  t = await startTestTollgate({
    env: { OPENAI_API_KEY: OPENAI_SECRET, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', TOLLGATE_MAX_BODY_BYTES: '4096' },
  });
  const owner = await provisionAccount(t.url, { fundsMicro: '5000000', plan: 'starter' });
  session = owner.sessionToken;
  prepaid = (await createKey(t.url, session)).secret;
  planKey = (await createKey(t.url, session, { name: 'plan', kind: 'plan' })).secret;
  // Uploads limited to three files, below sandbox/image's four input images.
  small = await startTestTollgate({ env: { TOLLGATE_MAX_UPLOAD_FILES: '3' } });
});
afterAll(async () => {
  await t?.stop();
  await small?.stop();
});

const chat = (url: string, key: string, model: string) =>
  call(`${url}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });

describe('404 model_not_available tells a typo from a model this key cannot use', () => {
  test.each([
    ['a typo', prepaid, 'openai/gpt-4o-typo', "The model 'openai/gpt-4o-typo' does not exist or this key cannot use it."],
    [
      'an unconfigured vendor',
      prepaid,
      'anthropic/claude-sonnet-4-5',
      "The model 'anthropic/claude-sonnet-4-5' is in the catalog, but its vendor 'anthropic' is not configured on this gateway (the operator sets ANTHROPIC_API_KEY).",
    ],
    [
      'an unconfigured vendor, named by its vendor id',
      prepaid,
      'claude-sonnet-4-5',
      "The model 'claude-sonnet-4-5' ('anthropic/claude-sonnet-4-5') is in the catalog, but its vendor 'anthropic' is not configured on this gateway (the operator sets ANTHROPIC_API_KEY).",
    ],
    ["a model outside the key's plan", planKey, 'openai/gpt-4.1', "The model 'openai/gpt-4.1' is not in this key's plan."],
  ])('%s', async (_case, key, model, message) => {
    const answer = await chat(t.url, key === prepaid ? prepaid : planKey, model);
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'model_not_available', message });
    expect(JSON.stringify(answer.body)).not.toContain(OPENAI_SECRET);
  });

  test('images and videos say the same', async () => {
    const image = await call(`${t.url}/v1/images/generations`, { token: prepaid, body: { model: 'google/imagen-4', prompt: 'x' } });
    expect(image.body.error).toMatchObject({
      code: 'model_not_available',
      message: expect.stringContaining("its vendor 'gemini' is not configured on this gateway (the operator sets GEMINI_API_KEY)"),
    });
    const video = await call(`${t.url}/v1/videos`, { token: prepaid, body: { model: 'google/veo-3', prompt: 'x' } });
    expect(video.status).toBe(404);
    expect(video.body.error.message).toMatch(/does not exist|is not configured/);
  });
});

describe('every 413 names the limit it hit', () => {
  const big = 'x'.repeat(5000);

  test('JSON bodies: REST, the text endpoints and GraphQL', async () => {
    const answers = [
      await call(`${t.url}/v1/keys`, { token: session, body: { name: big } }),
      await call(`${t.url}/v1/chat/completions`, {
        token: prepaid,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: big }] },
      }),
      await call(`${t.url}/graphql`, { token: session, body: { query: `{ me { id } } # ${big}` } }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(413);
      expect(answer.body.error).toMatchObject({
        code: 'payload_too_large',
        message: 'The request body is larger than the limit of 4096 bytes.',
        details: { limit: 'max_body_bytes', limit_value: 4096 },
      });
    }
  });

  test('multipart: files, their size, fields', async () => {
    const png = new Blob([await pngOf(8, 8)], { type: 'image/png' });
    const send = async (parts: Array<[string, string | Blob]>, url = small.url, key = smallKey) => {
      const form = new FormData();
      for (const [name, value] of parts) form.append(name, value);
      const response = await fetch(`${url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      const body = (await response.json()) as any;
      return { status: response.status, body: response.status === 200 ? { data: 'an image' } : body };
    };
    const owner = await provisionAccount(small.url, { fundsMicro: '5000000' });
    const smallKey = (await createKey(small.url, owner.sessionToken)).secret;
    const fields: Array<[string, string]> = [
      ['model', 'sandbox/image'],
      ['prompt', 'x'],
    ];

    // Four images: within sandbox/image's four, over this gateway's three files: the upload limit is the truth.
    const files = await send([...fields, ...Array.from({ length: 4 }, (): [string, Blob] => ['image[]', png])]);
    expect(files).toMatchObject({
      status: 413,
      body: {
        error: {
          code: 'payload_too_large',
          message: 'The request has 4 file parts, more than the limit of 3.',
          details: { limit: 'max_files', limit_value: 3 },
        },
      },
    });
    const fieldBytes = await send([...fields, ['size', 'y'.repeat(70 * 1024)], ['image', png]]);
    expect(fieldBytes).toMatchObject({ status: 413, body: { error: { details: { limit: 'max_field_bytes', limit_value: 64 * 1024 } } } });
    const manyFields = await send([
      ...fields,
      ...Array.from({ length: 40 }, (_, i): [string, string] => [`extra${i}`, 'z']),
      ['image', png],
    ]);
    expect(manyFields).toMatchObject({ status: 413, body: { error: { details: { limit: 'max_fields', limit_value: 32 } } } });
  });
});

test("more images than the model takes is the model's 400 naming image and its limit, even past the upload limit", async () => {
  const png = new Blob([await pngOf(8, 8)], { type: 'image/png' });
  for (const count of [5, 17]) {
    const form = new FormData();
    form.append('model', 'sandbox/image');
    form.append('prompt', 'x');
    for (let i = 0; i < count; i++) form.append('image[]', png);
    const response = await fetch(`${t.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${prepaid}` },
      body: form,
    });
    expect({ count, status: response.status, error: ((await response.json()) as any).error }).toEqual({
      count,
      status: 400,
      error: {
        code: 'bad_request',
        message: `image: 'sandbox/image' accepts at most 4 input images, got ${count}.`,
        details: { field: 'image', limit: 'max_input_images', limit_value: 4 },
      },
    });
  }
  expect(await graphql(t.url, '{ me { id } }', {}, session)).toMatchObject({ data: { me: { id: expect.any(String) } } });
});
