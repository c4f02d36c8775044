import { Cancellation } from '../../src/domain/generation/cancellation';
import { createServer } from 'node:net';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { CanonicalRequest, McpApprovalRule, TextProvider } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { ApiError } from '../../src/domain/shared/errors';
import { REFUSAL_TEXT } from '../../src/protocols/anthropic-messages/stream-decoder';
import { JSON_OBJECT_INSTRUCTION } from '../../src/protocols/anthropic-messages/vendor-request';
import { createProviderRegistry, type ProviderRegistry } from '../../src/providers/registry';
import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import type { FakeVendor } from '../fakes/openai';
import { finishOf, runProvider, textOf } from '../support/provider-events';
import { checkVendorCapabilities } from '../../src/domain/generation/capabilities';

/** Anthropic Messages over real HTTP against the fake. */

const sonnet = findModel(builtinCatalog(), 'anthropic/claude-sonnet-4-5', 'text')!;

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: sonnet,
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    maxOutputTokens: 1000,
    reasoning: { mode: 'default' },
    ...overrides,
  };
}

const run = runProvider;

describe('Anthropic provider', () => {
  let fake: FakeVendor<FakeAnthropicReply>;
  let registry: ProviderRegistry;
  let claude: TextProvider;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    registry = createProviderRegistry(
      new Map([['anthropic', { vendor: 'anthropic', protocol: 'anthropic', apiKey: 'sk-ant-fake', baseUrl: fake.url }]]),
      {
        http: { timeouts: { connectMs: 1000, headersMs: 400, bodyIdleMs: 400 } },
      },
    );
    claude = registry.forModel(sonnet);
  });
  afterAll(async () => {
    await registry.close();
    await fake.close();
  });
  beforeEach(() => fake.script());

  it('streams text with usage: cache reads and writes are part of the input', async () => {
    fake.script({ text: 'Bonjour tout le monde.', usage: { input: 20, cacheRead: 100, cacheCreation: 50, output: 9 } });
    const { events, error } = await run(
      claude,
      request({
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Say hello' },
          { role: 'system', content: 'In French.' },
        ],
        stop: ['###'],
        temperature: 1.6,
        topP: 0.5,
        frequencyPenalty: 1,
        presencePenalty: 1,
        user: 'end-user-7',
      }),
    );
    expect(error).toBeNull();
    expect(textOf(events)).toBe('Bonjour tout le monde.');
    expect(finishOf(events)).toEqual({
      type: 'finish',
      reason: 'stop',
      refusal: false,
      usage: {
        inputTokens: 170,
        cachedInputTokens: 100,
        cacheWrite5mInputTokens: 50,
        cacheWrite1hInputTokens: 0,
        outputTokens: 9,
        reasoningTokens: 0,
      },
    });
    const sent = fake.lastRequest!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-fake');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    // System hoisted; temperature clamped to 0..1 and top_p dropped (not both); penalties dropped.
    expect(sent.body).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 1000,
      system: 'You are terse.\n\nIn French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
      stream: true,
      stop_sequences: ['###'],
      temperature: 1,
      metadata: { user_id: 'end-user-7' },
    });
  });

  it('maps effort to a thinking budget and streams thinking with its signature', async () => {
    fake.script({ thinking: 'Let me consider this.', signature: 'sig-abc', text: 'Answer.', usage: { input: 10, output: 80 } });
    const { events, error } = await run(
      claude,
      request({ reasoning: { mode: 'default', effort: 'high' }, maxOutputTokens: 32000, temperature: 0.2 }),
    );
    expect(error).toBeNull();
    expect(fake.lastRequest!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(fake.lastRequest!.body).not.toHaveProperty('temperature');
    expect(
      events
        .filter((e) => e.type === 'reasoning-delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('Let me consider this.');
    expect(events.find((e) => e.type === 'reasoning-end')).toEqual({ type: 'reasoning-end', signature: 'sig-abc' });
    const types = events.map((e) => e.type);
    expect(types.indexOf('reasoning-end')).toBeLessThan(types.indexOf('text-delta'));
    // Thinking happened but Anthropic gives no separate count: unknown, estimated downstream.
    expect(finishOf(events).usage).toEqual({
      inputTokens: 10,
      cachedInputTokens: 0,
      cacheWrite5mInputTokens: 0,
      cacheWrite1hInputTokens: 0,
      outputTokens: 80,
      reasoningTokens: null,
    });
  });

  it('maps budgets, adaptive and disabled thinking, keeping the budget below max_tokens', async () => {
    await run(claude, request({ reasoning: { mode: 'enabled', budgetTokens: 3000 }, maxOutputTokens: 8000 }));
    expect(fake.lastRequest!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
    await run(claude, request({ reasoning: { mode: 'adaptive' }, maxOutputTokens: 8000 }));
    expect(fake.lastRequest!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    await run(claude, request({ reasoning: { mode: 'default', effort: 'extra_high' }, maxOutputTokens: 10000 }));
    expect(fake.lastRequest!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 10000 - 1024 });
    await run(claude, request({ reasoning: { mode: 'default', effort: 'low' }, maxOutputTokens: 1500 }));
    expect(fake.lastRequest!.body).not.toHaveProperty('thinking');
    await run(claude, request({ reasoning: { mode: 'disabled' } }));
    expect(fake.lastRequest!.body).not.toHaveProperty('thinking');
    await run(claude, request());
    expect(fake.lastRequest!.body).not.toHaveProperty('thinking');
  });

  it('sends signed thinking and redacted thinking of earlier turns back', async () => {
    await run(
      claude,
      request({
        reasoning: { mode: 'enabled', budgetTokens: 2000 },
        maxOutputTokens: 4000,
        messages: [
          { role: 'user', content: 'Q1' },
          {
            role: 'assistant',
            content: 'A1',
            toolCalls: [],
            reasoning: [{ text: 'thought one', signature: 'sig-1' }, { text: '', redactedData: 'opaque' }, { text: 'unsigned, dropped' }],
          },
          { role: 'user', content: 'Q2' },
        ],
      }),
    );
    expect(fake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Q1' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'thought one', signature: 'sig-1' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'A1' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Q2' }] },
    ]);
  });

  it('streams redacted thinking as a reasoning end carrying the data', async () => {
    fake.script({ redactedThinking: 'encrypted-blob', text: 'Ok.' });
    const { events } = await run(claude, request({ reasoning: { mode: 'enabled', budgetTokens: 2000 }, maxOutputTokens: 4000 }));
    expect(events[0]).toEqual({ type: 'reasoning-end', redactedData: 'encrypted-blob' });
    expect(finishOf(events).usage.reasoningTokens).toBeNull();
  });

  it('maps tools and a forced tool choice (thinking left off), and streams tool_use', async () => {
    fake.script({
      text: 'Checking.',
      toolCalls: [
        { id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo', units: 'metric' } },
        { id: 'toolu_2', name: 'now', input: {} },
      ],
    });
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const { events, error } = await run(
      claude,
      request({
        tools: [
          { type: 'function', name: 'get_weather', description: 'Weather', parameters, strict: true },
          { type: 'function', name: 'now', parameters: { type: 'object', properties: {} } },
        ],
        toolChoice: { name: 'get_weather' },
        parallelToolCalls: false,
        reasoning: { mode: 'default', effort: 'high' },
        maxOutputTokens: 32000,
      }),
    );
    expect(error).toBeNull();
    const body = fake.lastRequest!.body;
    expect(body.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: parameters },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    expect(body).not.toHaveProperty('thinking');

    expect(textOf(events)).toBe('Checking.');
    expect(events.filter((e) => e.type === 'tool-call-start')).toEqual([
      { type: 'tool-call-start', index: 0, id: 'toolu_1', name: 'get_weather', kind: 'function' },
      { type: 'tool-call-start', index: 1, id: 'toolu_2', name: 'now', kind: 'function' },
    ]);
    const args = (index: number) =>
      events.flatMap((e) => (e.type === 'tool-call-delta' && e.index === index ? [e.argumentsDelta] : [])).join('');
    expect(JSON.parse(args(0))).toEqual({ city: 'Oslo', units: 'metric' });
    expect(args(1)).toBe('{}');
    expect(events.filter((e) => e.type === 'tool-call-end')).toHaveLength(2);
    expect(finishOf(events).reason).toBe('tool_calls');
  });

  it('maps the other tool choices', async () => {
    const tools: CanonicalRequest['tools'] = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    await run(claude, request({ tools, toolChoice: 'required' }));
    expect(fake.lastRequest!.body.tool_choice).toEqual({ type: 'any' });
    await run(claude, request({ tools, toolChoice: 'none' }));
    expect(fake.lastRequest!.body.tool_choice).toEqual({ type: 'none' });
    await run(claude, request({ tools, parallelToolCalls: false }));
    expect(fake.lastRequest!.body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    await run(claude, request({ tools }));
    expect(fake.lastRequest!.body).not.toHaveProperty('tool_choice');
  });

  it('sends tool results as one user turn, results first, errors flagged', async () => {
    fake.script({ text: 'Both done.' });
    const { events } = await run(
      claude,
      request({
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
        messages: [
          { role: 'user', content: 'Run both' },
          {
            role: 'assistant',
            content: '',
            reasoning: [],
            toolCalls: [
              { id: 'toolu_1', name: 'f', arguments: '{"n":1}', kind: 'function' },
              { id: 'toolu_2', name: 'f', arguments: '', kind: 'function' },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_1', content: 'one', isError: false },
          { role: 'tool', toolCallId: 'toolu_2', content: 'boom', isError: true },
          { role: 'user', content: 'And?' },
        ],
      }),
    );
    expect(textOf(events)).toBe('Both done.');
    expect(fake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Run both' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: { n: 1 } },
          { type: 'tool_use', id: 'toolu_2', name: 'f', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'one' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true },
          { type: 'text', text: 'And?' },
        ],
      },
    ]);
  });

  it('maps structured output: json_schema to output_config.format, json_object to an instruction', async () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false };
    await run(claude, request({ responseFormat: { type: 'json_schema', name: 'x', schema, strict: true } }));
    expect(fake.lastRequest!.body.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(fake.lastRequest!.headers['anthropic-beta']).toBeUndefined();
    await run(
      claude,
      request({
        responseFormat: { type: 'json_object' },
        messages: [
          { role: 'system', content: 'Sys.' },
          { role: 'user', content: 'Hi' },
        ],
      }),
    );
    expect(fake.lastRequest!.body.system).toBe(`Sys.\n\n${JSON_OBJECT_INSTRUCTION}`);
    expect(fake.lastRequest!.body).not.toHaveProperty('output_config');
  });

  it('maps stop reasons: max_tokens, stop_sequence, refusal', async () => {
    fake.script({ text: 'Trunc', stopReason: 'max_tokens' });
    expect(finishOf((await run(claude, request())).events)).toMatchObject({ reason: 'length', refusal: false });
    fake.script({ text: 'Up to', stopReason: 'stop_sequence', stopSequence: '###' });
    expect(finishOf((await run(claude, request())).events)).toMatchObject({ reason: 'stop', stopSequence: '###' });
    fake.script({ stopReason: 'refusal' });
    const refused = await run(claude, request());
    expect(textOf(refused.events)).toBe(REFUSAL_TEXT);
    expect(finishOf(refused.events)).toMatchObject({ reason: 'content_filter', refusal: true });
  });

  it('passes MCP servers with the MCP beta header', async () => {
    fake.script({ text: 'Searched.' });
    const { error } = await run(
      claude,
      request({
        tools: [
          {
            type: 'mcp',
            serverLabel: 'docs',
            serverUrl: 'https://mcp.example.com/sse',
            allowedTools: ['search'],
            headers: { Authorization: 'Bearer tok-1' },
          },
        ],
      }),
    );
    expect(error).toBeNull();
    expect(fake.lastRequest!.headers['anthropic-beta']).toBe('mcp-client-2025-04-04');
    expect(fake.lastRequest!.body.mcp_servers).toEqual([
      {
        type: 'url',
        url: 'https://mcp.example.com/sse',
        name: 'docs',
        authorization_token: 'tok-1',
        tool_configuration: { enabled: true, allowed_tools: ['search'] },
      },
    ]);
    expect(fake.lastRequest!.body).not.toHaveProperty('tools');
  });

  it('refuses custom tools and unforwardable MCP headers before any upstream call', () => {
    const before = fake.requests.length;
    const signal = new Cancellation();
    expect(() => checkVendorCapabilities(request({ tools: [{ type: 'custom', name: 'grep' }] }), claude.capabilities)).toThrow(ApiError);
    expect(() =>
      claude.generate(request({ tools: [{ type: 'mcp', serverLabel: 'd', serverUrl: 'https://x', headers: { 'X-Team': 'a' } }] }), signal),
    ).toThrow(/X-Team/);
    expect(fake.requests.length).toBe(before);
  });

  it('refuses MCP approvals and approval items of an earlier turn (Anthropic has no approvals); drops tool listings; sends calls back as its blocks', async () => {
    const before = fake.requests.length;
    const rules: McpApprovalRule[] = ['always', { always: { toolNames: ['search'] } }];
    for (const requireApproval of rules) {
      expect(
        () =>
          checkVendorCapabilities(
            request({ tools: [{ type: 'mcp', serverLabel: 'docs', serverUrl: 'https://x', requireApproval }] }),
            claude.capabilities,
          ),
        // The rule's own words (field keys); the endpoints name them as the client's format does (text-vendors.test.ts).
      ).toThrow(/docs.*set text\.mcpApproval to 'never'/);
    }
    const ask = {
      role: 'mcp' as const,
      item: { kind: 'approval_request' as const, id: 'mcpr_1', serverLabel: 'docs', name: 'search', arguments: '{}' },
    };
    let refused: unknown;
    try {
      checkVendorCapabilities(request({ messages: [{ role: 'user', content: 'Hi' }, ask] }), claude.capabilities);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).message).toMatch(/^text\.prompt: 'mcp_approval_request' items/);
    expect((refused as ApiError).details).toMatchObject({ field: 'text.prompt' });
    expect(fake.requests.length).toBe(before);

    fake.script({ text: 'Ok.' });
    const listing = {
      role: 'mcp' as const,
      item: { kind: 'list_tools' as const, id: 'mcpl_1', serverLabel: 'docs', tools: [{ name: 'search', inputSchema: {} }] },
    };
    const calls = [
      {
        role: 'mcp' as const,
        item: { kind: 'call' as const, id: 'mcptoolu_1', serverLabel: 'docs', name: 'search', arguments: '{"q":"x"}', output: 'x' },
      },
      {
        role: 'mcp' as const,
        item: { kind: 'call' as const, id: 'mcptoolu_2', serverLabel: 'docs', name: 'fetch', arguments: '{}', error: 'gone' },
      },
    ];
    const { error } = await run(
      claude,
      request({
        messages: [
          { role: 'user', content: 'Hi' },
          listing,
          ...calls,
          { role: 'assistant', content: 'Found x.', toolCalls: [], reasoning: [] },
          { role: 'user', content: 'Again' },
        ],
        tools: [{ type: 'mcp', serverLabel: 'docs', serverUrl: 'https://x', requireApproval: 'never' }],
      }),
    );
    expect(error).toBeNull();
    expect(fake.lastRequest!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      {
        role: 'assistant',
        content: [
          { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 'docs', input: { q: 'x' } },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', content: 'x' },
          { type: 'mcp_tool_use', id: 'mcptoolu_2', name: 'fetch', server_name: 'docs', input: {} },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_2', content: 'gone', is_error: true },
          { type: 'text', text: 'Found x.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Again' }] },
    ]);
  });

  it('gives the MCP calls Claude made as mcp-item events, use and result joined, streamed or whole', async () => {
    for (const stream of [true, false]) {
      fake.script({
        mcpCalls: [{ id: 'mcptoolu_9', name: 'search', server: 'docs', input: { q: 'y' }, result: 'found y' }],
        text: 'Done.',
      });
      const { events, error } = await run(
        claude,
        request({ stream, tools: [{ type: 'mcp', serverLabel: 'docs', serverUrl: 'https://x' }] }),
      );
      expect(error).toBeNull();
      expect(events.filter((e) => e.type === 'mcp-item')).toEqual([
        {
          type: 'mcp-item',
          item: { kind: 'call', id: 'mcptoolu_9', serverLabel: 'docs', name: 'search', arguments: '{"q":"y"}', output: 'found y' },
        },
      ]);
      expect(textOf(events)).toBe('Done.');
    }
  });

  describe('failures', () => {
    it('maps an HTTP error (overloaded) to ProviderError with status and message', async () => {
      fake.script({ status: 529, errorMessage: 'Overloaded' });
      const { error } = await run(claude, request());
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).vendorStatus).toBe(529);
      expect((error as ProviderError).message).toBe('anthropic answered HTTP 529: Overloaded');
    });

    it('fails on a mid-stream error event after delivering text', async () => {
      fake.script({ text: 'Partial answer', midStreamError: 'Overloaded' });
      const { events, error } = await run(claude, request());
      expect(textOf(events)).toBe('Partial answer');
      expect((error as ProviderError).message).toMatch(/mid-stream: Overloaded/);
    });

    it('times out waiting for headers', async () => {
      fake.script({ headersDelayMs: 1500 });
      expect((await run(claude, request())).error).toBeInstanceOf(ProviderError);
    });

    it('fails on connection refused', async () => {
      const port = await closedPort();
      const dead = createProviderRegistry(
        new Map([['anthropic', { vendor: 'anthropic', protocol: 'anthropic', apiKey: 'k', baseUrl: `http://127.0.0.1:${port}` }]]),
      );
      try {
        const { error } = await run(dead.forModel(sonnet), request());
        expect((error as ProviderError).message).toMatch(/ECONNREFUSED/);
      } finally {
        await dead.close();
      }
    });

    it('delivers text, then fails, when the stream is cut mid-way or ends without message_stop', async () => {
      fake.script({ text: 'This will be cut off soon enough.', cutAfterChunks: 5 });
      const cut = await run(claude, request());
      expect(textOf(cut.events).length).toBeGreaterThan(0);
      expect(cut.error).toBeInstanceOf(ProviderError);
      fake.script({ text: 'No stop', omitEnd: true });
      const ended = await run(claude, request());
      expect(textOf(ended.events)).toBe('No stop');
      expect((ended.error as ProviderError).message).toMatch(/ended before/);
    });

    it('aborts the upstream request when the client goes away', async () => {
      fake.script({ text: 'Slowly streamed answer text', chunkDelayMs: 150 });
      const cancellation = new Cancellation();
      let error: unknown = null;
      try {
        for await (const event of claude.generate(request(), cancellation)) if (event.type === 'text-delta') cancellation.cancel();
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
