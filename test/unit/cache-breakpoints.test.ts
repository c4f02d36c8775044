import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { CanonicalRequest } from '../../src/domain/generation/canonical';
import { ApiError } from '../../src/domain/shared/errors';
import { decodeMessagesRequest } from '../../src/protocols/anthropic-messages/decode-request';
import { toMessagesRequest } from '../../src/protocols/anthropic-messages/vendor-request';
import { textRuns } from '../../src/protocols/cache-breakpoints';
import { decodeChatRequest } from '../../src/protocols/openai-chat/decode-request';

/**
 * Prompt-cache breakpoints (docs/api.md, "Cache breakpoints"): a Messages client's
 * `cache_control` marks are kept on the canonical parts and put back on the same blocks of the
 * Anthropic request; Anthropic's limits on them are refused before anything is reserved.
 */

const catalog = builtinCatalog();
const model = (id: string): TextModel => findModel(catalog, id, 'text')!;
const SONNET = model('anthropic/claude-sonnet-4-5');

const cc = { type: 'ephemeral' as const };
const cc1h = { type: 'ephemeral' as const, ttl: '1h' as const };
const text = (t: string, cacheControl?: object) => ({ type: 'text', text: t, ...(cacheControl ? { cache_control: cacheControl } : {}) });
const weather = { name: 'get_weather', input_schema: { type: 'object' } };

const canonical = (body: Record<string, unknown>): CanonicalRequest => ({
  ...decodeMessagesRequest({ model: 'claude-sonnet-4-5', max_tokens: 1024, ...body }).request,
  model: SONNET,
  maxOutputTokens: 1024,
});
const toAnthropic = (body: Record<string, unknown>) => toMessagesRequest(canonical(body)).body;

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a 400 refusal');
}

describe('textRuns: a breakpoint ends a run of joined text parts', () => {
  test.each([
    ['no parts: one empty run', [], [{ text: '' }]],
    ['no breakpoint: the parts joined, as before', [{ text: 'a' }, { text: 'b' }], [{ text: 'a\nb' }]],
    [
      'a breakpoint on the last part: still one run',
      [{ text: 'a' }, { text: 'b', cacheBreakpoint: {} }],
      [{ text: 'a\nb', cacheBreakpoint: {} }],
    ],
    [
      'a breakpoint in the middle: two runs',
      [{ text: 'a' }, { text: 'b', cacheBreakpoint: { ttl: '1h' as const } }, { text: 'c' }],
      [{ text: 'a\nb', cacheBreakpoint: { ttl: '1h' } }, { text: 'c' }],
    ],
  ])('%s', (_name, parts, runs) => {
    expect(textRuns(parts)).toEqual(runs);
  });
});

describe('Messages → canonical → Anthropic: each breakpoint back on its block', () => {
  test('tools, system blocks, user text and a tool use: 4 breakpoints, 1-hour ones first', () => {
    const body = toAnthropic({
      system: [text('billing header'), text('You are an agent.', cc1h), text('Long instructions.')],
      tools: [weather, { ...weather, name: 'get_time', cache_control: cc1h }],
      messages: [
        { role: 'user', content: [text('Context.'), text('Question?', cc)] },
        {
          role: 'assistant',
          content: [
            text('Let me look.'),
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' }, cache_control: cc },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3°C' }, text('Thanks')] },
      ],
    });
    expect(body.tools).toEqual([
      { name: 'get_weather', input_schema: { type: 'object' } },
      { name: 'get_time', input_schema: { type: 'object' }, cache_control: cc1h },
    ]);
    // Text blocks up to a breakpoint are joined a line apart, as Tollgate joins unmarked blocks.
    expect(body.system).toEqual([
      { type: 'text', text: 'billing header\nYou are an agent.', cache_control: cc1h },
      { type: 'text', text: 'Long instructions.' },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Context.\nQuestion?', cache_control: cc }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' }, cache_control: cc },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '3°C' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  test('an assistant text and a tool result (its own mark, or one inside its content)', () => {
    const body = toAnthropic({
      messages: [
        { role: 'user', content: 'Go' },
        {
          role: 'assistant',
          content: [text('First.', cc), text('Second.'), { type: 'tool_use', id: 't', name: 'get_weather', input: {} }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: [text('a'), text('b', cc)] },
            { type: 'tool_result', tool_use_id: 'u', content: 'c', cache_control: cc },
          ],
        },
      ],
      tools: [weather],
    });
    // A breakpoint between two texts of a turn splits them; the turn's blocks stay in order.
    expect(body.messages[1]!.content).toEqual([
      text('First.', cc),
      text('Second.'),
      { type: 'tool_use', id: 't', name: 'get_weather', input: {} },
    ]);
    expect(body.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 't', content: 'a\nb', cache_control: cc },
      { type: 'tool_result', tool_use_id: 'u', content: 'c', cache_control: cc },
    ]);
  });

  test('without breakpoints the system prompt stays one string and no block is marked', () => {
    const body = toAnthropic({ system: [text('One.'), text('Two.')], messages: [{ role: 'user', content: [text('a'), text('b')] }] });
    expect(body.system).toBe('One.\nTwo.');
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a\nb' }] }]);
  });

  test('a system message in the conversation keeps its breakpoint on its own system block (Claude Code)', () => {
    const body = toAnthropic({
      system: [text('Agent.', cc)],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'system', content: [text('# Environment', cc)] },
      ],
    });
    expect(body.system).toEqual([text('Agent.', cc), text('# Environment', cc)]);
  });

  test("a top-level cache_control goes as sent, beside the blocks' own", () => {
    const body = toAnthropic({ cache_control: cc, system: [text('S', cc)], messages: [{ role: 'user', content: 'Hi' }] });
    expect(body.cache_control).toEqual(cc);
    expect(body.system).toEqual([text('S', cc)]);
  });
});

