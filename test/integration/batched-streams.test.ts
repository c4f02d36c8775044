import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findModel } from '../../src/domain/catalog/catalog';
import { Cancellation } from '../../src/domain/generation/cancellation';
import { isBatchedAnswer, type BatchedAnswer, type CanonicalEvent, type ProviderEvent } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import type { DecodedTextRequest } from '../../src/domain/generation/service';
import { decodeMessagesIngress } from '../../src/protocols/anthropic-messages/decode-request';
import { decodeChatIngress } from '../../src/protocols/openai-chat/decode-request';
import { createProviderRegistry } from '../../src/providers/registry';
import { requestId, settledMoneyOf, type RequestMoney } from '../support/text';
import { SCRIPTED_ANSWERS } from '../support/scripted-answers';
import { textHarnessOnFakes } from '../support/vendor-fakes';

/**
 * A streamed vendor answer is read batch by batch (BatchedAnswer: the events of every chunk that
 * arrived since the last read) and written to the client a batch per write (TextGeneration.batches),
 * instead of an async step per event. The batches must hold exactly the events, in order, that the
 * answer gives event by event, and bill the same: each case runs the same streamed request both
 * ways on the real pipeline, vendor fakes and PostgreSQL.
 */

const on = textHarnessOnFakes();

/** The bill without the ids that differ between two requests. */
const bill = (money: RequestMoney) => ({ usage: money.usage.map(({ hold_id: _hold, ...row }) => row), charges: money.charges });

const chat = (model: string) => decodeChatIngress({ model, stream: true, messages: [{ role: 'user', content: 'Hi there' }] }).decoded;

const CASES: { name: string; decode(): DecodedTextRequest; script(): void }[] = [
  {
    name: 'Chat on OpenAI: text',
    decode: () => chat('openai/gpt-4o-mini'),
    script: () => SCRIPTED_ANSWERS.openaiText(on),
  },
  {
    name: 'Chat on OpenAI: tool calls and reasoning, no reasoning count',
    decode: () => chat('openai/gpt-4o-mini'),
    script: () => SCRIPTED_ANSWERS.openaiToolsAndReasoning(on),
  },
  {
    name: 'Messages on Anthropic: thinking, text and a tool call',
    decode: () =>
      decodeMessagesIngress({
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 2_000,
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      }).decoded,
    script: () => SCRIPTED_ANSWERS.anthropicThinkingTextTool(on),
  },
  {
    name: 'Chat on Gemini: thoughts and text',
    decode: () => chat('google/gemini-2.5-flash'),
    script: () => SCRIPTED_ANSWERS.geminiThoughtsAndText(on),
  },
];

describe.each(CASES)('$name', (c) => {
  test('read batch by batch and event by event: the same events, in order, and the same bill', async () => {
    const text = on.h.t.tollgate.services.text;
    const principal = await on.h.t.tollgate.services.auth.authenticateApiKey(on.a.secret);
    c.script();
    const byEvent = requestId();
    const eventByEvent: CanonicalEvent[] = [];
    const one = await text.start(principal, c.decode(), { signal: new Cancellation(), requestId: byEvent });
    for await (const event of one.events) eventByEvent.push(event);

    c.script();
    const byBatch = requestId();
    const batches: CanonicalEvent[][] = [];
    const other = await text.start(principal, c.decode(), { signal: new Cancellation(), requestId: byBatch });
    for await (const batch of other.batches()) batches.push(batch);

    expect(batches.every((batch) => batch.length > 0)).toBe(true);
    expect(batches.flat()).toEqual(eventByEvent);
    expect(eventByEvent.at(-1)?.type).toBe('finish');
    const [billByEvent, billByBatch] = await Promise.all([settledMoneyOf(on.h.db, byEvent), settledMoneyOf(on.h.db, byBatch)]);
    expect(billByEvent.usage).toHaveLength(1);
    expect(bill(billByBatch)).toEqual(bill(billByEvent));
  });
});

describe('one vendor packet', () => {
  /** An OpenAI-compatible server that writes a whole event stream in one write. */
  let server: Server;
  let body = '';
  let url = '';
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const chunk = (fields: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', ...fields })}\n\n`;
  const delta = (content: string) => chunk({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
  const finish = chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  const usage = chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } });

  function answer(): AsyncIterable<ProviderEvent> {
    const { services } = on.h.t.tollgate;
    const decoded = chat('openai/gpt-4o-mini');
    const model = findModel(services.catalog, decoded.modelId, 'text')!;
    const provider = createProviderRegistry(
      new Map([['openai', { vendor: 'openai', protocol: 'openai', apiKey: 'k', baseUrl: url }]]),
    ).forModel(model);
    return provider.generate({ ...decoded.request, model, maxOutputTokens: 100, stream: true }, new Cancellation());
  }

  test('its events come in one batch, the same as event by event', async () => {
    body = delta('One ') + delta('two ') + delta('three.') + finish + usage + 'data: [DONE]\n\n';
    const batched = answer();
    expect(isBatchedAnswer(batched)).toBe(true);
    const first = await (batched as BatchedAnswer).nextBatch();
    const eventByEvent: ProviderEvent[] = [];
    for await (const event of answer()) eventByEvent.push(event);
    expect(first).toEqual(eventByEvent);
    expect(first!.map((event) => event.type)).toEqual(['text-delta', 'text-delta', 'text-delta', 'finish']);
  });

  test('a failure after events of the same packet: those events first, then the failure', async () => {
    body = delta('Partial ') + delta('answer') + chunk({ error: { message: 'Overloaded' } });
    const batched = answer() as BatchedAnswer;
    const first = await batched.nextBatch();
    expect(first!.map((event) => (event.type === 'text-delta' ? event.text : event.type))).toEqual(['Partial ', 'answer']);
    await expect(batched.nextBatch()).rejects.toThrow(ProviderError);
    await expect(batched.nextBatch()).resolves.toBeNull();
  });
});
