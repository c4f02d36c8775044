import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic';
import { startFakeVertex, testServiceAccount, type FakeVertex } from '../fakes/vertex';
import {
  accountMoney,
  expectChargedExactly,
  expectNothingCharged,
  requestId,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * Claude and Gemini on Google Vertex AI, over real HTTP against a wire-accurate fake (its token
 * endpoint verifies each signed assertion): Claude through `rawPredict`/`streamRawPredict` as
 * one deployment of Anthropic's model, Gemini through `generateContent` as a model whose only
 * vendor is Vertex; each charged the model's published price; the service account's token
 * minted once for many calls and replaced when it is about to expire; a throttled Vertex
 * deployment, and one whose key the token endpoint refuses, failing over to Anthropic itself. The tests share one gateway and run in order
 * (the token the gateway keeps carries from one to the next).
 */

let vertex: FakeVertex;
let anthropic: FakeAnthropic;
let h: TextHarness;
let a: TextAccount;
let dir: string;

const CLAUDE_ON_VERTEX = 'claude-sonnet-4-5@20250929';
const PREFIX = '/v1/projects/tollgate-test/locations/us-east5/publishers';

beforeAll(async () => {
  [vertex, anthropic] = await Promise.all([
    startFakeVertex((uri) => testServiceAccount(uri)),
    startFakeAnthropic({ apiKey: 'sk-ant-direct' }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'tollgate-vertex-'));
  const file = join(dir, 'catalog.json');
  writeFileSync(
    file,
    JSON.stringify({
      vendors: {
        vertex_us: { protocol: 'vertex', base_url: vertex.url, region: 'us-east5' },
        // Same project, a key the token endpoint does not know (signed with another private key).
        vertex_stale: { protocol: 'vertex', base_url: vertex.url, region: 'us-east5' },
        anthropic: { protocol: 'anthropic', base_url: anthropic.url },
      },
      models: [
        {
          kind: 'text',
          id: 'anthropic/claude-sonnet-4-5',
          vendor: 'anthropic',
          vendor_model_id: 'claude-sonnet-4-5-20250929',
          created: 1759104000,
          context_length: 200000,
          max_output_tokens: 64000,
          effort: 'anthropic-thinking',
          pricing: { input: '3.00', output: '15.00' },
          deployments: [
            { vendor: 'vertex_us', vendor_model_id: CLAUDE_ON_VERTEX, priority: 0 },
            { vendor: 'anthropic', priority: 1 },
          ],
        },
        {
          kind: 'text',
          id: 'anthropic/claude-haiku-4-5',
          vendor: 'anthropic',
          vendor_model_id: 'claude-haiku-4-5-20251001',
          created: 1760486400,
          context_length: 200000,
          max_output_tokens: 64000,
          pricing: { input: '1.00', output: '5.00' },
          deployments: [
            { vendor: 'vertex_stale', vendor_model_id: 'claude-haiku-4-5@20251001', priority: 0 },
            { vendor: 'anthropic', priority: 1 },
          ],
        },
        {
          kind: 'text',
          id: 'meta/llama-3.3-70b-instruct',
          vendor: 'vertex_us',
          vendor_model_id: 'meta/llama-3.3-70b-instruct-maas',
          created: 1733443200,
          context_length: 128000,
          max_output_tokens: 8192,
          pricing: { input: '0.72', output: '0.72' },
        },
        {
          kind: 'text',
          id: 'google/gemini-2.5-flash',
          vendor: 'vertex_us',
          vendor_model_id: 'gemini-2.5-flash',
          created: 1750118400,
          context_length: 1048576,
          max_output_tokens: 65536,
          effort: 'gemini-thinking',
          pricing: { input: '0.30', output: '2.50' },
        },
      ],
    }),
  );
  // The key's JSON itself in the variable (a path to the file works too: test/unit/config-vertex.test.ts).
  h = await startTextHarness({
    TOLLGATE_CATALOG: file,
    VERTEX_US_CREDENTIALS: vertex.account.json,
    VERTEX_STALE_CREDENTIALS: testServiceAccount(vertex.tokenUri).json,
    ANTHROPIC_API_KEY: 'sk-ant-direct',
  });
  a = await textAccount(h.t);
});

afterAll(async () => {
  await h?.stop();
  await Promise.all([vertex?.close(), anthropic?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  for (const fake of [vertex, anthropic]) {
    fake.script();
    fake.requests.length = 0;
  }
  vertex.tokenRequests.length = 0;
  vertex.tokenLifetime.seconds = 3600;
});

const askClaude = (id: string, stream: boolean) =>
  stream
    ? a.anthropic.messages
        .stream({ model: 'claude-sonnet-4-5', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] }, withId(id))
        .finalMessage()
    : a.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] }, withId(id));

