import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { textHarnessOnFakes } from '../support/vendor-fakes';
import { sseFrames } from '../support/text';
import type { FieldPolicy } from '../../src/protocols/field-policy';
import { CHAT_FIELD_POLICY } from '../../src/protocols/openai-chat/field-policy';
import { RESPONSES_FIELD_POLICY } from '../../src/protocols/openai-responses/field-policy';
import { MESSAGES_FIELD_POLICY, TOOL_FIELD_POLICY } from '../../src/protocols/anthropic-messages/field-policy';

/**
 * Client compatibility (docs/clients.md): the requests the real clients sent (Claude Code, Codex,
 * the Anthropic and openai SDKs, the AI SDK's anthropic and openai providers, the OpenAI Agents
 * SDK, LangChain's ChatAnthropic and ChatOpenAI), captured by `npm run test:clients -- --capture
 * test/fixtures/clients` and kept in test/fixtures/clients/<client>-<version>/, replayed with
 * their headers and bodies byte for byte:
 * - on the sandbox model they were captured on, and on models served by the OpenAI (Chat and
 *   Responses upstreams), Anthropic and Gemini fakes: each is served with a complete answer in
 *   its format, or refused by design with the status, code and field its capture recorded;
 * - every hint the answer names as dropped is one the client sent, by the name it sent it under;
 * - on the vendor whose protocol is the request's own (Messages: Claude, Chat: GPT, Responses: an
 *   OpenAI reasoning model), every passed-to-vendor field reaches the vendor as sent or is named
 *   as dropped; Messages' tool fields and its anthropic-beta and anthropic-version headers reach
 *   Anthropic.
 */

interface Fixture {
  client: string;
  version: string;
  scenario: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: Record<string, any>;
  captured: { status: number; code?: string; field?: string };
}

type Format = 'chat' | 'responses' | 'messages' | 'count' | 'other';

const DIR = join(__dirname, '..', 'fixtures', 'clients');
const FIXTURES: Array<[string, Fixture]> = readdirSync(DIR).flatMap((dir) =>
  readdirSync(join(DIR, dir))
    .filter((file) => file.endsWith('.json'))
    .map((file): [string, Fixture] => [
      `${dir}/${file.replace(/\.json$/, '')}`,
      JSON.parse(readFileSync(join(DIR, dir, file), 'utf8')) as Fixture,
    ]),
);

function formatOf(fixture: Fixture): Format {
  const path = fixture.path.split('?')[0];
  if (path === '/v1/chat/completions') return 'chat';
  if (path === '/v1/responses') return 'responses';
  if (path === '/v1/messages') return 'messages';
  if (path === '/v1/messages/count_tokens') return 'count';
  return 'other';
}

/** Models served by the fakes: OpenAI through its Chat and its Responses upstream, Claude, Gemini. */
const VENDOR_MODELS = ['openai/gpt-4o-mini', 'openai/o4-mini', 'anthropic/claude-sonnet-4-5', 'google/gemini-2.5-flash'];
/** The model whose vendor speaks each format's own protocol, and that format's table. */
const OWN: Partial<Record<Format, { model: string; policy: FieldPolicy }>> = {
  chat: { model: 'openai/gpt-4o-mini', policy: CHAT_FIELD_POLICY },
  responses: { model: 'openai/o4-mini', policy: RESPONSES_FIELD_POLICY },
  messages: { model: 'anthropic/claude-sonnet-4-5', policy: MESSAGES_FIELD_POLICY },
};

const on = textHarnessOnFakes();

interface Answer {
  status: number;
  contentType: string;
  dropped: string[];
  text: string;
}

/** Sends the fixture as its client did, with the test account's key where the client put its own. */
async function replay(fixture: Fixture, body = fixture.body): Promise<Answer> {
  const key: Record<string, string> =
    formatOf(fixture) === 'messages' || formatOf(fixture) === 'count'
      ? { 'x-api-key': on.a.secret }
      : { authorization: `Bearer ${on.a.secret}` };
  const res = await fetch(`${on.h.t.url}${fixture.path}`, {
    method: fixture.method,
    headers: { ...fixture.headers, ...key },
    body: body ? JSON.stringify(body) : undefined,
  });
  const dropped = res.headers.get('x-service-dropped-hints');
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    dropped: dropped ? dropped.split(', ') : [],
    text: await res.text(),
  };
}

