import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import type { FakeVendor } from '../fakes/openai';
import { MESSAGES_FIELD_POLICY, TOOL_FIELD_POLICY } from '../../src/protocols/anthropic-messages/field-policy';
import { sseFrames, startTextHarness, textAccount, type TextAccount, type TextHarness } from '../support/text';

/**
 * Client compatibility (docs/clients-anthropic.md): the request bodies and headers the real
 * Anthropic-format clients sent (Claude Code, the AI SDK's anthropic provider, LangChain's
 * ChatAnthropic, the Anthropic SDK), captured by `scripts/clients-anthropic.mjs --capture`, are
 * replayed against Tollgate: on the sandbox model they were captured on, and on a Claude model
 * served by the Anthropic fake, which must receive every field and header Tollgate passes to
 * Anthropic. Each is served, or refused by design as it was when captured.
 */

interface Fixture {
  file: string;
  client: string;
  version: string;
  scenario: string;
  capturedStatus: number;
  request: { method: 'POST'; path: string; headers: Record<string, string>; body: Record<string, any> };
}

const FIXTURES_DIR = path.join(__dirname, '..', 'fixtures', 'clients');
const ANTHROPIC_CLIENTS = /^(claude-code|anthropic-sdk|ai-sdk-anthropic|langchain-anthropic)-/;

function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURES_DIR)
    .filter((dir) => ANTHROPIC_CLIENTS.test(dir))
    .flatMap((dir) =>
      readdirSync(path.join(FIXTURES_DIR, dir))
        .filter((name) => name.endsWith('.json'))
        .map((name) => ({ file: `${dir}/${name}`, ...(JSON.parse(readFileSync(path.join(FIXTURES_DIR, dir, name), 'utf8')) as Omit<Fixture, 'file'>) })),
    );
}

const fixtures = loadFixtures();
const CLAUDE = 'anthropic/claude-sonnet-4-5';

let fake: FakeVendor<FakeAnthropicReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  h = await startTextHarness({ ANTHROPIC_API_KEY: fake.apiKey!, ANTHROPIC_BASE_URL: fake.url });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await fake?.close();
});
beforeEach(() => fake.script());

/** Replays a fixture as the client sent it (its key replaced by the test account's, as `x-api-key`). */
async function replay(fixture: Fixture, body: Record<string, unknown>): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${h.t.url}${fixture.request.path}`, {
    method: 'POST',
    headers: { ...fixture.request.headers, 'x-api-key': a.secret },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A served answer: a whole message or count, or a stream that ends with message_stop and has no error event. */
function expectServed(fixture: Fixture, answer: { status: number; text: string }): void {
  expect({ file: fixture.file, status: answer.status, body: answer.status === 200 ? '' : answer.text }).toEqual({ file: fixture.file, status: 200, body: '' });
  if (fixture.request.path.startsWith('/v1/messages/count_tokens')) {
    expect(JSON.parse(answer.text).input_tokens).toBeGreaterThan(0);
  } else if (fixture.request.body.stream === true) {
    const events = sseFrames(answer.text).map((frame) => frame.event);
    expect(events).not.toContain('error');
    expect(events.at(-1)).toBe('message_stop');
  } else {
    expect(JSON.parse(answer.text)).toMatchObject({ type: 'message', role: 'assistant' });
  }
}

test('the fixtures cover every Anthropic-format client', () => {
  expect(new Set(fixtures.map((f) => f.client))).toEqual(new Set(['claude-code', 'anthropic-sdk', 'ai-sdk-anthropic', 'langchain-anthropic']));
});

describe.each(fixtures.map((f) => [f.file, f] as const))('%s', (_file, fixture) => {
  test('on the sandbox model it was captured on: served, or refused as by design', async () => {
    const answer = await replay(fixture, fixture.request.body);
    if (fixture.capturedStatus >= 400) {
      // Refused by design (an unknown model, say): the same status, in Anthropic's shape with Tollgate's code inside.
      expect(answer.status).toBe(fixture.capturedStatus);
      const error = JSON.parse(answer.text);
      expect(error).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String), code: expect.any(String), details: expect.any(Object) } });
      return;
    }
    expectServed(fixture, answer);
  });

  if (fixture.capturedStatus >= 400) return;

  test('on a Claude model: served, with every field and header Tollgate passes to Anthropic', async () => {
    const before = fake.requests.length;
    const answer = await replay(fixture, { ...fixture.request.body, model: CLAUDE });
    expectServed(fixture, answer);
    expect(fake.requests.length).toBe(before + 1);
    const sent = fake.lastRequest!;
    const body = fixture.request.body;
    for (const [field, disposition] of Object.entries(MESSAGES_FIELD_POLICY)) {
      if (disposition !== 'passed-to-vendor' || body[field] === undefined || body[field] === null) continue;
      // top_k cannot go with thinking at Anthropic (dropped as temperature is).
      if (field === 'top_k' && sent.body.thinking) continue;
      expect({ field, value: sent.body[field] }).toEqual({ field, value: body[field] });
    }
    const passedToolFields = Object.entries(TOOL_FIELD_POLICY).filter(([, d]) => d === 'passed-to-vendor').map(([key]) => key);
    for (const tool of (body.tools ?? []) as Array<Record<string, unknown>>) {
      const forwarded = (sent.body.tools as Array<Record<string, unknown>>).find((t) => t.name === tool.name)!;
      for (const key of passedToolFields) if (tool[key] !== undefined) expect({ tool: tool.name, key, value: forwarded[key] }).toEqual({ tool: tool.name, key, value: tool[key] });
    }
    const betas = (fixture.request.headers['anthropic-beta'] ?? '').split(',').filter(Boolean);
    const sentBetas = String(sent.headers['anthropic-beta'] ?? '').split(',');
    for (const beta of betas) expect(sentBetas).toContain(beta);
    if (fixture.request.headers['anthropic-version']) expect(sent.headers['anthropic-version']).toBe(fixture.request.headers['anthropic-version']);
  });
});
