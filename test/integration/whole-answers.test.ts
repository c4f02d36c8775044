import { Cancellation } from '../../src/domain/generation/cancellation';
import type { CanonicalEvent } from '../../src/domain/generation/canonical';
import type { DecodedTextRequest } from '../../src/domain/generation/service';
import type { KeyPrincipal } from '../../src/domain/shared/principal';
import { decodeMessagesIngress } from '../../src/protocols/anthropic-messages/decode-request';
import { encodeMessagesResponse } from '../../src/protocols/anthropic-messages/encode-answer';
import { collectEvents, type AnswerMeta } from '../../src/protocols/collect';
import { decodeChatIngress } from '../../src/protocols/openai-chat/decode-request';
import { encodeChatResponse } from '../../src/protocols/openai-chat/encode-answer';
import { decodeResponsesIngress } from '../../src/protocols/openai-responses/decode-request';
import { encodeResponsesResponse } from '../../src/protocols/openai-responses/encode-answer';
import { requestId, settledMoneyOf, type RequestMoney } from '../support/text';
import { textHarnessOnFakes } from '../support/vendor-fakes';

/**
 * A non-streamed answer is delivered whole (TextGeneration.allEvents: one promise for the vendor's
 * answer and its events) instead of event by event (TextGeneration.events, as a stream is read).
 * The fast path must give exactly the general path's answer and bill: each case runs the same
 * request through both, on the real pipeline, vendor fakes and PostgreSQL, and compares the
 * events, the encoded answer and what was charged.
 */

const on = textHarnessOnFakes();

const META: AnswerMeta = { id: 'answer-1', model: 'm', created: 1_700_000_000, newId: (prefix) => `${prefix}fixed` };

/** The bill without the ids that differ between two requests. */
function bill(money: RequestMoney) {
  return { usage: money.usage.map(({ hold_id: _hold, ...row }) => row), charges: money.charges };
}

interface Case {
  name: string;
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
    script: () => on.openai.script({ text: 'A plain answer, several words long.', usage: { input: 12, output: 9, cached: 4 } }),
  },
  {
    name: 'Chat on OpenAI: tool calls, reasoning deltas, no reasoning count (the estimate from the tally)',
    decode: chat({ model: 'openai/gpt-4o-mini' }),
    encode: encodeChat,
    script: () =>
      on.openai.script({
        reasoning: 'Thinking about the weather.',
        toolCalls: [
          { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_b', name: 'get_time', arguments: '{"zone":"CET"}' },
        ],
        usage: { input: 30, output: 80 },
      }),
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
    script: () =>
      on.anthropic.script({
        thinking: 'Let me see.',
        signature: 'sig-1',
        text: 'Here it is.',
        toolCalls: [{ id: 'toolu_1', name: 'lookup', input: { q: 'x' } }],
        usage: { input: 50, output: 60, cacheRead: 10 },
      }),
  },
  {
    name: 'Chat on Gemini: thoughts and text',
    decode: chat({ model: 'google/gemini-2.5-flash' }),
    encode: encodeChat,
    script: () => on.gemini.script({ text: 'From Gemini.', thoughts: 'Hmm.', usage: { prompt: 15, candidates: 7, thoughts: 5 } }),
  },
];

async function principal(): Promise<KeyPrincipal> {
  return on.h.t.tollgate.services.auth.authenticateApiKey(on.a.secret);
}

function context(id: string) {
  return { signal: new Cancellation(), requestId: id };
}

describe.each(CASES)('$name', (c) => {
  test('read whole and read event by event: the same events, answer and bill', async () => {
    const text = on.h.t.tollgate.services.text;
    c.script();
    const byEvent = requestId();
    const streamed = await text.start(await principal(), c.decode(), context(byEvent));
    const eventByEvent: CanonicalEvent[] = [];
    for await (const event of streamed.events) eventByEvent.push(event);

    c.script();
    const atOnce = requestId();
    const whole = await (await text.start(await principal(), c.decode(), context(atOnce))).allEvents();

    expect(whole).toEqual(eventByEvent);
    expect(whole.at(-1)?.type).toBe('finish');
    expect(c.encode(whole)).toEqual(c.encode(eventByEvent));
    const [billByEvent, billWhole] = await Promise.all([settledMoneyOf(on.h.db, byEvent), settledMoneyOf(on.h.db, atOnce)]);
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
