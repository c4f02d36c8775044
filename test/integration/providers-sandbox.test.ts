import { Cancellation } from '../../src/domain/generation/cancellation';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { CanonicalEvent, CanonicalRequest, TextProvider } from '../../src/domain/generation/canonical';
import { ProviderError } from '../../src/domain/generation/errors';
import { ApiError } from '../../src/domain/shared/errors';
import { createProviderRegistry } from '../../src/providers/registry';
import {
  SANDBOX_FALLBACK_ANSWER,
  SANDBOX_REASONING_TOKENS,
  SANDBOX_REFUSAL,
  SandboxProvider,
  sandboxTokens,
} from '../../src/providers/sandbox';
import { finishOf, runProvider, textOf } from '../support/provider-events';
import { checkVendorCapabilities } from '../../src/domain/generation/capabilities';

/** The sandbox vendor: deterministic, offline, streaming, driven by magic words. No HTTP. */

const echo = findModel(builtinCatalog(), 'sandbox/echo', 'text')!;
const reasoner = findModel(builtinCatalog(), 'sandbox/reasoner', 'text')!;
const sandbox = new SandboxProvider();

function request(content: string, overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: echo,
    messages: [{ role: 'user', content }],
    tools: [],
    maxOutputTokens: 1000,
    reasoning: { mode: 'default' },
    ...overrides,
  };
}

const run = (req: CanonicalRequest, provider: TextProvider = sandbox, signal?: Cancellation) => runProvider(provider, req, signal);
const reasoningOf = (events: CanonicalEvent[]) => events.flatMap((e) => (e.type === 'reasoning-delta' ? [e.text] : [])).join('');