/** The answer is complete in its format: a whole object, or a stream that ends as it should (no error event). */
function expectComplete(fixture: Fixture, answer: Answer): void {
  expect({ status: answer.status, text: answer.status === 200 ? '' : answer.text }).toEqual({ status: 200, text: '' });
  const format = formatOf(fixture);
  if (format === 'other') return;
  if (format === 'count') {
    expect((JSON.parse(answer.text) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    return;
  }
  if (!answer.contentType.startsWith('text/event-stream')) {
    const whole = {
      chat: { object: 'chat.completion' },
      responses: { object: 'response', status: expect.stringMatching(/^(completed|incomplete)$/) },
      messages: { type: 'message', role: 'assistant' },
    };
    expect(JSON.parse(answer.text)).toMatchObject(whole[format]);
    return;
  }
  const frames = sseFrames(answer.text);
  if (format === 'chat') {
    expect(frames.at(-1)!.data).toBe('[DONE]');
    expect(frames.some((frame) => frame.data !== '[DONE]' && 'error' in (JSON.parse(frame.data) as object))).toBe(false);
  } else if (format === 'responses') {
    expect(frames.map((frame) => (JSON.parse(frame.data) as { type: string }).type)).not.toContain('error');
    expect(['response.completed', 'response.incomplete']).toContain((JSON.parse(frames.at(-1)!.data) as { type: string }).type);
  } else {
    expect(frames.map((frame) => frame.event)).not.toContain('error');
    expect(frames.at(-1)!.event).toBe('message_stop');
  }
}

/** Refused by design: the status and code of the capture, and the field it named, first in the message (both error shapes carry `error`). */
function expectRefusedAsCaptured(fixture: Fixture, answer: Answer): void {
  const { error } = JSON.parse(answer.text) as { error: { code: string; message: string; details: { field?: string } } };
  expect({ status: answer.status, code: error.code, field: error.details.field }).toEqual({
    status: fixture.captured.status,
    code: fixture.captured.code,
    field: fixture.captured.field,
  });
  // The message names the field as the client sent it (its last part: `model`, `tools[0].type` → `type`).
  if (fixture.captured.field) expect(error.message).toContain(fixture.captured.field.split('.').at(-1));
}

function expectAsCaptured(fixture: Fixture, answer: Answer): void {
  if (fixture.captured.status >= 400) expectRefusedAsCaptured(fixture, answer);
  else expectComplete(fixture, answer);
}

/** A dropped hint names what the client sent: a header's value (`anthropic-beta=…`) or a path in the body (`tools[0].eager_input_streaming`). */
function sent(fixture: Fixture, name: string): boolean {
  const [header, value] = name.split('=');
  if (value !== undefined)
    return (fixture.headers[header!] ?? '')
      .split(',')
      .map((v) => v.trim())
      .includes(value);
  let at: unknown = fixture.body;
  for (const step of name.split(/[.[\]]+/).filter(Boolean))
    at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[step] : undefined;
  return at !== undefined && at !== null;
}

/** A passed field with nothing to act on is neither sent nor named (docs/api.md, the hint rule). */
function actsOn(body: Record<string, any>, field: string): boolean {
  const tools = (body.tools ?? []) as Array<{ type?: string }>;
  if (field === 'parallel_tool_calls') return tools.length > 0;
  if (field === 'max_tool_calls') return tools.some((tool) => tool.type === 'mcp');
  return true;
}

test('the fixtures cover every client, and one of them is refused by design', () => {
  const clients = new Set(FIXTURES.map(([, fixture]) => fixture.client));
  expect([...clients].sort()).toEqual([
    'agents',
    'ai-sdk-anthropic',
    'ai-sdk-openai',
    'anthropic-sdk',
    'claude-code',
    'codex',
    'langchain-anthropic',
    'langchain-openai',
    'openai',
  ]);
  expect(FIXTURES.filter(([, fixture]) => fixture.captured.status >= 400).every(([, fixture]) => fixture.captured.code !== undefined)).toBe(
    true,
  );
});

describe.each(FIXTURES)('%s', (_name, fixture) => {
  const format = formatOf(fixture);

  test(`${fixture.method} ${fixture.path} on the model it names, as captured`, async () => {
    const answer = await replay(fixture);
    expectAsCaptured(fixture, answer);
    for (const name of answer.dropped) expect({ name, sent: sent(fixture, name) }).toEqual({ name, sent: true });
  });

  // Refused for its model (an unknown id): another model would answer a different request.
  if (format === 'other' || fixture.captured.code === 'model_not_available') return;
  test.each(VENDOR_MODELS)('on %s', async (model) => {
    const answer = await replay(fixture, { ...fixture.body, model });
    expectAsCaptured(fixture, answer);
    for (const name of answer.dropped) expect({ name, sent: sent(fixture, name) }).toEqual({ name, sent: true });
  });

  const own = OWN[format];
  if (!own || fixture.captured.status >= 400) return;
  test(`on ${own.model}: every passed-to-vendor field reaches it as sent, or is named as dropped`, async () => {
    const fake = format === 'messages' ? on.anthropic : on.openai;
    const before = fake.requests.length;
    const answer = await replay(fixture, { ...fixture.body, model: own.model });
    expectComplete(fixture, answer);
    expect(fake.requests.length).toBe(before + 1);
    const upstream = fake.lastRequest!;
    const body = fixture.body!;
    for (const [field, disposition] of Object.entries(own.policy)) {
      if (
        disposition !== 'passed-to-vendor' ||
        body[field] === undefined ||
        body[field] === null ||
        !actsOn(body, field) ||
        answer.dropped.includes(field)
      )
        continue;
      expect({ field, value: upstream.body[field] }).toEqual({ field, value: body[field] });
    }
    if (format !== 'messages') return;
    const passedToolFields = Object.entries(TOOL_FIELD_POLICY)
      .filter(([, d]) => d === 'passed-to-vendor')
      .map(([key]) => key);
    for (const tool of (body.tools ?? []) as Array<Record<string, unknown>>) {
      const forwarded = (upstream.body.tools as Array<Record<string, unknown>>).find((t) => t.name === tool.name)!;
      for (const key of passedToolFields)
        if (tool[key] !== undefined)
          expect({ tool: tool.name, key, value: forwarded[key] }).toEqual({ tool: tool.name, key, value: tool[key] });
    }
    const sentBetas = String(upstream.headers['anthropic-beta'] ?? '').split(',');
    for (const beta of (fixture.headers['anthropic-beta'] ?? '').split(',').filter(Boolean)) expect(sentBetas).toContain(beta);
    if (fixture.headers['anthropic-version']) expect(upstream.headers['anthropic-version']).toBe(fixture.headers['anthropic-version']);
  });
});