const askGemini = async (id: string, stream: boolean): Promise<string> => {
  if (!stream) {
    const data = await a.openai.chat.completions.create(
      { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1000 },
      withId(id),
    );
    return data.choices[0]!.message.content ?? '';
  }
  const chunks = await a.openai.chat.completions.create(
    { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1000, stream: true },
    withId(id),
  );
  let text = '';
  for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
  return text;
};

test('concurrent first requests mint one token, and later requests reuse it', async () => {
  await Promise.all([0, 1, 2, 3].map((i) => askClaude(requestId(), i % 2 === 0)));
  await askGemini(requestId(), false);
  await askGemini(requestId(), true);
  expect(vertex.tokenRequests).toHaveLength(1);
  const [grant] = vertex.tokenRequests;
  expect(grant!.status).toBe(200);
  expect(grant!.form.grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
  expect(grant!.claims).toMatchObject({
    iss: vertex.account.clientEmail,
    scope: 'https://www.googleapis.com/auth/cloud-platform',
    aud: vertex.tokenUri,
  });
  const tokens = new Set(vertex.requests.map((r) => r.headers.authorization));
  expect([...tokens]).toEqual(['Bearer ya29.fake-token-1']);
  expect(vertex.requests).toHaveLength(6);
});

test('a token within 5 minutes of its expiry is replaced before the next request', async () => {
  // Tokens issued now live 5 minutes: each is stale at once for the gateway, so every request mints one.
  vertex.tokenLifetime.seconds = 300;
  // The kept token (an hour) serves this one; the next token lives 5 minutes.
  await askGemini(requestId(), false);
  expect(vertex.tokenRequests).toHaveLength(0);
  vertex.tokens.clear(); // the fake forgets every token: a request with the old one would be refused (401)
  await expect(askGemini(requestId(), false)).rejects.toMatchObject({ status: 502 });
  // That 401 made the gateway drop its token: the next request mints one (5 minutes)…
  await askGemini(requestId(), false);
  // …which is stale for the gateway at once, so the next mints another.
  await askGemini(requestId(), true);
  expect(vertex.tokenRequests.map((r) => r.status)).toEqual([200, 200]);
  const used = vertex.requests.map((r) => r.headers.authorization);
  expect(used.slice(-2)).toEqual(['Bearer ya29.fake-token-2', 'Bearer ya29.fake-token-3']);
});

describe('Claude on Vertex', () => {
  test.each([false, true])(
    'a Messages request (stream: %s) goes to rawPredict in Vertex’s shape, charged at the model price',
    async (stream) => {
      vertex.script({ text: 'Hello from Claude on Vertex.', usage: { input: 1000, output: 100 } });
      const id = requestId();
      const message = await askClaude(id, stream);
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello from Claude on Vertex.' })]);
      const sent = vertex.lastRequest!;
      expect(sent.path).toBe(`${PREFIX}/anthropic/models/${CLAUDE_ON_VERTEX}:${stream ? 'streamRawPredict' : 'rawPredict'}`);
      expect(sent.headers.authorization).toMatch(/^Bearer ya29\./);
      expect(sent.headers['x-api-key']).toBeUndefined();
      expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 300 });
      expect(sent.body).not.toHaveProperty('model');
      expect(anthropic.requests).toHaveLength(0);
      // $3/M × 1000 + $15/M × 100: Anthropic's price, whichever cloud served.
      await expectChargedExactly(h, a, id, 4500n);
    },
  );

  test('betas go in the anthropic-beta header', async () => {
    await a.anthropic.beta.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      betas: ['context-1m-2025-08-07'],
    });
    expect(vertex.lastRequest!.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect(vertex.lastRequest!.body).not.toHaveProperty('anthropic_beta');
  });

  test('a Vertex deployment answering 429 (RESOURCE_EXHAUSTED) fails over to Anthropic itself, charged once', async () => {
    vertex.script({ status: 429 });
    anthropic.script({ text: 'Hello from Anthropic directly.', usage: { input: 1000, output: 100 } });
    const id = requestId();
    const message = await askClaude(id, true);
    expect(message.content).toEqual([expect.objectContaining({ text: 'Hello from Anthropic directly.' })]);
    expect(vertex.requests).toHaveLength(1);
    expect(anthropic.lastRequest!.body.model).toBe('claude-sonnet-4-5-20250929');
    await expectChargedExactly(h, a, id, 4500n);
  });
});

