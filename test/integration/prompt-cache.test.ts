import type Anthropic from '@anthropic-ai/sdk';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic';
import { fakeTokens } from '../fakes/anthropic-cache';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import {
  expectChargedExactly,
  requestId,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * Prompt-cache breakpoints over real HTTP (docs/api.md, "Cache breakpoints"): Claude Code's
 * `cache_control` marks, replayed from its captured requests, reach Anthropic on the same
 * blocks, so Anthropic writes the cache on one turn and reads it on the next, and Tollgate
 * charges exactly the cache-write, then the cache-read prices. The Anthropic fake bills cache
 * reads and writes as Anthropic does (test/fakes/anthropic-cache.ts).
 */
jest.setTimeout(60_000);

/** A captured request (test/integration/clients.test.ts reads the same files). */
interface Fixture {
  file: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}

const CLAUDE_CODE = path.join(__dirname, '..', 'fixtures', 'clients', 'claude-code-2.1.332');
const fixtures: Fixture[] = readdirSync(CLAUDE_CODE)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ file: name, ...(JSON.parse(readFileSync(path.join(CLAUDE_CODE, name), 'utf8')) as Omit<Fixture, 'file'>) }));
const CLAUDE = 'anthropic/claude-sonnet-4-5';

let anthropic: FakeAnthropic;
let openai: FakeVendor<FakeOpenAIReply>;
let h: TextHarness;
let a: TextAccount;

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
  h = await startTextHarness({
    ANTHROPIC_API_KEY: anthropic.apiKey!,
    ANTHROPIC_BASE_URL: anthropic.url,
    OPENAI_API_KEY: openai.apiKey!,
    OPENAI_BASE_URL: openai.url,
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([anthropic?.close(), openai?.close()]);
});
beforeEach(() => {
  anthropic.script();
  anthropic.promptCache.clear();
  openai.script();
});

