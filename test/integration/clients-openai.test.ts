import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { startTextHarness, textAccount, type TextAccount, type TextHarness } from '../support/text';
import { SseDecoder } from '../../src/protocols/sse-parse';

/**
 * The requests real OpenAI-side clients send (Codex, the Agents SDK, the AI SDK's openai
 * provider, LangChain's ChatOpenAI, the openai SDK), captured by `scripts/clients-openai.mjs
 * --capture` and kept in test/fixtures/clients/<client>-<version>/ (docs/clients-openai.md),
 * replayed byte for byte: each is served as it was when captured, on the sandbox model it
 * named and on models served by the OpenAI (both upstreams), Anthropic and Gemini fakes, with
 * a complete answer in its format; or refused by design, with the status and the field its
 * capture recorded.
 */

interface Fixture {
  client: string;
  scenario: string;
  method: string;
  path: string;
  body?: Record<string, unknown>;
  captured: { status: number; code?: string; field?: string };
}

const DIR = join(__dirname, '..', 'fixtures', 'clients');
const FIXTURES: Array<[string, Fixture]> = readdirSync(DIR).flatMap((client) =>
  readdirSync(join(DIR, client))
    .filter((file) => file.endsWith('.json'))
    .map((file): [string, Fixture] => [`${client}/${file.replace(/\.json$/, '')}`, JSON.parse(readFileSync(join(DIR, client, file), 'utf8')) as Fixture])
    // The Messages clients' captures (another shape) are replayed by clients-anthropic.test.ts.
    .filter(([, fixture]) => fixture.captured !== undefined),
);
const TEXT_PATHS = ['/v1/chat/completions', '/v1/responses'];
const isText = (fixture: Fixture) => TEXT_PATHS.includes(fixture.path);

/** Models served by the fakes: OpenAI through its Chat and its Responses upstream, Claude, Gemini. */
const VENDOR_MODELS = ['openai/gpt-4o-mini', 'openai/o4-mini', 'anthropic/claude-sonnet-4-5', 'google/gemini-2.5-flash'];

let openai: FakeVendor<FakeOpenAIReply>;
let anthropic: FakeVendor<FakeAnthropicReply>;
let gemini: FakeVendor<FakeGeminiReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  h = await startTextHarness({
    OPENAI_API_KEY: openai.apiKey!,
    OPENAI_BASE_URL: openai.url,
    ANTHROPIC_API_KEY: anthropic.apiKey!,
    ANTHROPIC_BASE_URL: anthropic.url,
    GEMINI_API_KEY: gemini.apiKey!,
    GEMINI_BASE_URL: gemini.url,
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

async function replay(fixture: Fixture, body = fixture.body): Promise<{ status: number; contentType: string; text: string }> {
  const res = await fetch(`${h.t.url}${fixture.path}`, {
    method: fixture.method,
    headers: { authorization: `Bearer ${a.secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The answer is complete in its format: a whole object, or a stream that ends as it should (no error event). */
function expectComplete(fixture: Fixture, answer: { status: number; contentType: string; text: string }): void {
  expect({ status: answer.status, text: answer.status === 200 ? '' : answer.text }).toEqual({ status: 200, text: '' });
  if (!isText(fixture)) return;
  const chat = fixture.path === '/v1/chat/completions';
  if (!answer.contentType.startsWith('text/event-stream')) {
    const body = JSON.parse(answer.text) as Record<string, any>;
    if (chat) expect(body).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: expect.stringMatching(/^(stop|tool_calls|length)$/) }] });
    else expect(body).toMatchObject({ object: 'response', status: expect.stringMatching(/^(completed|incomplete)$/) });
    return;
  }
  const decoder = new SseDecoder();
  const frames = [...decoder.push(answer.text), ...decoder.end()];
  if (chat) {
    expect(frames.at(-1)!.data).toBe('[DONE]');
    expect(frames.some((frame) => frame.data !== '[DONE]' && 'error' in (JSON.parse(frame.data) as object))).toBe(false);
  } else {
    expect(frames.map((frame) => (JSON.parse(frame.data) as { type: string }).type)).not.toContain('error');
    expect(['response.completed', 'response.incomplete']).toContain((JSON.parse(frames.at(-1)!.data) as { type: string }).type);
  }
}

/** Refused by design: the status of the capture, and the field it named, first in the message. */
function expectRefusedAsCaptured(fixture: Fixture, answer: { status: number; text: string }): void {
  const { error } = JSON.parse(answer.text) as { error: { code: string; message: string; details: { field?: string } } };
  expect({ status: answer.status, code: error.code, field: error.details.field }).toEqual({ status: fixture.captured.status, code: fixture.captured.code, field: fixture.captured.field });
  expect(error.message.startsWith(`${fixture.captured.field} `)).toBe(true);
}

test('the fixtures cover every client, served and refused', () => {
  const clients = new Set(FIXTURES.map(([name]) => name.split('-')[0]));
  expect([...clients].sort()).toEqual(['agents', 'ai', 'codex', 'langchain', 'openai']);
  expect(FIXTURES.filter(([, fixture]) => fixture.captured.status >= 400).every(([, fixture]) => fixture.captured.field !== undefined)).toBe(true);
});

describe.each(FIXTURES)('%s', (_name, fixture) => {
  test(`${fixture.method} ${fixture.path} on the model it names, as captured`, async () => {
    const answer = await replay(fixture);
    if (fixture.captured.status >= 400) expectRefusedAsCaptured(fixture, answer);
    else expectComplete(fixture, answer);
  });

  if (!isText(fixture)) return;
  test.each(VENDOR_MODELS)('on %s', async (model) => {
    const answer = await replay(fixture, { ...fixture.body, model });
    if (fixture.captured.status >= 400) expectRefusedAsCaptured(fixture, answer);
    else expectComplete(fixture, answer);
  });
});
