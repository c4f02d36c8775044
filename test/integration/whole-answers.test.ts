import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findModel } from '../../src/domain/catalog/catalog';
import { Cancellation } from '../../src/domain/generation/cancellation';
import { isWholeAnswer, type CanonicalEvent, type ProviderEvent, type WholeAnswer } from '../../src/domain/generation/canonical';
import type { DecodedTextRequest } from '../../src/domain/generation/service';
import { StickyRoutes } from '../../src/domain/routing/affinity';
import { Router } from '../../src/domain/routing/failover';
import { DeploymentHealth } from '../../src/domain/routing/health';
import type { KeyPrincipal } from '../../src/domain/shared/principal';
import { decodeMessagesIngress } from '../../src/protocols/anthropic-messages/decode-request';
import { encodeMessagesResponse } from '../../src/protocols/anthropic-messages/encode-answer';
import { collectEvents, type AnswerMeta } from '../../src/protocols/collect';
import { decodeChatIngress } from '../../src/protocols/openai-chat/decode-request';
import { encodeChatResponse } from '../../src/protocols/openai-chat/encode-answer';
import { decodeResponsesIngress } from '../../src/protocols/openai-responses/decode-request';
import { encodeResponsesResponse } from '../../src/protocols/openai-responses/encode-answer';
import { createProviderRegistry } from '../../src/providers/registry';
import { startFakeBedrock, type FakeBedrockReply } from '../fakes/bedrock';
import type { FakeVendor } from '../fakes/openai';
import { startFakeVertex, testServiceAccount, type FakeVertex } from '../fakes/vertex';
import {
  requestId,
  settledMoneyOf,
  startTextHarness,
  textAccount,
  type RequestMoney,
  type TextAccount,
  type TextHarness,
} from '../support/text';
import { SCRIPTED_ANSWERS } from '../support/scripted-answers';
import { textHarnessOnFakes } from '../support/vendor-fakes';

/**
 * A non-streamed answer is delivered whole (TextGeneration.allEvents: one promise for the vendor's
 * answer and its events) instead of event by event (TextGeneration.events, as a stream is read).
 * The fast path must give exactly the general path's answer and bill: each case runs the same
 * request through both, on the real pipeline, vendor fakes and PostgreSQL, and compares the
 * events, the encoded answer and what was charged. Vertex AI (Claude and Gemini) and Bedrock
 * run on a second gateway whose catalog serves those models from those clouds directly.
 */

const on = textHarnessOnFakes();

/** A gateway whose Claude and Gemini models are served by Vertex AI and Bedrock, not by Anthropic or Google. */
const clouds = {} as { h: TextHarness; a: TextAccount; vertex: FakeVertex; bedrock: FakeVendor<FakeBedrockReply>; dir: string };