describe('refusals', () => {
  test.each([
    [
      'a ttl Anthropic does not have',
      { messages: [{ role: 'user', content: [text('x', { type: 'ephemeral', ttl: '2h' })] }] },
      'messages[0].content[0].cache_control.ttl',
    ],
    [
      'a type other than ephemeral',
      { system: [text('x', { type: 'persistent' })], messages: [{ role: 'user', content: 'Hi' }] },
      'system[0].cache_control.type',
    ],
    [
      'an unknown field in it',
      { tools: [{ ...weather, cache_control: { type: 'ephemeral', scope: 'global' } }], messages: [{ role: 'user', content: 'Hi' }] },
      'tools[0].cache_control.scope',
    ],
    ['an empty text block marked', { messages: [{ role: 'user', content: [text('', cc)] }] }, 'messages[0].content[0].cache_control'],
    [
      'a thinking block marked (Anthropic refuses it there)',
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's', cache_control: cc }] },
        ],
      },
      'messages[1].content[0].cache_control',
    ],
  ])('%s is a 400 naming the field', (_name, body, field) => {
    const error = refusal(() => canonical(body));
    expect(error.status).toBe(400);
    expect(error.details.field).toBe(field);
  });

  test('more than 4 breakpoints for Anthropic (a top-level cache_control takes one) is a 400 naming cache_control', () => {
    const four = { system: [text('a', cc), text('b', cc)], messages: [{ role: 'user', content: [text('c', cc), text('d', cc)] }] };
    expect(() => toAnthropic(four)).not.toThrow();
    const error = refusal(() => toAnthropic({ ...four, cache_control: cc }));
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ field: 'cache_control', limit: 4, breakpoints: 5 });
    expect(error.message).toContain('top-level cache_control takes one');
    expect(refusal(() => toAnthropic({ ...four, tools: [{ ...weather, cache_control: cc }] })).details.breakpoints).toBe(5);
  });

  test('a 1-hour breakpoint after a 5-minute one is a 400; 1-hour ones first is served', () => {
    const later = { system: [text('a', cc), text('b', cc1h)], messages: [{ role: 'user', content: 'Hi' }] };
    expect(refusal(() => toAnthropic(later)).details).toEqual({ field: 'cache_control' });
    expect(
      refusal(() =>
        toAnthropic({ tools: [{ ...weather, cache_control: cc }], system: [text('a', cc1h)], messages: [{ role: 'user', content: 'Hi' }] }),
      ).status,
    ).toBe(400);
    expect(() =>
      toAnthropic({
        system: [text('a', cc1h), text('b', { type: 'ephemeral', ttl: '5m' })],
        messages: [{ role: 'user', content: [text('c', cc)] }],
      }),
    ).not.toThrow();
  });
});

describe('Chat Completions: cache_control on text parts and tools, as LiteLLM and OpenRouter clients send it', () => {
  const chat = (extra: Record<string, unknown>) => decodeChatRequest({ model: 'anthropic/claude-sonnet-4-5', ...extra }).request;

  test('runs end at marked parts; a marked tool keeps its breakpoint; unmarked content decodes as before', () => {
    const request = chat({
      tools: [{ type: 'function', function: { name: 'get_weather' }, cache_control: cc1h }],
      messages: [
        { role: 'developer', content: [text('Rules.', cc1h), text('Date.')] },
        { role: 'user', content: [text('a'), text('b')] },
        {
          role: 'assistant',
          content: [text('Looking.', cc)],
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: [text('3°C', cc)] },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'system', content: 'Rules.', cacheBreakpoint: { ttl: '1h' } },
      { role: 'system', content: 'Date.' },
      { role: 'user', content: 'a\nb' },
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{}', kind: 'function' }],
        reasoning: [],
        cacheBreakpoint: {},
      },
      { role: 'tool', toolCallId: 'c1', content: '3°C', isError: false, cacheBreakpoint: {} },
    ]);
    expect(request.tools[0]).toMatchObject({ name: 'get_weather', cacheBreakpoint: { ttl: '1h' } });
  });

  test('a malformed mark is a 400 naming it', () => {
    const error = refusal(() => chat({ messages: [{ role: 'user', content: [text('x', { type: 'ephemeral', ttl: '1d' })] }] }));
    expect(error.details.field).toBe('messages[0].content[0].cache_control.ttl');
  });
});