test('a service account key the token endpoint refuses fails the Vertex deployment over to the next one', async () => {
  anthropic.script({ text: 'Hello from Haiku directly.', usage: { input: 100, output: 10 } });
  const id = requestId();
  const message = await a.anthropic.messages.create(
    { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] },
    withId(id),
  );
  expect(message.content).toEqual([expect.objectContaining({ text: 'Hello from Haiku directly.' })]);
  expect(vertex.tokenRequests.map((r) => r.status)).toEqual([400]);
  expect(vertex.requests).toHaveLength(0);
  // $1/M × 100 + $5/M × 10.
  await expectChargedExactly(h, a, id, 150n);
});

describe('Gemini on Vertex', () => {
  test.each([false, true])('a Chat request (stream: %s) goes to generateContent, charged at the model price', async (stream) => {
    vertex.script({ text: 'Hello from Gemini on Vertex.', usage: { input: 1000, output: 200 } });
    const id = requestId();
    expect(await askGemini(id, stream)).toBe('Hello from Gemini on Vertex.');
    const sent = vertex.lastRequest!;
    expect(sent.path).toBe(`${PREFIX}/google/models/gemini-2.5-flash:${stream ? 'streamGenerateContent' : 'generateContent'}`);
    expect(sent.query).toEqual(stream ? { alt: 'sse' } : {});
    expect(sent.headers['x-goog-api-key']).toBeUndefined();
    expect(sent.body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
    // $0.30/M × 1000 + $2.50/M × 200.
    await expectChargedExactly(h, a, id, 800n);
  });

  test("Vertex's error envelope reaches the client as the vendor's message, and nothing is charged", async () => {
    vertex.script({ status: 500, errorMessage: 'Internal error encountered.' });
    const id = requestId();
    await expect(askGemini(id, false)).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/Internal error encountered/),
    });
    await expectNothingCharged(h, a, id);
  });
});

