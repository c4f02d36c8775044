import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic';
import { startFakeAzureOpenAI } from '../fakes/azure-openai';
import { startFakeBedrock, type FakeBedrockReply } from '../fakes/bedrock';
import type { FakeOpenAIReply, FakeVendor } from '../fakes/openai';
import {
  accountMoney,
  expectChargedExactly,
  requestId,
  settledMoneyOf,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * The same models through other clouds, over real HTTP against wire-accurate fakes: OpenAI's
 * model on an Azure OpenAI deployment, Claude on Amazon Bedrock (SigV4, event-stream framing),
 * each charged the model's published price, and Bedrock failing over to Anthropic's own API.
 */

let azure: FakeVendor<FakeOpenAIReply>;
let bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
let anthropic: FakeAnthropic;
let h: TextHarness;
let a: TextAccount;
let dir: string;

const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

beforeAll(async () => {
  [azure, bedrock, anthropic] = await Promise.all([
    startFakeAzureOpenAI({ apiKey: 'azure-key-1', deployments: ['gpt4o-mini-prod'] }),
    startFakeBedrock({ region: 'eu-west-1' }),
    startFakeAnthropic({ apiKey: 'sk-ant-direct' }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'tollgate-clouds-'));
  const file = join(dir, 'catalog.json');
  writeFileSync(
    file,
    JSON.stringify({
      vendors: {
        azure_east: { protocol: 'azure-openai', base_url: azure.url, api_key_env: 'AZURE_EAST_KEY', api_version: '2024-10-21' },
        bedrock_eu: { protocol: 'bedrock', base_url: bedrock.url, region: 'eu-west-1' },
        anthropic: { protocol: 'anthropic', base_url: anthropic.url },
      },
      models: [
        {
          kind: 'text',
          id: 'openai/gpt-4o-mini',
          vendor: 'openai',
          created: 1721260800,
          context_length: 128000,
          max_output_tokens: 16384,
          pricing: { input: '0.15', output: '0.60' },
          deployments: [{ vendor: 'azure_east', vendor_model_id: 'gpt4o-mini-prod' }],
        },
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
            { vendor: 'bedrock_eu', vendor_model_id: BEDROCK_MODEL, priority: 0 },
            { vendor: 'anthropic', priority: 1 },
          ],
        },
      ],
    }),
  );
  h = await startTextHarness({
    TOLLGATE_CATALOG: file,
    AZURE_EAST_KEY: 'azure-key-1',
    BEDROCK_EU_ACCESS_KEY_ID: bedrock.accessKeyId,
    BEDROCK_EU_SECRET_ACCESS_KEY: bedrock.secretAccessKey,
    ANTHROPIC_API_KEY: 'sk-ant-direct',
  });
  a = await textAccount(h.t);
});

afterAll(async () => {
  await h?.stop();
  await Promise.all([azure?.close(), bedrock?.close(), anthropic?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  for (const fake of [azure, bedrock, anthropic]) {
    fake.script();
    fake.requests.length = 0;
  }
});

describe('Azure OpenAI', () => {
  test('a Chat request goes to the deployment path with api-version and api-key, charged at the model price', async () => {
    azure.script({ text: 'Hello from Azure.', usage: { input: 20, output: 100 } });
    const id = requestId();
    const data = await a.openai.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 200, temperature: 0.2 },
      withId(id),
    );
    expect(data.choices[0]!.message.content).toBe('Hello from Azure.');
    const sent = azure.lastRequest!;
    expect(sent.path).toBe('/openai/deployments/gpt4o-mini-prod/chat/completions');
    expect(sent.query['api-version']).toBe('2024-10-21');
    expect(sent.headers['api-key']).toBe('azure-key-1');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toMatchObject({ max_completion_tokens: 200, temperature: 0.2, stream: false });
    // $0.15/M × 20 + $0.60/M × 100.
    await expectChargedExactly(h, a, id, 63n);
  });

  test("a stream with Azure's prompt-filter chunk first reaches the client whole", async () => {
    azure.script({ text: 'Streamed from Azure, in pieces.', usage: { input: 20, output: 100 } });
    const id = requestId();
    const stream = await a.openai.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 200, stream: true },
      withId(id),
    );
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Streamed from Azure, in pieces.');
    expect(azure.lastRequest!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    await expectChargedExactly(h, a, id, 63n);
  });
});

