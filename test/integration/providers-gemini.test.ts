import { Cancellation } from '../../src/domain/generation/cancellation';
import { createServer } from 'node:net';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { CanonicalRequest, TextProvider } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { ApiError } from '../../src/domain/shared/errors';
import { GEMINI_REFUSAL_TEXT } from '../../src/protocols/gemini/stream-decoder';
import { createProviderRegistry, type ProviderRegistry } from '../../src/providers/registry';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import type { FakeVendor } from '../fakes/openai';
import { finishOf, runProvider, textOf } from '../support/provider-events';
import { checkVendorCapabilities } from '../../src/domain/generation/capabilities';

/** Gemini over real HTTP against the fake (SSE with CRLF line ends, as Google sends it). */

const flash = findModel(builtinCatalog(), 'google/gemini-2.5-flash', 'text')!;
const pro = findModel(builtinCatalog(), 'google/gemini-2.5-pro', 'text')!;

function request(overrides: Partial<CanonicalRequest> = {}, model: TextModel = flash): CanonicalRequest {
  return {
    model,
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    maxOutputTokens: 30000,
    reasoning: { mode: 'default' },
    ...overrides,
  };
}

const run = runProvider;

describe('Gemini provider', () => {
  let fake: FakeVendor<FakeGeminiReply>;
  let registry: ProviderRegistry;
  let gemini: TextProvider;

  beforeAll(async () => {
    fake = await startFakeGemini();
    registry = createProviderRegistry(
      new Map([['gemini', { vendor: 'gemini', protocol: 'gemini', apiKey: 'gemini-fake-key', baseUrl: fake.url }]]),
      {
        http: { timeouts: { connectMs: 1000, headersMs: 400, bodyIdleMs: 400 } },
      },
    );
    gemini = registry.forModel(flash);
  });
  afterAll(async () => {
    await registry.close();
    await fake.close();
  });
  beforeEach(() => fake.script());

  it('streams text with usage (thoughts are output, cached is part of the prompt) and maps the request', async () => {
    fake.script({
      thoughts: 'Pondering.',
      text: 'Hallo Welt, wie geht es?',
      usage: { prompt: 40, cached: 10, candidates: 5, thoughts: 7 },
    });
    const { events, error } = await run(
      gemini,
      request({
        messages: [
          { role: 'system', content: 'Answer in German.' },
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Hallo', toolCalls: [], reasoning: [] },
          { role: 'user', content: 'More' },
          { role: 'user', content: 'please' },
        ],
        stop: ['END'],
        temperature: 0.4,
        topP: 0.8,
        presencePenalty: 0.5,
        frequencyPenalty: 0.25,
        maxOutputTokens: 2048,
      }),
    );
    expect(error).toBeNull();
    const sent = fake.lastRequest!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(sent.query).toEqual({ alt: 'sse' });
    expect(sent.headers['x-goog-api-key']).toBe('gemini-fake-key');
    expect(sent.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello' }] },
        { role: 'model', parts: [{ text: 'Hallo' }] },
        { role: 'user', parts: [{ text: 'More' }, { text: 'please' }] },
      ],
      systemInstruction: { parts: [{ text: 'Answer in German.' }] },
      generationConfig: {
        maxOutputTokens: 2048,
        temperature: 0.4,
        topP: 0.8,
        stopSequences: ['END'],
        presencePenalty: 0.5,
        frequencyPenalty: 0.25,
        thinkingConfig: { includeThoughts: true },
      },
    });
    expect(events[0]).toEqual({ type: 'reasoning-delta', text: 'Pondering.' });
    expect(events[1]).toEqual({ type: 'reasoning-end' });
    expect(textOf(events)).toBe('Hallo Welt, wie geht es?');
    expect(finishOf(events)).toEqual({
      type: 'finish',
      reason: 'stop',
      refusal: false,
      usage: { inputTokens: 40, cachedInputTokens: 10, outputTokens: 12, reasoningTokens: 7 },
    });
  });

  it('maps effort and budgets to thinkingBudget within the model family range', async () => {
    await run(gemini, request({ reasoning: { mode: 'default', effort: 'low' } }));
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    await run(gemini, request({ reasoning: { mode: 'default', effort: 'extra_high' } }));
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    await run(registry.forModel(pro), request({ reasoning: { mode: 'default', effort: 'extra_high' } }, pro));
    expect(fake.lastRequest!.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent');
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 30000, includeThoughts: true });
    await run(gemini, request({ reasoning: { mode: 'enabled', budgetTokens: 2000 } }));
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 2000, includeThoughts: true });
    await run(gemini, request({ reasoning: { mode: 'adaptive' } }));
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: -1, includeThoughts: true });
    await run(gemini, request({ reasoning: { mode: 'disabled' } }));
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    // 2.5 Pro cannot stop thinking: its minimum budget instead.
    await run(registry.forModel(pro), request({ reasoning: { mode: 'disabled' } }, pro));
    expect(fake.lastRequest!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128 });
  });

  it('maps function tools and tool choice, and streams function calls', async () => {
    fake.script({
      functionCalls: [
        { name: 'get_weather', args: { city: 'Lyon' } },
        { name: 'get_time', args: {} },
      ],
      usage: { prompt: 30, candidates: 12 },
    });
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const { events, error } = await run(
      gemini,
      request({
        tools: [
          { type: 'function', name: 'get_weather', description: 'Weather', parameters },
          { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } },
        ],
        toolChoice: { name: 'get_weather' },
        parallelToolCalls: false,
      }),
    );
    expect(error).toBeNull();
    const body = fake.lastRequest!.body;
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather', parametersJsonSchema: parameters },
          { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });

    const starts = events.filter((e) => e.type === 'tool-call-start');
    expect(starts).toHaveLength(2);
    expect(starts[0]).toMatchObject({ index: 0, name: 'get_weather', kind: 'function', id: expect.stringMatching(/^call_/) });
    expect(starts[1]).toMatchObject({ index: 1, name: 'get_time' });
    expect(events.filter((e) => e.type === 'tool-call-delta').map((e) => (e as { argumentsDelta: string }).argumentsDelta)).toEqual([
      '{"city":"Lyon"}',
      '{}',
    ]);
    expect(events.filter((e) => e.type === 'tool-call-end')).toHaveLength(2);
    expect(finishOf(events).reason).toBe('tool_calls');

    for (const [choice, config] of [
      ['auto', { mode: 'AUTO' }],
      ['none', { mode: 'NONE' }],
      ['required', { mode: 'ANY' }],
    ] as const) {
      await run(gemini, request({ tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }], toolChoice: choice }));
      expect(fake.lastRequest!.body.toolConfig).toEqual({ functionCallingConfig: config });
    }
  });

  it('sends tool results as functionResponse parts named after their calls', async () => {
    fake.script({ text: 'Lyon: 21°C at noon.' });
    const { events } = await run(
      gemini,
      request({
        tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }],
        messages: [
          { role: 'user', content: 'Weather and time?' },
          {
            role: 'assistant',
            content: '',
            reasoning: [{ text: 'thinking', signature: 'not-for-gemini' }],
            toolCalls: [
              { id: 'call_1', name: 'get_weather', arguments: '{"city":"Lyon"}', kind: 'function' },
              { id: 'call_2', name: 'get_time', arguments: '{}', kind: 'function' },
            ],
          },
          { role: 'tool', toolCallId: 'call_1', content: '{"celsius":21}', isError: false },
          { role: 'tool', toolCallId: 'call_2', content: 'noon', isError: false },
        ],
      }),
    );
    expect(textOf(events)).toBe('Lyon: 21°C at noon.');
    expect(fake.lastRequest!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time?' }] },
      {
        role: 'model',
        parts: [{ functionCall: { name: 'get_weather', args: { city: 'Lyon' } } }, { functionCall: { name: 'get_time', args: {} } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { celsius: 21 } } },
          { functionResponse: { name: 'get_time', response: { result: 'noon' } } },
        ],
      },
    ]);
  });

  it('maps structured output to responseMimeType and responseJsonSchema', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    await run(gemini, request({ responseFormat: { type: 'json_schema', name: 'n', schema } }));
    expect(fake.lastRequest!.body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema });
    await run(gemini, request({ responseFormat: { type: 'json_object' } }));
    expect(fake.lastRequest!.body.generationConfig.responseMimeType).toBe('application/json');
    expect(fake.lastRequest!.body.generationConfig).not.toHaveProperty('responseJsonSchema');
  });

  it('maps finish reasons: MAX_TOKENS, SAFETY, a blocked prompt', async () => {
    fake.script({ text: 'Cut', finishReason: 'MAX_TOKENS' });
    expect(finishOf((await run(gemini, request())).events)).toMatchObject({ reason: 'length', refusal: false });
    fake.script({ finishReason: 'SAFETY' });
    const unsafe = await run(gemini, request());
    expect(textOf(unsafe.events)).toBe(GEMINI_REFUSAL_TEXT);
    expect(finishOf(unsafe.events)).toMatchObject({ reason: 'content_filter', refusal: true });
    fake.script({ text: 'Partly written', finishReason: 'PROHIBITED_CONTENT' });
    const partly = await run(gemini, request());
    expect(textOf(partly.events)).toBe('Partly written');
    expect(finishOf(partly.events)).toMatchObject({ reason: 'content_filter', refusal: true });
    fake.script({ blockReason: 'SAFETY', usage: { prompt: 9 } });
    const blocked = await run(gemini, request());
    expect(textOf(blocked.events)).toBe(GEMINI_REFUSAL_TEXT);
    expect(finishOf(blocked.events)).toEqual({
      type: 'finish',
      reason: 'content_filter',
      refusal: true,
      usage: { inputTokens: 9, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 },
    });
  });

  it('refuses MCP and custom tools before any upstream call', () => {
    const before = fake.requests.length;
    expect(() =>
      checkVendorCapabilities(
        request({
          tools: [
            { type: 'mcp', serverLabel: 'docs', serverUrl: 'https://x' },
            { type: 'custom', name: 'grep' },
          ],
        }),
        gemini.capabilities,
      ),
    ).toThrow(ApiError);
    expect(fake.requests.length).toBe(before);
  });

  it('refuses MCP calls of an earlier turn, naming both of their forms; drops MCP tool listings', async () => {
    const before = fake.requests.length;
    const call = {
      role: 'mcp' as const,
      item: { kind: 'call' as const, id: 'mcptoolu_1', serverLabel: 'docs', name: 'search', arguments: '{}', output: 'x' },
    };
    expect(() => checkVendorCapabilities(request({ messages: [{ role: 'user', content: 'Hi' }, call] }), gemini.capabilities)).toThrow(
      // The rule's own words; the text endpoints name the field as the client's format does (`input` in Responses).
      "MCP calls of an earlier turn ('mcp_call' items, or mcp_tool_use blocks in messages) can be sent back only to a vendor that runs MCP servers (OpenAI, Anthropic)",
    );
    expect(fake.requests.length).toBe(before);

    fake.script({ text: 'Ok.' });
    const listing = { role: 'mcp' as const, item: { kind: 'list_tools' as const, id: 'mcpl_1', serverLabel: 'docs', tools: [] } };
    const { error } = await run(gemini, request({ messages: [{ role: 'user', content: 'Hi' }, listing] }));
    expect(error).toBeNull();
    expect(fake.lastRequest!.body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
  });

  describe('failures', () => {
    it('maps an HTTP error to ProviderError with status and message', async () => {
      fake.script({ status: 429, errorMessage: 'Resource has been exhausted (e.g. check quota).' });
      const { error } = await run(gemini, request());
      expect((error as ProviderError).vendorStatus).toBe(429);
      expect((error as ProviderError).message).toBe('gemini answered HTTP 429: Resource has been exhausted (e.g. check quota).');
    });

    it('reports a wrong key as the vendor says it, without the key', async () => {
      const wrong = createProviderRegistry(
        new Map([['gemini', { vendor: 'gemini', protocol: 'gemini', apiKey: 'wrong-key-1234', baseUrl: fake.url }]]),
      );
      try {
        const { error } = await run(wrong.forModel(flash), request());
        expect((error as ProviderError).vendorStatus).toBe(400);
        expect((error as ProviderError).message).toMatch(/API key not valid/);
        expect(fake.lastRequest!.query).not.toHaveProperty('key');
      } finally {
        await wrong.close();
      }
    });

    it('times out waiting for headers, and when the stream goes idle', async () => {
      fake.script({ headersDelayMs: 1500 });
      expect(((await run(gemini, request())).error as ProviderError).message).toMatch(/did not answer/);
      fake.script({ text: 'slow slow slow slow', chunkDelayMs: 1500 });
      const idle = await run(gemini, request());
      expect(textOf(idle.events)).toBe('slow s');
      expect((idle.error as ProviderError).message).toMatch(/sent nothing/);
    });

    it('fails on connection refused', async () => {
      const port = await closedPort();
      const dead = createProviderRegistry(
        new Map([['gemini', { vendor: 'gemini', protocol: 'gemini', apiKey: 'k', baseUrl: `http://127.0.0.1:${port}` }]]),
      );
      try {
        expect(((await run(dead.forModel(flash), request())).error as ProviderError).message).toMatch(/ECONNREFUSED/);
      } finally {
        await dead.close();
      }
    });

    it('delivers text, then fails, when the stream is cut or ends without a finish', async () => {
      fake.script({ text: 'abcdefghijklmnopqrstuvwxyz', cutAfterChunks: 2 });
      const cut = await run(gemini, request());
      expect(textOf(cut.events)).toBe('abcdefghijkl');
      expect(cut.error).toBeInstanceOf(ProviderError);
      fake.script({ text: 'no finish here', omitEnd: true });
      const ended = await run(gemini, request());
      expect(textOf(ended.events)).toBe('no finish here');
      expect((ended.error as ProviderError).message).toMatch(/ended before/);
    });

    it('aborts the upstream request when the client goes away', async () => {
      fake.script({ text: 'A slowly streamed Gemini answer', chunkDelayMs: 150 });
      const cancellation = new Cancellation();
      let error: unknown = null;
      try {
        for await (const event of gemini.generate(request(), cancellation)) if (event.type === 'text-delta') cancellation.cancel();
      } catch (e) {
        error = e;
      }
      expect((error as ProviderError).code).toBe('client_cancelled');
      await fake.lastRequest!.finished;
      expect(fake.lastRequest!.aborted).toBe(true);
    });
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
