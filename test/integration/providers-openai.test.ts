import { Cancellation } from '../../src/domain/generation/cancellation';
import { createServer } from 'node:net';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { VendorEndpoint } from '../../src/domain/catalog/vendors';
import type { CanonicalEvent, CanonicalRequest, ProviderEvent, TextProvider } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { ApiError } from '../../src/domain/shared/errors';
import { createProviderRegistry, type ProviderRegistry } from '../../src/providers/registry';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { finishOf, runProvider, textOf } from '../support/provider-events';
import { checkVendorCapabilities } from '../../src/domain/generation/capabilities';

/** OpenAI over real HTTP against the fake: Chat Completions and Responses upstreams, plus an OpenAI-compatible vendor. */

const catalog = builtinCatalog();
const gpt4oMini = findModel(catalog, 'openai/gpt-4o-mini', 'text')!;
const o4Mini = findModel(catalog, 'openai/o4-mini', 'text')!;

function request(model: TextModel, overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model,
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    maxOutputTokens: 1000,
    reasoning: { mode: 'default' },
    ...overrides,
  };
}

const run = runProvider;

const TIMEOUTS = { connectMs: 1000, headersMs: 400, bodyIdleMs: 400 };

describe('OpenAI provider', () => {
  let fake: FakeVendor<FakeOpenAIReply>;
  let registry: ProviderRegistry;
  let openai: TextProvider;
  const endpoint = (apiKey = 'sk-fake-openai'): Map<string, VendorEndpoint> =>
    new Map([['openai', { vendor: 'openai', protocol: 'openai', apiKey, baseUrl: fake.url }]]);

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    registry = createProviderRegistry(endpoint(), { http: { timeouts: TIMEOUTS } });
    openai = registry.forModel(gpt4oMini);
  });
  afterAll(async () => {
    await registry.close();
    await fake.close();
  });
  beforeEach(() => fake.script());

  describe('Chat Completions upstream (models without effort)', () => {
    it('streams a text answer with usage, cached tokens and the mapped request', async () => {
      fake.script({ text: 'Hello there, world!', usage: { input: 30, cached: 10, output: 7, reasoning: 0 } });
      const { events, error } = await run(
        openai,
        request(gpt4oMini, {
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hi' },
          ],
          stop: ['END'],
          temperature: 0.2,
          topP: 0.9,
          frequencyPenalty: 0.5,
          presencePenalty: 0.1,
          user: 'end-user-1',
        }),
      );
      expect(error).toBeNull();
      expect(events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(1);
      expect(textOf(events)).toBe('Hello there, world!');
      expect(finishOf(events)).toEqual({
        type: 'finish',
        reason: 'stop',
        refusal: false,
        usage: { inputTokens: 30, cachedInputTokens: 10, outputTokens: 7, reasoningTokens: 0 },
      });

      const sent = fake.lastRequest!;
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe('Bearer sk-fake-openai');
      expect(sent.body).toEqual({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: 1000,
        stop: ['END'],
        temperature: 0.2,
        top_p: 0.9,
        frequency_penalty: 0.5,
        presence_penalty: 0.1,
        user: 'end-user-1',
      });
    });

    it('maps tools, tool_choice and parallel_tool_calls, and streams tool calls', async () => {
      fake.script({
        toolCalls: [
          { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      });
      const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
      const { events, error } = await run(
        openai,
        request(gpt4oMini, {
          tools: [{ type: 'function', name: 'get_weather', description: 'Weather by city', parameters, strict: true }],
          toolChoice: { name: 'get_weather' },
          parallelToolCalls: false,
        }),
      );
      expect(error).toBeNull();
      expect(fake.lastRequest!.body.tools).toEqual([
        { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters, strict: true } },
      ]);
      expect(fake.lastRequest!.body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
      expect(fake.lastRequest!.body.parallel_tool_calls).toBe(false);

      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['tool-call-start', 'tool-call-delta', 'tool-call-end', 'finish']));
      const starts = events.filter((e) => e.type === 'tool-call-start');
      expect(starts).toEqual([
        { type: 'tool-call-start', index: 0, id: 'call_a', name: 'get_weather', kind: 'function' },
        { type: 'tool-call-start', index: 1, id: 'call_b', name: 'get_weather', kind: 'function' },
      ]);
      const args = (index: number) =>
        events.flatMap((e) => (e.type === 'tool-call-delta' && e.index === index ? [e.argumentsDelta] : [])).join('');
      expect(JSON.parse(args(0))).toEqual({ city: 'Paris' });
      expect(JSON.parse(args(1))).toEqual({ city: 'Rome' });
      // Each call is closed before the next starts.
      const order = events
        .filter((e) => e.type.startsWith('tool-call-start') || e.type === 'tool-call-end')
        .map((e) => `${e.type}:${'index' in e ? e.index : ''}`);
      expect(order).toEqual(['tool-call-start:0', 'tool-call-end:0', 'tool-call-start:1', 'tool-call-end:1']);
      expect(finishOf(events).reason).toBe('tool_calls');
    });

    it('sends tool results of a follow-up turn', async () => {
      fake.script({ text: 'It is sunny in Paris.' });
      const { events, error } = await run(
        openai,
        request(gpt4oMini, {
          messages: [
            { role: 'user', content: 'Weather in Paris?' },
            {
              role: 'assistant',
              content: '',
              toolCalls: [{ id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', kind: 'function' }],
              reasoning: [],
            },
            { role: 'tool', toolCallId: 'call_a', content: '{"sky":"sunny"}', isError: false },
          ],
          tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }],
        }),
      );
      expect(error).toBeNull();
      expect(textOf(events)).toBe('It is sunny in Paris.');
      expect(fake.lastRequest!.body.messages).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"sky":"sunny"}' },
      ]);
    });

    it('maps structured output to response_format', async () => {
      fake.script({ text: '{"answer":42}' });
      const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
      await run(openai, request(gpt4oMini, { responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true } }));
      expect(fake.lastRequest!.body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'answer', schema, strict: true },
      });
      await run(openai, request(gpt4oMini, { responseFormat: { type: 'json_object' } }));
      expect(fake.lastRequest!.body.response_format).toEqual({ type: 'json_object' });
    });

    it('reports a refusal as content_filter with the refusal text', async () => {
      fake.script({ refusal: "I'm sorry, I can't help with that." });
      const { events } = await run(openai, request(gpt4oMini));
      expect(textOf(events)).toBe("I'm sorry, I can't help with that.");
      expect(finishOf(events)).toMatchObject({ reason: 'content_filter', refusal: true });
    });

    it('maps finish_reason length and content_filter', async () => {
      fake.script({ text: 'Cut sho', finishReason: 'length' });
      expect(finishOf((await run(openai, request(gpt4oMini))).events)).toMatchObject({ reason: 'length', refusal: false });
      fake.script({ text: '', finishReason: 'content_filter' });
      expect(finishOf((await run(openai, request(gpt4oMini))).events)).toMatchObject({ reason: 'content_filter', refusal: true });
    });

    it('uses chat for an effort model when configured, with reasoning_effort and no sampling parameters', async () => {
      const chatOnly = createProviderRegistry(endpoint(), { http: { timeouts: TIMEOUTS }, openai: { upstream: 'chat' } });
      try {
        fake.script({ text: 'Done.', usage: { input: 10, output: 50, reasoning: 40 } });
        const { events } = await run(
          chatOnly.forModel(o4Mini),
          request(o4Mini, { reasoning: { mode: 'default', effort: 'medium' }, temperature: 0.3 }),
        );
        expect(fake.lastRequest!.path).toBe('/v1/chat/completions');
        expect(fake.lastRequest!.body.reasoning_effort).toBe('medium');
        expect(fake.lastRequest!.body).not.toHaveProperty('temperature');
        expect(finishOf(events).usage).toEqual({ inputTokens: 10, cachedInputTokens: 0, outputTokens: 50, reasoningTokens: 40 });
      } finally {
        await chatOnly.close();
      }
    });
  });

  describe('Responses upstream (effort models, MCP)', () => {
    it('serves o4-mini through /responses with the effort mapped and reasoning streamed', async () => {
      fake.script({ reasoning: 'Thinking about it.', text: 'Forty-two.', usage: { input: 50, cached: 20, output: 300, reasoning: 256 } });
      const { events, error } = await run(
        registry.forModel(o4Mini),
        request(o4Mini, {
          messages: [
            { role: 'system', content: 'Be exact.' },
            { role: 'user', content: 'Answer?' },
          ],
          reasoning: { mode: 'default', effort: 'extra_high' },
          temperature: 0.5,
          stop: ['x'],
          maxOutputTokens: 5000,
        }),
      );
      expect(error).toBeNull();
      const sent = fake.lastRequest!;
      expect(sent.path).toBe('/v1/responses');
      expect(sent.body).toEqual({
        model: 'o4-mini',
        input: [
          { type: 'message', role: 'system', content: 'Be exact.' },
          { type: 'message', role: 'user', content: 'Answer?' },
        ],
        stream: true,
        store: false,
        max_output_tokens: 5000,
        reasoning: { effort: 'high' },
      });
      const types = events.map((e) => e.type);
      expect(types.indexOf('reasoning-end')).toBeGreaterThan(types.indexOf('reasoning-delta'));
      expect(types.indexOf('reasoning-end')).toBeLessThan(types.indexOf('text-delta'));
      expect(
        events
          .filter((e) => e.type === 'reasoning-delta')
          .map((e) => (e as { text: string }).text)
          .join(''),
      ).toBe('Thinking about it.');
      expect(textOf(events)).toBe('Forty-two.');
      expect(finishOf(events)).toEqual({
        type: 'finish',
        reason: 'stop',
        refusal: false,
        usage: { inputTokens: 50, cachedInputTokens: 20, outputTokens: 300, reasoningTokens: 256 },
      });
    });

    it('a client that reads the answer whole gets a non-streamed /responses call, with the same meaning as the stream', async () => {
      // Deltas are split differently (one per item when whole): compare what they add up to.
      const meaning = (events: CanonicalEvent[]) => ({
        order: events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]),
        reasoning: events.flatMap((e) => (e.type === 'reasoning-delta' ? [e.text] : [])).join(''),
        text: textOf(events),
        toolCalls: events.flatMap((e) =>
          e.type === 'tool-call-start'
            ? [
                {
                  ...e,
                  arguments: events
                    .flatMap((d) => (d.type === 'tool-call-delta' && d.index === e.index ? [d.argumentsDelta] : []))
                    .join(''),
                },
              ]
            : [],
        ),
        finish: finishOf(events),
      });
      const scripts: FakeOpenAIReply[] = [
        { reasoning: 'Thinking about it.', text: 'Forty-two.', usage: { input: 50, cached: 20, output: 300, reasoning: 256 } },
        {
          toolCalls: [
            { id: 'call_1', name: 'lookup', arguments: '{"q":"tollgate"}' },
            { id: 'call_2', name: 'run_sql', arguments: 'SELECT 1', kind: 'custom' },
          ],
        },
        { refusal: 'I cannot help with that.' },
        { text: 'Cut sh', finishReason: 'length', usage: { input: 5, output: 1000, reasoning: 990 } },
      ];
      for (const script of scripts) {
        fake.script(script);
        const streamed = await run(registry.forModel(o4Mini), request(o4Mini));
        expect(fake.lastRequest!.body.stream).toBe(true);
        fake.script(script);
        const whole = await run(registry.forModel(o4Mini), request(o4Mini, { stream: false }));
        expect(fake.lastRequest!.body.stream).toBe(false);
        expect(streamed.error).toBeNull();
        expect(whole.error).toBeNull();
        expect(meaning(whole.events)).toEqual(meaning(streamed.events));
      }
    });

    it('a non-streamed /responses answer without usage is a ProviderError (nothing to bill by)', async () => {
      fake.script({ omitUsage: true });
      const noUsage = await run(registry.forModel(o4Mini), request(o4Mini, { stream: false }));
      expect(noUsage.error).toBeInstanceOf(ProviderError);
      expect((noUsage.error as Error).message).toMatch(/without reporting token usage/);
    });

    it('maps effort low/medium and leaves the default alone', async () => {
      await run(registry.forModel(o4Mini), request(o4Mini, { reasoning: { mode: 'default', effort: 'low' } }));
      expect(fake.lastRequest!.body.reasoning).toEqual({ effort: 'low' });
      await run(registry.forModel(o4Mini), request(o4Mini, { reasoning: { mode: 'enabled', budgetTokens: 6000 } }));
      expect(fake.lastRequest!.body.reasoning).toEqual({ effort: 'medium' });
      await run(registry.forModel(o4Mini), request(o4Mini));
      expect(fake.lastRequest!.body).not.toHaveProperty('reasoning');
    });

    it('streams function and custom tool calls and sends their results back as items', async () => {
      fake.script({
        toolCalls: [
          { id: 'call_1', name: 'lookup', arguments: '{"q":"tollgate"}' },
          { id: 'call_2', name: 'run_sql', arguments: 'SELECT 1', kind: 'custom' },
        ],
      });
      const tools: CanonicalRequest['tools'] = [
        { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
        { type: 'custom', name: 'run_sql', description: 'Runs SQL' },
      ];
      const first = await run(registry.forModel(o4Mini), request(o4Mini, { tools, toolChoice: 'required', parallelToolCalls: true }));
      expect(first.error).toBeNull();
      expect(fake.lastRequest!.body.tools).toEqual([
        { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false },
        { type: 'custom', name: 'run_sql', description: 'Runs SQL' },
      ]);
      expect(fake.lastRequest!.body.tool_choice).toBe('required');
      expect(fake.lastRequest!.body.parallel_tool_calls).toBe(true);
      expect(first.events.filter((e) => e.type === 'tool-call-start')).toEqual([
        { type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup', kind: 'function' },
        { type: 'tool-call-start', index: 1, id: 'call_2', name: 'run_sql', kind: 'custom' },
      ]);
      const args = (index: number) =>
        first.events.flatMap((e) => (e.type === 'tool-call-delta' && e.index === index ? [e.argumentsDelta] : [])).join('');
      expect(args(0)).toBe('{"q":"tollgate"}');
      expect(args(1)).toBe('SELECT 1');
      expect(first.events.filter((e) => e.type === 'tool-call-end')).toHaveLength(2);
      expect(finishOf(first.events).reason).toBe('tool_calls');

      fake.script({ text: 'Found it.' });
      const second = await run(
        registry.forModel(o4Mini),
        request(o4Mini, {
          tools,
          messages: [
            { role: 'user', content: 'Go' },
            {
              role: 'assistant',
              content: '',
              reasoning: [],
              toolCalls: [
                { id: 'call_1', name: 'lookup', arguments: '{"q":"tollgate"}', kind: 'function' },
                { id: 'call_2', name: 'run_sql', arguments: 'SELECT 1', kind: 'custom' },
              ],
            },
            { role: 'tool', toolCallId: 'call_1', content: 'a gateway', isError: false },
            { role: 'tool', toolCallId: 'call_2', content: '1', isError: false },
          ],
        }),
      );
      expect(second.error).toBeNull();
      expect(fake.lastRequest!.body.input).toEqual([
        { type: 'message', role: 'user', content: 'Go' },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"tollgate"}' },
        { type: 'custom_tool_call', call_id: 'call_2', name: 'run_sql', input: 'SELECT 1' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a gateway' },
        { type: 'custom_tool_call_output', call_id: 'call_2', output: '1' },
      ]);
    });

    it('maps structured output to text.format', async () => {
      const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
      await run(
        registry.forModel(o4Mini),
        request(o4Mini, { responseFormat: { type: 'json_schema', name: 'thing', schema, strict: true, description: 'A thing' } }),
      );
      expect(fake.lastRequest!.body.text).toEqual({
        format: { type: 'json_schema', name: 'thing', schema, strict: true, description: 'A thing' },
      });
    });

    it('maps incomplete responses and refusals', async () => {
      fake.script({ text: 'Partial', finishReason: 'length' });
      expect(finishOf((await run(registry.forModel(o4Mini), request(o4Mini))).events)).toMatchObject({ reason: 'length', refusal: false });
      fake.script({ text: '', finishReason: 'content_filter' });
      expect(finishOf((await run(registry.forModel(o4Mini), request(o4Mini))).events)).toMatchObject({
        reason: 'content_filter',
        refusal: true,
      });
      fake.script({ refusal: 'I cannot do that.' });
      const refused = await run(registry.forModel(o4Mini), request(o4Mini));
      expect(textOf(refused.events)).toBe('I cannot do that.');
      expect(finishOf(refused.events)).toMatchObject({ reason: 'content_filter', refusal: true });
    });

    it('routes MCP tools to /responses even for a chat model; its MCP work comes back as mcp-item events, in order', async () => {
      const listing = {
        id: 'mcpl_1',
        type: 'mcp_list_tools',
        server_label: 'docs',
        tools: [{ name: 'search', input_schema: { type: 'object' }, description: null, annotations: { read_only: true } }],
        error: null,
      };
      const call = {
        id: 'mcp_1',
        type: 'mcp_call',
        server_label: 'docs',
        name: 'search',
        arguments: '{"q":"x"}',
        output: 'found x',
        error: null,
        approval_request_id: null,
        status: 'completed',
      };
      fake.script({ mcpItems: [listing, call], text: 'Used the server.' });
      const { events, error } = await run(
        openai,
        request(gpt4oMini, {
          tools: [
            {
              type: 'mcp',
              serverLabel: 'docs',
              serverUrl: 'https://mcp.example.com/sse',
              allowedTools: ['search'],
              authorization: 'tok',
              requireApproval: 'never',
            },
          ],
        }),
      );
      expect(error).toBeNull();
      expect(textOf(events)).toBe('Used the server.');
      expect(events.filter((e) => e.type === 'mcp-item')).toEqual([
        {
          type: 'mcp-item',
          item: {
            kind: 'list_tools',
            id: 'mcpl_1',
            serverLabel: 'docs',
            tools: [{ name: 'search', inputSchema: { type: 'object' }, annotations: { read_only: true } }],
          },
        },
        {
          type: 'mcp-item',
          item: { kind: 'call', id: 'mcp_1', serverLabel: 'docs', name: 'search', arguments: '{"q":"x"}', output: 'found x' },
        },
      ]);
      expect(events.findIndex((e) => e.type === 'mcp-item')).toBeLessThan(events.findIndex((e) => e.type === 'text-delta'));
      expect(finishOf(events).reason).toBe('stop');
      expect(fake.lastRequest!.path).toBe('/v1/responses');
      expect(fake.lastRequest!.body.tools).toEqual([
        {
          type: 'mcp',
          server_label: 'docs',
          server_url: 'https://mcp.example.com/sse',
          allowed_tools: ['search'],
          authorization: 'tok',
          require_approval: 'never',
        },
      ]);
    });

    it('approvals: the rule goes up as given (absent: OpenAI default), an approval request comes back, the answer goes up with the earlier items', async () => {
      const ask = { id: 'mcpr_1', type: 'mcp_approval_request', server_label: 'docs', name: 'search', arguments: '{"q":"x"}' };
      for (const stream of [true, false]) {
        fake.script({ mcpItems: [ask], text: '', usage: { input: 40, output: 9 } });
        const asked = await run(
          openai,
          request(gpt4oMini, {
            stream,
            tools: [
              {
                type: 'mcp',
                serverLabel: 'docs',
                serverUrl: 'https://mcp.example.com/sse',
                requireApproval: { always: { toolNames: ['search'] }, never: { readOnly: true } },
              },
              { type: 'mcp', serverLabel: 'wiki', serverUrl: 'https://wiki.example.com/mcp' },
            ],
          }),
        );
        expect(asked.error).toBeNull();
        expect(asked.events.filter((e) => e.type === 'mcp-item')).toEqual([
          {
            type: 'mcp-item',
            item: { kind: 'approval_request', id: 'mcpr_1', serverLabel: 'docs', name: 'search', arguments: '{"q":"x"}' },
          },
        ]);
        expect(finishOf(asked.events)).toMatchObject({ reason: 'stop', usage: { inputTokens: 40, outputTokens: 9 } });
        expect(fake.lastRequest!.body.stream).toBe(stream);
        expect(fake.lastRequest!.body.tools).toEqual([
          {
            type: 'mcp',
            server_label: 'docs',
            server_url: 'https://mcp.example.com/sse',
            require_approval: { always: { tool_names: ['search'] }, never: { read_only: true } },
          },
          { type: 'mcp', server_label: 'wiki', server_url: 'https://wiki.example.com/mcp' },
        ]);
      }

      fake.script({
        mcpItems: [
          {
            id: 'mcp_2',
            type: 'mcp_call',
            server_label: 'docs',
            name: 'search',
            arguments: '{"q":"x"}',
            output: 'found',
            approval_request_id: 'mcpr_1',
          },
        ],
        text: 'Found it.',
      });
      const answered = await run(
        openai,
        request(gpt4oMini, {
          tools: [{ type: 'mcp', serverLabel: 'docs', serverUrl: 'https://mcp.example.com/sse', requireApproval: 'always' }],
          messages: [
            { role: 'user', content: 'Search x' },
            {
              role: 'mcp',
              item: { kind: 'list_tools', id: 'mcpl_1', serverLabel: 'docs', tools: [{ name: 'search', inputSchema: { type: 'object' } }] },
            },
            { role: 'mcp', item: { kind: 'approval_request', id: 'mcpr_1', serverLabel: 'docs', name: 'search', arguments: '{"q":"x"}' } },
            { role: 'mcp', item: { kind: 'approval_response', approvalRequestId: 'mcpr_1', approve: true } },
          ],
        }),
      );
      expect(answered.error).toBeNull();
      expect(textOf(answered.events)).toBe('Found it.');
      expect(answered.events.find((e) => e.type === 'mcp-item')).toEqual({
        type: 'mcp-item',
        item: {
          kind: 'call',
          id: 'mcp_2',
          serverLabel: 'docs',
          name: 'search',
          arguments: '{"q":"x"}',
          output: 'found',
          approvalRequestId: 'mcpr_1',
        },
      });
      expect(fake.lastRequest!.body.input).toEqual([
        { type: 'message', role: 'user', content: 'Search x' },
        // As OpenAI's own client echoes them, nulls included.
        {
          type: 'mcp_list_tools',
          id: 'mcpl_1',
          server_label: 'docs',
          tools: [{ name: 'search', input_schema: { type: 'object' }, description: null, annotations: null }],
          error: null,
        },
        { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'docs', name: 'search', arguments: '{"q":"x"}' },
        { type: 'mcp_approval_response', id: null, approval_request_id: 'mcpr_1', approve: true, reason: null },
      ]);
    });

    it('MCP items of earlier turns go to /responses even without MCP tools', async () => {
      fake.script({ text: 'Ok.' });
      const { error } = await run(
        openai,
        request(gpt4oMini, {
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'mcp', item: { kind: 'call', id: 'mcp_9', serverLabel: 'docs', name: 'search', arguments: '{}', output: 'x' } },
          ],
        }),
      );
      expect(error).toBeNull();
      expect(fake.lastRequest!.path).toBe('/v1/responses');
      expect(fake.lastRequest!.body.input[1]).toEqual({
        type: 'mcp_call',
        id: 'mcp_9',
        server_label: 'docs',
        name: 'search',
        arguments: '{}',
        output: 'x',
        error: null,
        approval_request_id: null,
        status: 'completed',
      });
    });

    it('fails when the Responses stream is cut or ends without completion', async () => {
      fake.script({ text: 'A long answer that will be cut', cutAfterChunks: 5 });
      const cut = await run(registry.forModel(o4Mini), request(o4Mini));
      expect(textOf(cut.events).length).toBeGreaterThan(0);
      expect(cut.error).toBeInstanceOf(ProviderError);
      fake.script({ text: 'No end', omitEnd: true });
      const ended = await run(registry.forModel(o4Mini), request(o4Mini));
      expect(textOf(ended.events)).toBe('No end');
      expect(ended.error).toBeInstanceOf(ProviderError);
      expect((ended.error as ProviderError).message).toMatch(/ended before/);
    });
  });

  describe('failures', () => {
    it('maps an HTTP error to ProviderError with the vendor status and message', async () => {
      fake.script({ status: 429, errorMessage: 'Rate limit reached for gpt-4o-mini.' });
      const { events, error } = await run(openai, request(gpt4oMini));
      expect(events).toEqual([]);
      expect(error).toBeInstanceOf(ProviderError);
      const failure = error as ProviderError;
      expect(failure.status).toBe(502);
      expect(failure.vendorStatus).toBe(429);
      expect(failure.message).toContain('Rate limit reached for gpt-4o-mini.');
      expect(failure.details).toEqual({ vendor: 'openai', vendor_status: 429 });
    });

    it('never echoes the API key in an error', async () => {
      const wrong = createProviderRegistry(endpoint('sk-wrong-secret-key-123'), { http: { timeouts: TIMEOUTS } });
      try {
        const { error } = await run(wrong.forModel(gpt4oMini), request(gpt4oMini));
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as ProviderError).vendorStatus).toBe(401);
        expect((error as ProviderError).message).toContain('Incorrect API key provided');
        expect((error as ProviderError).message).not.toContain('sk-wrong-secret-key-123');
      } finally {
        await wrong.close();
      }
    });

    it('times out waiting for headers', async () => {
      fake.script({ headersDelayMs: 1500 });
      const { error } = await run(openai, request(gpt4oMini));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toMatch(/did not answer within/);
    });

    it('times out when the stream goes idle, after delivering what came', async () => {
      fake.script({ text: 'Slow stream here', chunkDelayMs: 1500 });
      const { events, error } = await run(openai, request(gpt4oMini));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toMatch(/sent nothing for/);
      expect(events.every((e) => e.type !== 'finish')).toBe(true);
    });

    it('fails on connection refused', async () => {
      const port = await closedPort();
      const dead = createProviderRegistry(
        new Map([['openai', { vendor: 'openai', protocol: 'openai', apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1` }]]),
        { http: { timeouts: TIMEOUTS } },
      );
      try {
        const { error } = await run(dead.forModel(gpt4oMini), request(gpt4oMini));
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as ProviderError).message).toMatch(/Could not connect to openai \(ECONNREFUSED\)/);
      } finally {
        await dead.close();
      }
    });

    it('delivers text, then fails, when the stream is cut mid-way', async () => {
      fake.script({ text: 'This answer will be cut in the middle.', cutAfterChunks: 4 });
      const { events, error } = await run(openai, request(gpt4oMini));
      expect(textOf(events)).toBe('This answer wil'); // three 5-character deltas arrived before the cut
      expect(error).toBeInstanceOf(ProviderError);
      expect(events.some((e) => e.type === 'finish')).toBe(false);
    });

    it('fails when the chat stream ends without finish or usage', async () => {
      fake.script({ text: 'No end', omitEnd: true });
      expect((await run(openai, request(gpt4oMini))).error).toBeInstanceOf(ProviderError);
      fake.script({ text: 'No usage', omitUsage: true });
      const noUsage = await run(openai, request(gpt4oMini));
      expect((noUsage.error as ProviderError).message).toMatch(/without reporting token usage/);
    });

    it('aborts the upstream request when the client goes away', async () => {
      fake.script({ text: 'A slow answer in many pieces', chunkDelayMs: 150 });
      const cancellation = new Cancellation();
      const events: ProviderEvent[] = [];
      let error: unknown = null;
      try {
        for await (const event of openai.generate(request(gpt4oMini), cancellation)) {
          events.push(event);
          if (event.type === 'text-delta') cancellation.cancel();
        }
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe('client_cancelled');
      const upstream = fake.lastRequest!;
      await upstream.finished;
      expect(upstream.aborted).toBe(true);
    });

    it('aborts the upstream request when the consumer stops iterating', async () => {
      fake.script({ text: 'Another slow answer in many pieces', chunkDelayMs: 150 });
      for await (const event of openai.generate(request(gpt4oMini), new Cancellation())) {
        if (event.type === 'text-delta') break;
      }
      const upstream = fake.lastRequest!;
      await upstream.finished;
      expect(upstream.aborted).toBe(true);
    });
  });
});

describe('OpenAI-compatible provider', () => {
  let fake: FakeVendor<FakeOpenAIReply>;
  let registry: ProviderRegistry;
  const local: TextModel = {
    ...gpt4oMini,
    id: 'local/llama-3',
    namespace: 'local',
    vendor: 'local',
    protocol: 'openai-compatible',
    vendorModelId: 'llama3.1:8b',
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: null, basePath: '/compat/v1' });
    registry = createProviderRegistry(
      new Map([['local', { vendor: 'local', protocol: 'openai-compatible', apiKey: null, baseUrl: fake.url }]]),
      {
        http: { timeouts: TIMEOUTS },
        compatible: { local: { headers: { 'x-tenant': 'team-a' }, excludeParams: ['user', 'presence_penalty'] } },
      },
    );
  });
  afterAll(async () => {
    await registry.close();
    await fake.close();
  });

  it('uses the chat codec at the configured base URL, without Authorization, with its configuration', async () => {
    fake.script({ reasoning: 'hmm', text: 'Local answer.', usage: { input: 8, output: 3 } });
    const { events, error } = await run(
      registry.forModel(local),
      request(local, { user: 'u1', presencePenalty: 0.3, frequencyPenalty: 0.2 }),
    );
    expect(error).toBeNull();
    const sent = fake.lastRequest!;
    expect(sent.path).toBe('/compat/v1/chat/completions');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['x-tenant']).toBe('team-a');
    expect(sent.body.model).toBe('llama3.1:8b');
    expect(sent.body.max_tokens).toBe(1000);
    expect(sent.body).not.toHaveProperty('max_completion_tokens');
    expect(sent.body).not.toHaveProperty('user');
    expect(sent.body).not.toHaveProperty('presence_penalty');
    expect(sent.body.frequency_penalty).toBe(0.2);
    // `reasoning_content` (DeepSeek/vLLM style) becomes reasoning.
    expect(events[0]).toEqual({ type: 'reasoning-delta', text: 'hmm' });
    expect(textOf(events)).toBe('Local answer.');
    expect(finishOf(events).usage).toMatchObject({ inputTokens: 8, outputTokens: 3 });
  });

  it('refuses MCP and custom tools before any upstream call', () => {
    const before = fake.requests.length;
    const provider = registry.forModel(local);
    let thrown: unknown;
    try {
      // Refused by the vendor's capability table, which the pipeline checks before anything is reserved.
      checkVendorCapabilities(
        request(local, {
          tools: [
            { type: 'mcp', serverLabel: 'docs', serverUrl: 'https://x' },
            { type: 'custom', name: 'grep' },
          ],
        }),
        provider.capabilities,
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).status).toBe(400);
    // MCP servers are refused first (a format may declare them apart from its tools), then custom tools.
    expect((thrown as ApiError).message).toMatch(/MCP server 'docs' cannot be used with model/);
    expect(fake.requests.length).toBe(before);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