describe('Amazon Bedrock', () => {
  const ask = (id: string, stream: boolean) =>
    stream
      ? a.anthropic.messages
          .stream({ model: 'claude-sonnet-4-5', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] }, withId(id))
          .finalMessage()
      : a.anthropic.messages.create(
          { model: 'claude-sonnet-4-5', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] },
          withId(id),
        );

  test.each([false, true])(
    'a Messages request (stream: %s) is signed, shaped for Bedrock and charged at the model price',
    async (stream) => {
      bedrock.script({ text: 'Hello from Claude on Bedrock.', usage: { input: 1000, output: 100 } });
      const id = requestId();
      const message = await ask(id, stream);
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello from Claude on Bedrock.' })]);
      const sent = bedrock.lastRequest!;
      expect(sent.path).toBe(`/model/${encodeURIComponent(BEDROCK_MODEL)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`);
      expect(sent.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/eu-west-1\/bedrock\/aws4_request/,
      );
      expect(sent.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 300 });
      expect(sent.body).not.toHaveProperty('model');
      expect(anthropic.requests).toHaveLength(0);
      // $3/M × 1000 + $15/M × 100: Anthropic's price, whichever cloud served.
      await expectChargedExactly(h, a, id, 4500n);
    },
  );

  test('a throttled Bedrock deployment fails over to Anthropic itself', async () => {
    bedrock.script({ status: 429 });
    anthropic.script({ text: 'Hello from Anthropic directly.', usage: { input: 1000, output: 100 } });
    const id = requestId();
    const message = await ask(id, true);
    expect(message.content).toEqual([expect.objectContaining({ text: 'Hello from Anthropic directly.' })]);
    expect(anthropic.lastRequest!.body.model).toBe('claude-sonnet-4-5-20250929');
    await expectChargedExactly(h, a, id, 4500n);
  });

  test('an exception inside the stream after content is the stream error, not retried, charged for what was delivered', async () => {
    const reply: FakeBedrockReply = {
      text: 'A long answer that the model stream breaks off.',
      streamException: 'modelStreamErrorException',
    };
    bedrock.script(reply);
    const id = requestId();
    await expect(ask(id, true)).rejects.toThrow(/modelStreamErrorException/);
    expect(anthropic.requests).toHaveLength(0);
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage.map((u) => u.status)).toEqual(['partial']);
  });

  test("token counting: Bedrock's CountTokens for the foundation model, the InvokeModel body in base64; free", async () => {
    bedrock.script({ countTokens: 456 });
    const weather = { name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
    const before = await accountMoney(h.db, a.accountId);
    const id = requestId();
    const counted = await a.anthropic.messages.countTokens(
      { model: 'claude-sonnet-4-5', system: 'Be brief.', messages: [{ role: 'user', content: 'How many tokens?' }], tools: [weather] },
      withId(id),
    );
    expect(counted).toEqual({ input_tokens: 456 });
    const sent = bedrock.lastRequest!;
    // CountTokens takes the foundation model's id: the inference profile's `us.` is dropped.
    expect(sent.path).toBe(`/model/${encodeURIComponent('anthropic.claude-sonnet-4-5-20250929-v1:0')}/count-tokens`);
    expect(sent.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/eu-west-1\/bedrock\/aws4_request/,
    );
    expect(Object.keys(sent.body)).toEqual(['input']);
    const invoke = JSON.parse(Buffer.from(sent.body.input.invokeModel.body, 'base64').toString('utf8'));
    expect(invoke).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', system: 'Be brief.', tools: [weather] });
    expect(invoke).not.toHaveProperty('model');
    expect(invoke).not.toHaveProperty('stream');
    expect(anthropic.requests).toHaveLength(0);
    expect((await accountMoney(h.db, a.accountId)).balance).toBe(before.balance);
    const { rows } = await h.db.query('select count(*)::int as n from usage_records where request_id = $1', [id]);
    expect(rows[0].n).toBe(0);
  });

  test("a model Bedrock cannot count: its ValidationException is the count's vendor error (502), nothing recorded", async () => {
    bedrock.script({ status: 400, errorMessage: "The provided model doesn't support counting tokens." });
    const id = requestId();
    await expect(
      a.anthropic.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }, withId(id)),
    ).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/counting tokens/) });
    expect(bedrock.lastRequest!.path).toMatch(/\/count-tokens$/);
    expect(anthropic.requests).toHaveLength(0);
    const { rows } = await h.db.query('select count(*)::int as n from usage_records where request_id = $1', [id]);
    expect(rows[0].n).toBe(0);
  });

  test('a request signed with another secret is refused (403 InvalidSignatureException): the fake checks every signature', async () => {
    const wrong = await startFakeBedrock({ secretAccessKey: 'another-secret-entirely-0000000000000000', region: 'eu-west-1' });
    try {
      // Same credentials as configured, but this fake expects another secret: the signature cannot match.
      wrong.script({ text: 'never' });
      const dirWrong = mkdtempSync(join(tmpdir(), 'tollgate-clouds-wrong-'));
      const file = join(dirWrong, 'catalog.json');
      writeFileSync(
        file,
        JSON.stringify({
          vendors: { bedrock_eu: { protocol: 'bedrock', base_url: wrong.url, region: 'eu-west-1' } },
          models: [
            {
              kind: 'text',
              id: 'anthropic/claude-haiku-4-5',
              vendor: 'bedrock_eu',
              vendor_model_id: 'anthropic.claude-haiku-4-5-20251001-v1:0',
              created: 1,
              context_length: 200000,
              max_output_tokens: 8192,
              pricing: { input: '1.00', output: '5.00' },
            },
          ],
        }),
      );
      const other = await startTextHarness({
        TOLLGATE_CATALOG: file,
        BEDROCK_EU_ACCESS_KEY_ID: bedrock.accessKeyId,
        BEDROCK_EU_SECRET_ACCESS_KEY: bedrock.secretAccessKey,
      });
      try {
        const account = await textAccount(other.t);
        await expect(
          account.anthropic.messages.create({
            model: 'anthropic/claude-haiku-4-5',
            max_tokens: 50,
            messages: [{ role: 'user', content: 'Hi' }],
          }),
        ).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/signature/) });
        expect(wrong.requests).toHaveLength(1);
      } finally {
        await other.stop();
        rmSync(dirWrong, { recursive: true, force: true });
      }
    } finally {
      await wrong.close();
    }
  });
});