beforeAll(async () => {
  const [vertex, bedrock] = await Promise.all([startFakeVertex((uri) => testServiceAccount(uri)), startFakeBedrock()]);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-whole-'));
  const file = join(dir, 'catalog.json');
  const model = (id: string, vendor: string, vendorModelId: string, pricing: { input: string; output: string }) => ({
    kind: 'text',
    id,
    vendor,
    vendor_model_id: vendorModelId,
    created: 1759104000,
    context_length: 200000,
    max_output_tokens: 64000,
    pricing,
  });
  writeFileSync(
    file,
    JSON.stringify({
      vendors: {
        vertex_us: { protocol: 'vertex', base_url: vertex.url, region: 'us-east5' },
        bedrock_us: { protocol: 'bedrock', base_url: bedrock.url, region: 'us-east-1' },
      },
      models: [
        model('anthropic/claude-sonnet-4-5', 'vertex_us', 'claude-sonnet-4-5@20250929', { input: '3.00', output: '15.00' }),
        model('google/gemini-2.5-flash', 'vertex_us', 'gemini-2.5-flash', { input: '0.30', output: '2.50' }),
        model('meta/llama-3.3-70b-instruct', 'vertex_us', 'meta/llama-3.3-70b-instruct-maas', { input: '0.72', output: '0.72' }),
        model('anthropic/claude-haiku-4-5', 'bedrock_us', 'us.anthropic.claude-haiku-4-5-20251001-v1:0', { input: '1.00', output: '5.00' }),
        {
          ...model('anthropic/claude-opus-4-1', 'vertex_us', 'claude-opus-4-1@20250805', { input: '15.00', output: '75.00' }),
          deployments: [
            { vendor: 'vertex_us', vendor_model_id: 'claude-opus-4-1@20250805' },
            { vendor: 'bedrock_us', vendor_model_id: 'us.anthropic.claude-opus-4-1-20250805-v1:0', priority: 1 },
          ],
        },
      ],
    }),
  );
  const h = await startTextHarness({
    TOLLGATE_CATALOG: file,
    VERTEX_US_CREDENTIALS: vertex.account.json,
    BEDROCK_US_ACCESS_KEY_ID: bedrock.accessKeyId,
    BEDROCK_US_SECRET_ACCESS_KEY: bedrock.secretAccessKey,
  });
  Object.assign(clouds, { h, a: await textAccount(h.t), vertex, bedrock, dir });
});

afterAll(async () => {
  await clouds.h?.stop();
  await Promise.all([clouds.vertex?.close(), clouds.bedrock?.close()]);
  if (clouds.dir) rmSync(clouds.dir, { recursive: true, force: true });
});

const META: AnswerMeta = { id: 'answer-1', model: 'm', created: 1_700_000_000, newId: (prefix) => `${prefix}fixed` };

/** The bill without the ids that differ between two requests. */
function bill(money: RequestMoney) {
  return { usage: money.usage.map(({ hold_id: _hold, ...row }) => row), charges: money.charges };
}

interface Case {
  name: string;
  /** The gateway it runs on (default: the one on the OpenAI, Anthropic and Gemini fakes). */
  gateway?: () => { h: TextHarness; a: TextAccount };
  decode(): DecodedTextRequest;
  encode(events: CanonicalEvent[]): unknown;
  script(): void;
}

const chat = (body: Record<string, unknown>) => () =>
  decodeChatIngress({ messages: [{ role: 'user', content: 'Hi there' }], ...body }).decoded;
const encodeChat = (events: CanonicalEvent[]) => encodeChatResponse(collectEvents(events), META);

const RESPONSES_BODY = { model: 'openai/o4-mini', input: 'Hi there' };