/** Replays a captured request as Claude Code sent it (its key replaced by the test account's). */
async function replay(fixture: Fixture, body: Record<string, unknown>) {
  const response = await fetch(`${h.t.url}${fixture.path}`, {
    method: 'POST',
    headers: { ...fixture.headers, 'x-api-key': a.secret },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A marked part: its breakpoint and what it ends with (a text, a tool's name, a tool use's id). */
interface Mark {
  cacheControl: unknown;
  end: string;
}

type Part = Record<string, any>;

function ending(part: Part): string {
  if (part.type === 'tool_result') return `tool_result ${part.tool_use_id}`;
  if (part.type === 'tool_use') return `tool_use ${part.id}`;
  if (part.type === 'text') return String(part.text);
  return `tool ${part.name}`;
}

const marks = (parts: Part[]): Mark[] =>
  parts.filter((part) => part.cache_control).map((part) => ({ cacheControl: part.cache_control, end: ending(part) }));

/** Same breakpoints in the same order, each on a part that ends as the client's did (text blocks before a mark may be joined to it). */
function expectSameMarks(sent: Mark[], expected: Mark[]): void {
  expect(sent.map((mark) => mark.cacheControl)).toEqual(expected.map((mark) => mark.cacheControl));
  sent.forEach((mark, i) => expect({ i, endsAsSent: mark.end.endsWith(expected[i]!.end) }).toEqual({ i, endsAsSent: true }));
}
const blocksOf = (content: unknown): Part[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Part[]));

/** The client's marks in the order Anthropic caches the prompt once Tollgate hoists the conversation's system messages into `system`. */
function clientMarks(body: Part): Mark[] {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const system = [...blocksOf(body.system ?? []), ...messages.filter((m) => m.role === 'system').flatMap((m) => blocksOf(m.content))];
  return marks([...(body.tools ?? []), ...system, ...messages.filter((m) => m.role !== 'system').flatMap((m) => blocksOf(m.content))]);
}

/** The marks of the request Anthropic received, in its cache order (tools, system, messages). */
const sentMarks = (body: Part): Mark[] =>
  marks([
    ...(body.tools ?? []),
    ...(Array.isArray(body.system) ? body.system : []),
    ...(body.messages as Part[]).flatMap((m) => blocksOf(m.content)),
  ]);

describe('Claude Code: its breakpoints reach Anthropic on the same blocks', () => {
  test.each(fixtures.map((f) => [f.file, f] as const))('%s', async (_file, fixture) => {
    const expected = clientMarks(fixture.body);
    expect(expected.length).toBeGreaterThanOrEqual(3); // its system prompt (2) and its last message

    const first = await replay(fixture, { ...fixture.body, model: CLAUDE });
    expect(first.status).toBe(200);
    expect(first.text).toContain('event: message_stop');
    expectSameMarks(sentMarks(anthropic.lastRequest!.body), expected);
    // Nothing cached yet: the whole prompt up to the last breakpoint is written.
    const written = anthropic.lastRequest!;
    expect(first.text).toMatch(/"cache_read_input_tokens":0/);

    // The same turn again (a retry, a second session): Anthropic reads the prefix back.
    const second = await replay(fixture, { ...fixture.body, model: CLAUDE });
    expect(second.status).toBe(200);
    expect(JSON.stringify(anthropic.lastRequest!.body)).toBe(JSON.stringify(written.body));
    const delta = second.text.split('\n').find((line) => line.startsWith('data: {"type":"message_delta"'))!;
    const usage = JSON.parse(delta.slice('data: '.length)).usage;
    expect(usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(usage.cache_creation_input_tokens).toBe(0);
  });

  test('on another vendor the breakpoints are hints: none reaches OpenAI, each is named in x-service-dropped-hints', async () => {
    const fixture = fixtures.find((f) => f.file === 'tool-loop-2.json')!;
    const answer = await replay(fixture, { ...fixture.body, model: 'openai/gpt-4o-mini' });
    expect(answer.status).toBe(200);
    expect(JSON.stringify(openai.lastRequest!.body)).not.toContain('cache_control');
    const hints = answer.headers.get('x-service-dropped-hints')!.split(', ');
    expect(hints).toEqual(
      expect.arrayContaining(['system[1].cache_control', 'system[2].cache_control', 'messages[3].content[0].cache_control']),
    );
  });
});

describe('Chat Completions: cache_control on text parts and tools (LiteLLM and OpenRouter clients)', () => {
  const chatBody = (model: string) => ({
    model,
    max_tokens: 200,
    tools: [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
        cache_control: { type: 'ephemeral', ttl: '1h' },
      },
    ],
    messages: [
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You answer weather questions.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Today is Monday.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Oslo?', cache_control: { type: 'ephemeral' } }] },
    ],
  });
  const post = (body: unknown) =>
    fetch(`${h.t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('an Anthropic model gets them on the same tool and blocks; a second request reads the cache', async () => {
    const first = await post(chatBody(CLAUDE));
    expect(first.status).toBe(200);
    const sent = anthropic.lastRequest!.body;
    expect(sent.tools[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(sent.system).toEqual([
      { type: 'text', text: 'You answer weather questions.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Today is Monday.' },
    ]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Oslo?', cache_control: { type: 'ephemeral' } }] }]);
    expect(
      ((await first.json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } }).usage.prompt_tokens_details.cached_tokens,
    ).toBe(0);
    const second = await post(chatBody(CLAUDE));
    expect(
      ((await second.json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } }).usage.prompt_tokens_details.cached_tokens,
    ).toBeGreaterThan(0);
  });

  test('an OpenAI model is served without them (OpenAI caches prompts on its own)', async () => {
    const answer = await post(chatBody('openai/gpt-4o-mini'));
    expect(answer.status).toBe(200);
    expect(JSON.stringify(openai.lastRequest!.body)).not.toContain('cache_control');
    // The text is the same as without marks: the runs are separate messages.
    expect(openai.lastRequest!.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'You answer weather questions.',
      'Today is Monday.',
      'Oslo?',
    ]);
  });
});

describe('golden: a two-turn Claude Code-like conversation is charged the cache write, then the cache read', () => {
  // The fake counts a token per word of a block's strings (fakeTokens). Worked out by hand:
  //   tool Read: name 1 + description 7 + property description 2 + required 1 = 11 tokens
  //   system: the attribution header, 3 words, joined with the 1-hour-marked prompt's 4 + 2 × 1,000 = 2,007 tokens
  //   turn 1 user: reminder 3 + prompt 3 = 6 tokens (one block: its breakpoint is on its last text)
  //   turn 1 answer 'README says hello.': 3 tokens; turn 2 user: 4 tokens
  const tools: Anthropic.Tool[] = [
    {
      name: 'Read',
      description: 'Read a file from the local filesystem.',
      input_schema: {
        type: 'object',
        properties: { file_path: { type: 'string', description: 'Absolute path' } },
        required: ['file_path'],
      },
    },
  ];
  const system: Anthropic.TextBlockParam[] = [
    { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=cli;' },
    { type: 'text', text: `You are an agent.${' Be exact.'.repeat(1_000)}`, cache_control: { type: 'ephemeral', ttl: '1h' } },
  ];
  const firstUser: Anthropic.MessageParam = {
    role: 'user',
    content: [
      { type: 'text', text: 'Reminder: be brief.' },
      { type: 'text', text: 'Summarise README.md please.', cache_control: { type: 'ephemeral' } },
    ],
  };

  test('turn 1 writes 2,018 tokens for an hour and 6 for 5 minutes; turn 2 reads 2,024 and writes 7', async () => {
    expect(fakeTokens(tools[0])).toBe(11);
    expect(fakeTokens(system)).toBe(3 + 2_004);

    // Turn 1, streamed as Claude Code streams: nothing cached yet.
    anthropic.script({ text: 'README says hello.' });
    const id1 = requestId();
    const turn1 = await a.anthropic.messages
      .stream({ model: CLAUDE, max_tokens: 1_000, tools, system, messages: [firstUser] }, withId(id1))
      .finalMessage();
    expect(turn1.usage).toMatchObject({
      input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 2_024,
      output_tokens: 5,
    });
    // Tools and system (11 + 2,007 = 2,018) × $6.00 (1-hour write) = 12,108; the user turn 6 × $3.75 = 22.5;
    // output 5 (the fake's quarter of 18 characters, rounded up) × $15 = 75. 12,205.5, rounded once: 12,206.
    const money1 = await expectChargedExactly(h, a, id1, 12_206n);
    expect(money1.usage[0]).toMatchObject({
      input_tokens: 2_024,
      cached_input_tokens: 0,
      cache_write_5m_input_tokens: 6,
      cache_write_1h_input_tokens: 2_018,
      output_tokens: 5,
    });

    // Turn 2: the first user turn is no longer marked, the new last one is.
    anthropic.script({ text: 'The licence is MIT.' });
    const id2 = requestId();
    const turn2 = await a.anthropic.messages
      .stream(
        {
          model: CLAUDE,
          max_tokens: 1_000,
          tools,
          system,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Reminder: be brief.' },
                { type: 'text', text: 'Summarise README.md please.' },
              ],
            },
            { role: 'assistant', content: [{ type: 'text', text: turn1.content[0]!.type === 'text' ? turn1.content[0]!.text : '' }] },
            { role: 'user', content: [{ type: 'text', text: 'Thanks, and the licence?', cache_control: { type: 'ephemeral' } }] },
          ],
        },
        withId(id2),
      )
      .finalMessage();
    expect(turn2.usage).toMatchObject({
      input_tokens: 0,
      cache_read_input_tokens: 2_024,
      cache_creation_input_tokens: 7,
      output_tokens: 5,
    });
    // Read 2,024 × $0.30 = 607.2; written 3 + 4 = 7 × $3.75 = 26.25; output 5 × $15 = 75. 708.45, rounded once: 708.
    const money2 = await expectChargedExactly(h, a, id2, 708n);
    expect(money2.usage[0]).toMatchObject({
      input_tokens: 2_031,
      cached_input_tokens: 2_024,
      cache_write_5m_input_tokens: 7,
      cache_write_1h_input_tokens: 0,
      output_tokens: 5,
    });
    // Uncached, as before breakpoints reached Anthropic, turn 2 would have cost (2,031 × $3) + 75 = 6,168.
  });
});