describe('Token counting through Vertex (POST /v1/messages/count_tokens)', () => {
  const weather = {
    name: 'get_weather',
    description: 'The weather of a city.',
    input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
  };
  const prompt = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens?' }] };

  async function expectFree(id: string, before: Awaited<ReturnType<typeof accountMoney>>): Promise<void> {
    expect((await accountMoney(h.db, a.accountId)).balance).toBe(before.balance);
    const { rows } = await h.db.query('select count(*)::int as n from usage_records where request_id = $1', [id]);
    expect(rows[0].n).toBe(0);
  }

  test("Claude: Vertex's count-tokens:rawPredict with the Messages count body and the model; free", async () => {
    vertex.script({ countTokens: 321 });
    const before = await accountMoney(h.db, a.accountId);
    const id = requestId();
    const counted = await a.anthropic.messages.countTokens({ model: 'claude-sonnet-4-5', ...prompt, tools: [weather] }, withId(id));
    expect(counted).toEqual({ input_tokens: 321 });
    const sent = vertex.lastRequest!;
    expect(sent.path).toBe(`${PREFIX}/anthropic/models/count-tokens:rawPredict`);
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\./);
    expect(sent.body).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      model: CLAUDE_ON_VERTEX,
      system: 'Be brief.',
      tools: [weather],
    });
    expect(sent.body).not.toHaveProperty('max_tokens');
    expect(sent.body).not.toHaveProperty('stream');
    expect(anthropic.requests).toHaveLength(0);
    await expectFree(id, before);
  });

  test('Claude: betas go in the anthropic-beta header of the count too', async () => {
    await a.anthropic.beta.messages.countTokens({ model: 'claude-sonnet-4-5', ...prompt, betas: ['context-1m-2025-08-07'] });
    expect(vertex.lastRequest!.path).toBe(`${PREFIX}/anthropic/models/count-tokens:rawPredict`);
    // The SDK adds its own token-counting beta, which Vertex takes as Anthropic does.
    expect(String(vertex.lastRequest!.headers['anthropic-beta']).split(',')).toContain('context-1m-2025-08-07');
  });

  test("Gemini: Vertex's :countTokens with the prompt's contents, system instruction and tools; free", async () => {
    vertex.script({ countTokens: 77 });
    const before = await accountMoney(h.db, a.accountId);
    const id = requestId();
    const counted = await a.anthropic.messages.countTokens({ model: 'gemini-2.5-flash', ...prompt, tools: [weather] }, withId(id));
    expect(counted).toEqual({ input_tokens: 77 });
    const sent = vertex.lastRequest!;
    expect(sent.path).toBe(`${PREFIX}/google/models/gemini-2.5-flash:countTokens`);
    expect(sent.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'How many tokens?' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [{ functionDeclarations: [expect.objectContaining({ name: 'get_weather' })] }],
    });
    await expectFree(id, before);
  });

  test('a token Vertex refuses on a count is dropped: the next count mints another', async () => {
    vertex.tokens.clear();
    await expect(a.anthropic.messages.countTokens({ model: 'gemini-2.5-flash', ...prompt })).rejects.toMatchObject({ status: 502 });
    vertex.script({ countTokens: 5 });
    expect(await a.anthropic.messages.countTokens({ model: 'gemini-2.5-flash', ...prompt })).toEqual({ input_tokens: 5 });
    expect(vertex.tokenRequests.map((r) => r.status)).toEqual([200]);
  });
});

describe('Open models on Vertex (its OpenAI-compatible endpoint)', () => {
  test.each([false, true])(
    'a Chat request (stream: %s) goes to endpoints/openapi/chat/completions, charged at the model price',
    async (stream) => {
      vertex.script({ text: 'Hello from Llama on Vertex.', usage: { input: 50, output: 150 } });
      const id = requestId();
      const body = { model: 'meta/llama-3.3-70b-instruct', messages: [{ role: 'user' as const, content: 'Hi' }], max_tokens: 200 };
      let text = '';
      if (stream) {
        for await (const chunk of await a.openai.chat.completions.create({ ...body, stream: true }, withId(id)))
          text += chunk.choices[0]?.delta.content ?? '';
      } else text = (await a.openai.chat.completions.create(body, withId(id))).choices[0]!.message.content ?? '';
      expect(text).toBe('Hello from Llama on Vertex.');
      const sent = vertex.lastRequest!;
      expect(sent.path).toBe('/v1/projects/tollgate-test/locations/us-east5/endpoints/openapi/chat/completions');
      expect(sent.headers.authorization).toMatch(/^Bearer ya29\./);
      expect(sent.body).toMatchObject({ model: 'meta/llama-3.3-70b-instruct-maas', max_tokens: 200, stream });
      // $0.72/M × 50 + $0.72/M × 150 (within the hold: 200 output tokens at most).
      await expectChargedExactly(h, a, id, 144n);
    },
  );

  test("count_tokens: Vertex has no count for open models, so Tollgate's tokenizer counts", async () => {
    const counted = await a.anthropic.messages.countTokens({
      model: 'meta/llama-3.3-70b-instruct',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'How many tokens?' }],
    });
    expect(counted).toEqual({ input_tokens: countTokens('Be brief.') + countTokens('How many tokens?') });
    expect(vertex.requests).toHaveLength(0);
  });
});