const CASES: Case[] = [
  {
    name: 'Chat on OpenAI Chat Completions: text',
    decode: chat({ model: 'openai/gpt-4o-mini' }),
    encode: encodeChat,
    script: () => SCRIPTED_ANSWERS.openaiText(on),
  },
  {
    name: 'Chat on OpenAI: tool calls, reasoning deltas, no reasoning count (the estimate from the tally)',
    decode: chat({ model: 'openai/gpt-4o-mini' }),
    encode: encodeChat,
    script: () => SCRIPTED_ANSWERS.openaiToolsAndReasoning(on),
  },
  {
    name: 'Chat on OpenAI: a refusal',
    decode: chat({ model: 'openai/gpt-4o-mini' }),
    encode: encodeChat,
    script: () => on.openai.script({ refusal: 'I cannot help with that.' }),
  },
  {
    name: 'Responses on OpenAI Responses (a reasoning model)',
    decode: () => decodeResponsesIngress(RESPONSES_BODY).decoded,
    encode: (events) => encodeResponsesResponse(collectEvents(events), { ...META, echo: decodeResponsesIngress(RESPONSES_BODY).echo }),
    script: () => on.openai.script({ text: 'Answered.', reasoning: 'A summary.', usage: { input: 20, output: 40, reasoning: 25 } }),
  },
  {
    name: 'Messages on Anthropic: thinking, text and a tool call',
    decode: () =>
      decodeMessagesIngress({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 2_000, messages: [{ role: 'user', content: 'Hi' }] })
        .decoded,
    encode: (events) => encodeMessagesResponse(collectEvents(events), META),
    script: () => SCRIPTED_ANSWERS.anthropicThinkingTextTool(on),
  },
  {
    name: 'Chat on Gemini: thoughts and text',
    decode: chat({ model: 'google/gemini-2.5-flash' }),
    encode: encodeChat,
    script: () => SCRIPTED_ANSWERS.geminiThoughtsAndText(on),
  },
  {
    name: 'Messages on Vertex AI Claude (rawPredict)',
    gateway: () => clouds,
    decode: () =>
      decodeMessagesIngress({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 2_000, messages: [{ role: 'user', content: 'Hi' }] })
        .decoded,
    encode: (events) => encodeMessagesResponse(collectEvents(events), META),
    script: () => clouds.vertex.script({ text: 'Claude on Vertex, answered whole.', usage: { input: 40, output: 12 } }),
  },
  {
    name: 'Chat on Vertex AI Claude',
    gateway: () => clouds,
    decode: chat({ model: 'anthropic/claude-sonnet-4-5' }),
    encode: encodeChat,
    script: () => clouds.vertex.script({ text: 'Claude on Vertex, through Chat.', usage: { input: 22, output: 9 } }),
  },
  {
    name: 'Chat on Vertex AI Gemini (generateContent)',
    gateway: () => clouds,
    decode: chat({ model: 'google/gemini-2.5-flash' }),
    encode: encodeChat,
    script: () => clouds.vertex.script({ text: 'Gemini on Vertex, answered whole.', usage: { input: 15, output: 7 } }),
  },
  {
    name: 'Chat on a Vertex AI open model (its OpenAI-compatible endpoint)',
    gateway: () => clouds,
    decode: chat({ model: 'meta/llama-3.3-70b-instruct' }),
    encode: encodeChat,
    script: () => clouds.vertex.script({ text: 'Llama on Vertex, answered whole.', usage: { input: 18, output: 8 } }),
  },
  {
    name: 'Messages on Bedrock Claude (InvokeModel)',
    gateway: () => clouds,
    decode: () =>
      decodeMessagesIngress({ model: 'anthropic/claude-haiku-4-5', max_tokens: 2_000, messages: [{ role: 'user', content: 'Hi' }] })
        .decoded,
    encode: (events) => encodeMessagesResponse(collectEvents(events), META),
    script: () => clouds.bedrock.script({ text: 'Claude on Bedrock, answered whole.', usage: { input: 33, output: 11 } }),
  },
];

async function principal(gateway: { h: TextHarness; a: TextAccount } = on): Promise<KeyPrincipal> {
  return gateway.h.t.tollgate.services.auth.authenticateApiKey(gateway.a.secret);
}

function context(id: string) {
  return { signal: new Cancellation(), requestId: id };
}

describe.each(CASES)('$name', (c) => {
  test('the provider answers a non-streamed call whole, and a streamed one as a stream', () => {
    const { services } = (c.gateway?.() ?? on).h.t.tollgate;
    const decoded = c.decode();
    const model = findModel(services.catalog, decoded.modelId, 'text')!;
    // A registry of its own: nothing is sent (an answer's call starts on its first read).
    const provider = createProviderRegistry(services.vendors).forModel(model);
    const answer = (stream: boolean) =>
      provider.generate({ ...decoded.request, model, maxOutputTokens: 1_000, stream }, new Cancellation());
    expect(isWholeAnswer(answer(false))).toBe(true);
    expect(isWholeAnswer(answer(true))).toBe(false);
  });

  test('read whole and read event by event: the same events, answer and bill', async () => {
    const gateway = c.gateway?.() ?? on;
    const text = gateway.h.t.tollgate.services.text;
    c.script();
    const byEvent = requestId();
    const streamed = await text.start(await principal(gateway), c.decode(), context(byEvent));
    const eventByEvent: CanonicalEvent[] = [];
    for await (const event of streamed.events) eventByEvent.push(event);

    c.script();
    const atOnce = requestId();
    const whole = await (await text.start(await principal(gateway), c.decode(), context(atOnce))).allEvents();

    expect(whole).toEqual(eventByEvent);
    expect(whole.at(-1)?.type).toBe('finish');
    expect(c.encode(whole)).toEqual(c.encode(eventByEvent));
    const [billByEvent, billWhole] = await Promise.all([settledMoneyOf(gateway.h.db, byEvent), settledMoneyOf(gateway.h.db, atOnce)]);
    expect(billByEvent.usage).toHaveLength(1);
    expect(bill(billWhole)).toEqual(bill(billByEvent));
  });
});