describe('sandbox provider', () => {
  it('is what the registry serves for sandbox models, with no endpoint needed', () => {
    const registry = createProviderRegistry(new Map());
    expect(registry.forModel(echo)).toBeInstanceOf(SandboxProvider);
    return registry.close();
  });

  it('echoes the last user message word by word with deterministic usage', async () => {
    const first = await run(request('Hello sandbox, how are you?'));
    expect(first.events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text)).toEqual([
      'Hello',
      ' sandbox,',
      ' how',
      ' are',
      ' you?',
    ]);
    const finish = finishOf(first.events);
    expect(finish).toMatchObject({ reason: 'stop', refusal: false });
    expect(finish.usage.outputTokens).toBe(['Hello', ' sandbox,', ' how', ' are', ' you?'].reduce((n, w) => n + sandboxTokens(w), 0));
    expect(finish.usage.inputTokens).toBe(3 + 3 + sandboxTokens('Hello sandbox, how are you?'));
    expect(finish.usage.reasoningTokens).toBe(0);
    const second = await run(request('Hello sandbox, how are you?'));
    expect(second.events).toEqual(first.events);
    expect(textOf((await run(request('[sandbox:cached=0]'))).events)).toBe(SANDBOX_FALLBACK_ANSWER);
  });

  it('with tool_choice auto, calls the offered tool whose subject the message names, as a model would', async () => {
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { location: { type: 'string' } } },
    };
    const files = { type: 'function' as const, name: 'listFiles', parameters: { type: 'object', properties: {} } };
    const asked = await run(request("What's the weather like in San Francisco?", { tools: [files, weather] }));
    expect(asked.events.find((e) => e.type === 'tool-call-start')).toMatchObject({ name: 'get_weather' });
    expect(finishOf(asked.events).reason).toBe('tool_calls');
    // Generic verbs say nothing; a subject not named, or tool_choice none, gets text.
    for (const [text, choice] of [
      ['list them', 'auto'],
      ['Say hello', 'auto'],
      ['the weather', 'none'],
    ] as const) {
      const answered = await run(request(text, { tools: [files, weather], toolChoice: choice }));
      expect(finishOf(answered.events).reason).toBe('stop');
    }
    expect(finishOf((await run(request('Show my files', { tools: [files] }))).events).reason).toBe('tool_calls');
  });

  it('stops at the output limit with finish length', async () => {
    const { events } = await run(request('one two three four five six seven eight', { maxOutputTokens: 3 }));
    expect(textOf(events)).toBe('one two three');
    expect(finishOf(events)).toMatchObject({ reason: 'length', usage: { outputTokens: 3 } });
  });

  it("refuses a prompt over the model's context as a vendor does (HTTP 400, nothing answered), and serves one that just fits", async () => {
    const text = 'word '.repeat(100).trim(); // 100 tokens
    const inputTokens = 3 + 3 + sandboxTokens(text);
    const over = await run(request(text, { model: { ...echo, contextLength: inputTokens - 1 } }));
    expect(over.events).toEqual([]);
    expect(over.error).toBeInstanceOf(ProviderError);
    expect((over.error as ProviderError).vendorStatus).toBe(400);
    expect((over.error as ProviderError).message).toBe(
      `sandbox answered HTTP 400: This model's maximum context length is ${inputTokens - 1} tokens. However, your messages resulted in ${inputTokens} tokens. Please reduce the length of the messages.`,
    );
    const fits = await run(request(text, { model: { ...echo, contextLength: inputTokens }, maxOutputTokens: 5 }));
    expect(fits.error).toBeNull();
    expect(finishOf(fits.events).usage.inputTokens).toBe(inputTokens);
  });

  it('[sandbox:fail] fails before any output; [sandbox:cut] after some', async () => {
    const failed = await run(request('[sandbox:fail] hi'));
    expect(failed.events).toEqual([]);
    expect(failed.error).toBeInstanceOf(ProviderError);
    expect((failed.error as ProviderError).vendorStatus).toBe(500);
    const cut = await run(request('[sandbox:cut] one two three four'));
    expect(textOf(cut.events)).toBe('one two');
    expect(cut.error).toBeInstanceOf(ProviderError);
  });

  it('[sandbox:refuse] answers a refusal', async () => {
    const { events } = await run(request('[sandbox:refuse] do something bad'));
    expect(textOf(events)).toBe(SANDBOX_REFUSAL);
    expect(finishOf(events)).toMatchObject({ reason: 'content_filter', refusal: true });
  });

  it('[sandbox:reason=N] streams N reasoning tokens before the text and reports them', async () => {
    const { events } = await run(request('[sandbox:reason=12] Answer now'));
    expect(reasoningOf(events)).toBe('Let me think about this step by step. Let me think');
    const types = events.map((e) => e.type);
    expect(types.indexOf('reasoning-end')).toBeLessThan(types.indexOf('text-delta'));
    expect(textOf(events)).toBe('Answer now');
    expect(finishOf(events).usage).toMatchObject({
      reasoningTokens: 12,
      outputTokens: 12 + sandboxTokens('Answer') + sandboxTokens(' now'),
    });
  });

  it('reasoning can use the whole output limit: finish length with no text', async () => {
    const { events } = await run(request('[sandbox:reason=50] never shown', { maxOutputTokens: 20 }));
    expect(textOf(events)).toBe('');
    expect(finishOf(events)).toMatchObject({ reason: 'length', usage: { outputTokens: 20, reasoningTokens: 20 } });
  });

  it('sandbox/reasoner reasons by effort; disabled means none', async () => {
    const high = await run(request('Q', { model: reasoner, reasoning: { mode: 'default', effort: 'high' } }));
    expect(finishOf(high.events).usage.reasoningTokens).toBe(SANDBOX_REASONING_TOKENS.high);
    const byDefault = await run(request('Q', { model: reasoner }));
    expect(finishOf(byDefault.events).usage.reasoningTokens).toBe(SANDBOX_REASONING_TOKENS.medium);
    const budgeted = await run(request('Q', { model: reasoner, reasoning: { mode: 'enabled', budgetTokens: 10 } }));
    expect(finishOf(budgeted.events).usage.reasoningTokens).toBe(10);
    const off = await run(request('Q', { model: reasoner, reasoning: { mode: 'disabled' } }));
    expect(finishOf(off.events).usage.reasoningTokens).toBe(0);
    // Models without an effort setting never reason on their own.
    expect(finishOf((await run(request('Q', { reasoning: { mode: 'default', effort: 'high' } }))).events).usage.reasoningTokens).toBe(0);
  });

  it('[sandbox:hidden-reasoning=N] bills N more output tokens without reporting a reasoning count', async () => {
    const { events } = await run(request('[sandbox:hidden-reasoning=40] Visible'));
    expect(reasoningOf(events)).toBe('');
    expect(textOf(events)).toBe('Visible');
    expect(finishOf(events).usage).toMatchObject({ outputTokens: 40 + sandboxTokens('Visible'), reasoningTokens: null });
  });

  it('[sandbox:tool=NAME] calls an offered tool with arguments from its schema; the follow-up answers from the result', async () => {
    const tools: CanonicalRequest['tools'] = [
      { type: 'function', name: 'other', parameters: { type: 'object' } },
      {
        type: 'function',
        name: 'get_weather',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { enum: ['c', 'f'] }, tags: { type: 'array' } },
        },
      },
    ];
    const { events } = await run(request('[sandbox:tool=get_weather] weather?', { tools }));
    const start = events.find((e) => e.type === 'tool-call-start');
    expect(start).toMatchObject({ index: 0, name: 'get_weather', kind: 'function' });
    const args = events.flatMap((e) => (e.type === 'tool-call-delta' ? [e.argumentsDelta] : [])).join('');
    expect(JSON.parse(args)).toEqual({ city: 'sandbox', days: 1, unit: 'c', tags: [] });
    expect(events.map((e) => e.type).slice(-2)).toEqual(['tool-call-end', 'finish']);
    expect(finishOf(events).reason).toBe('tool_calls');

    const id = (start as { id: string }).id;
    const followUp = await run(
      request('', {
        tools,
        messages: [
          { role: 'user', content: '[sandbox:tool=get_weather] weather?' },
          { role: 'assistant', content: '', reasoning: [], toolCalls: [{ id, name: 'get_weather', arguments: args, kind: 'function' }] },
          { role: 'tool', toolCallId: id, content: 'sunny', isError: false },
        ],
      }),
    );
    expect(textOf(followUp.events)).toBe('Tool get_weather returned: sunny');
    expect(finishOf(followUp.events).reason).toBe('stop');

    // Not offered: answers normally. Forced by tool choice: called without magic words.
    expect(finishOf((await run(request('[sandbox:tool=missing] hi', { tools }))).events).reason).toBe('stop');
    const forced = await run(request('hi', { tools, toolChoice: { name: 'other' } }));
    expect(forced.events.find((e) => e.type === 'tool-call-start')).toMatchObject({ name: 'other' });
  });

  it('answers JSON for json_object and json_schema', async () => {
    const object = await run(request('Say hi', { responseFormat: { type: 'json_object' } }));
    expect(JSON.parse(textOf(object.events))).toEqual({ answer: 'Say hi' });
    const schema = await run(
      request('x', {
        responseFormat: {
          type: 'json_schema',
          name: 's',
          schema: { type: 'object', properties: { ok: { type: 'boolean' }, n: { type: 'number' } } },
        },
      }),
    );
    expect(JSON.parse(textOf(schema.events))).toEqual({ ok: true, n: 1 });
  });

  it('[sandbox:cached=N] reports cached input tokens, capped at the input', async () => {
    expect(finishOf((await run(request('[sandbox:cached=5] hi'))).events).usage.cachedInputTokens).toBe(5);
    const all = finishOf((await run(request('[sandbox:cached=100000] hi'))).events).usage;
    expect(all.cachedInputTokens).toBe(all.inputTokens);
  });

  it('[sandbox:delay=MS] paces deltas, and an abort stops the stream promptly', async () => {
    const cancellation = new Cancellation();
    const started = Date.now();
    const events: CanonicalEvent[] = [];
    let error: unknown = null;
    try {
      for await (const event of sandbox.generate(request('[sandbox:delay=50] a b c d e f g h'), cancellation)) {
        if (event.type === 'input-usage' || event.type === 'served-by') continue;
        events.push(event);
        if (events.length === 2) cancellation.cancel();
      }
    } catch (e) {
      error = e;
    }
    expect(textOf(events)).toBe('a b');
    expect((error as ProviderError).code).toBe('client_cancelled');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('declares that it cannot serve MCP tools', () => {
    expect(() =>
      checkVendorCapabilities(request('hi', { tools: [{ type: 'mcp', serverLabel: 'm', serverUrl: 'https://x' }] }), sandbox.capabilities),
    ).toThrow(ApiError);
  });
});