test('a vendor failure: the same error either way, and nothing charged', async () => {
  const text = on.h.t.tollgate.services.text;
  const failures: unknown[] = [];
  for (const read of ['events', 'allEvents'] as const) {
    on.openai.script({ status: 500, errorMessage: 'upstream broke' });
    const id = requestId();
    try {
      const generation = await text.start(await principal(), chat({ model: 'openai/gpt-4o-mini' })(), context(id));
      if (read === 'events') for await (const _ of generation.events);
      else await generation.allEvents();
      failures.push(null);
    } catch (error) {
      failures.push({ name: (error as Error).name, message: (error as Error).message });
    }
    const money = await settledMoneyOf(on.h.db, id);
    expect(money.charges).toEqual([]);
    expect(money.usage.map((row) => [row.status, row.cost_micro])).toEqual([['failed', '0']]);
  }
  expect(failures[0]).not.toBeNull();
  expect(failures[1]).toEqual(failures[0]);
});

test('a routed model read whole fails over as read event by event: the same events, from the deployment that served', async () => {
  const { services } = clouds.h.t.tollgate;
  const decode = () =>
    decodeMessagesIngress({ model: 'anthropic/claude-opus-4-1', max_tokens: 2_000, messages: [{ role: 'user', content: 'Hi' }] }).decoded;
  const model = findModel(services.catalog, decode().modelId, 'text')!;
  expect(model.routed).toBe(true);
  // A router of its own: the gateway's breakers do not see these attempts.
  const provider = createProviderRegistry(services.vendors, {
    router: new Router(new DeploymentHealth(), new StickyRoutes(60_000)),
  }).forModel(model);
  const script = () => {
    clouds.vertex.script({ status: 503 });
    clouds.bedrock.script({ text: 'Claude on Bedrock, after Vertex AI failed.', usage: { input: 30, output: 9 } });
  };
  const answer = () => provider.generate({ ...decode().request, model, maxOutputTokens: 1_000, stream: false }, new Cancellation());

  script();
  const eventByEvent: ProviderEvent[] = [];
  for await (const event of answer()) eventByEvent.push(event);
  script();
  const routedAnswer = answer();
  expect(isWholeAnswer(routedAnswer)).toBe(true);
  const whole = await (routedAnswer as WholeAnswer).whole();

  expect(whole).toEqual(eventByEvent);
  expect(whole[0]).toEqual({ type: 'served-by', deployment: 'bedrock_us', vendor: 'bedrock_us', attempts: 2 });
  expect(whole.at(-1)?.type).toBe('finish');

  // Through the pipeline (which reads it whole): one charge, on the usage record of the deployment that served.
  script();
  const id = requestId();
  const events = await (await services.text.start(await principal(clouds), decode(), context(id))).allEvents();
  expect(events.at(-1)?.type).toBe('finish');
  const money = await settledMoneyOf(clouds.h.db, id);
  expect(money.usage).toHaveLength(1);
  expect(money.usage[0]!.status).toBe('ok');
  expect(money.charges).toHaveLength(1);
  const { rows } = await clouds.h.db.query<{ deployment: string }>('select deployment from usage_records where request_id = $1', [id]);
  expect(rows).toEqual([{ deployment: 'bedrock_us' }]);
});
