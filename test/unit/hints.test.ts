import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { VendorEndpoint } from '../../src/domain/catalog/vendors';
import type { CanonicalHint, CanonicalRequest, VendorOnlySettings } from '../../src/domain/generation/canonical';
import { CANONICAL_HINTS, dropHints, settleForVendor } from '../../src/domain/generation/hints';
import { TOP_LEVEL_HINT_NAMES } from '../../src/protocols/field-policy';
import { decodeChatRequest } from '../../src/protocols/openai-chat/decode-request';
import { decodeMessagesRequest } from '../../src/protocols/anthropic-messages/decode-request';
import { decodeResponsesRequest } from '../../src/protocols/openai-responses/decode-request';
import { createProviderRegistry, type ProviderRegistry } from '../../src/providers/registry';

/**
 * The hint rule (src/domain/generation/hints.ts): what each vendor declares it takes, and how
 * the pipeline drops the rest and names them as each format names them.
 */

const catalog = builtinCatalog();
const model = (id: string): TextModel => findModel(catalog, id, 'text')!;
const LOCAL: TextModel = {
  ...model('openai/gpt-4o-mini'),
  id: 'local/llama',
  namespace: 'local',
  vendor: 'local',
  protocol: 'openai-compatible',
  vendorModelId: 'llama',
};

const endpoint = (vendor: string, protocol: VendorEndpoint['protocol']): VendorEndpoint => ({
  vendor,
  protocol,
  apiKey: 'k',
  baseUrl: 'http://127.0.0.1:9',
});
let registry: ProviderRegistry;
let chatOnly: ProviderRegistry;
beforeAll(() => {
  const endpoints = new Map<string, VendorEndpoint>([
    ['openai', endpoint('openai', 'openai')],
    ['anthropic', endpoint('anthropic', 'anthropic')],
    ['gemini', endpoint('gemini', 'gemini')],
    ['local', endpoint('local', 'openai-compatible')],
  ]);
  registry = createProviderRegistry(endpoints, { compatible: { local: { excludeParams: ['seed'] } } });
  chatOnly = createProviderRegistry(endpoints, { openai: { upstream: 'chat' } });
});
afterAll(async () => {
  await registry.close();
  await chatOnly.close();
});

const request = (m: TextModel, extra: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: m,
  messages: [{ role: 'user', content: 'Hi' }],
  tools: [],
  maxOutputTokens: 20000,
  reasoning: { mode: 'default' },
  ...extra,
});
const takes = (req: CanonicalRequest, from = registry): CanonicalHint[] =>
  CANONICAL_HINTS.filter((hint) => from.forModel(req.model).hints(req).has(hint));

describe('what each vendor takes', () => {
  test.each([
    [
      'OpenAI, Chat upstream',
      () => takes(request(model('openai/gpt-4o-mini'))),
      ['temperature', 'topP', 'frequencyPenalty', 'presencePenalty', 'seed', 'verbosity', 'parallelToolCalls'],
    ],
    ['OpenAI reasoning model, Responses upstream', () => takes(request(model('openai/o4-mini'))), ['verbosity', 'parallelToolCalls']],
    [
      'OpenAI reasoning model, Chat upstream',
      () => takes(request(model('openai/o4-mini')), chatOnly),
      ['seed', 'verbosity', 'parallelToolCalls'],
    ],
    [
      'OpenAI with MCP tools (Responses upstream)',
      () => takes(request(model('openai/gpt-4o-mini'), { tools: [{ type: 'mcp', serverLabel: 'd', serverUrl: 'https://m' }] })),
      ['temperature', 'topP', 'verbosity', 'parallelToolCalls'],
    ],
    ['Anthropic', () => takes(request(model('anthropic/claude-sonnet-4-5'))), ['temperature', 'topP', 'topK', 'parallelToolCalls']],
    [
      'Anthropic, temperature set: not top_p too',
      () => takes(request(model('anthropic/claude-sonnet-4-5'), { temperature: 0.5 })),
      ['temperature', 'topK', 'parallelToolCalls'],
    ],
    [
      'Anthropic while thinking',
      () => takes(request(model('anthropic/claude-sonnet-4-5'), { reasoning: { mode: 'default', effort: 'high' } })),
      ['parallelToolCalls'],
    ],
    [
      'Anthropic, thinking asked with a forced tool (no thinking is sent)',
      () =>
        takes(
          request(model('anthropic/claude-sonnet-4-5'), {
            reasoning: { mode: 'default', effort: 'high' },
            tools: [{ type: 'function', name: 'f', parameters: {} }],
            toolChoice: 'required',
          }),
        ),
      ['temperature', 'topP', 'topK', 'parallelToolCalls'],
    ],
    ['Gemini', () => takes(request(model('google/gemini-2.5-flash'))), ['temperature', 'topP', 'frequencyPenalty', 'presencePenalty']],
    [
      'OpenAI-compatible, seed excluded by its configuration',
      () => takes(request(LOCAL)),
      ['temperature', 'topP', 'frequencyPenalty', 'presencePenalty', 'parallelToolCalls'],
    ],
    ['sandbox', () => takes(request(model('sandbox/echo'))), []],
  ])('%s', (_name, actual, expected) => {
    expect(actual()).toEqual(expected);
  });
});

describe('dropping and naming', () => {
  const gemini = model('google/gemini-2.5-flash');
  const GEMINI_TAKES = new Set<CanonicalHint>(['temperature', 'topP']);
  const settle = (req: CanonicalRequest) => dropHints(req, GEMINI_TAKES, TOP_LEVEL_HINT_NAMES);

  test('nothing to drop: the very same request, and no names', () => {
    const req = request(gemini, { temperature: 0.2 });
    const settled = settle(req);
    expect(settled.request).toBe(req);
    expect(settled.droppedHints).toEqual([]);
  });

  test('what the vendor does not take leaves the request and is named; the rest stays', () => {
    const settled = settle(request(gemini, { temperature: 0.2, seed: 3, verbosity: 'low' }));
    expect(settled.request).toMatchObject({ temperature: 0.2 });
    expect(settled.request.seed).toBeUndefined();
    expect(settled.request.verbosity).toBeUndefined();
    expect(settled.droppedHints).toEqual(['seed', 'verbosity']);
  });

  test('parallel tool calls are named only when tools are declared', () => {
    expect(settle(request(gemini, { parallelToolCalls: false })).droppedHints).toEqual([]);
    expect(
      settle(request(gemini, { parallelToolCalls: false, tools: [{ type: 'function', name: 'f', parameters: {} }] })).droppedHints,
    ).toEqual(['parallel_tool_calls']);
  });

  test.each([
    [
      'Chat',
      decodeChatRequest({ model: 'x', messages: [{ role: 'user', content: 'Hi' }], verbosity: 'low', seed: 1 }),
      ['seed', 'verbosity'],
    ],
    [
      'Responses',
      decodeResponsesRequest({ model: 'x', input: 'Hi', text: { verbosity: 'low' }, presence_penalty: 1 }),
      ['presence_penalty', 'text.verbosity'],
    ],
    [
      'Messages',
      decodeMessagesRequest({
        model: 'x',
        max_tokens: 9,
        messages: [{ role: 'user', content: 'Hi' }],
        top_k: 3,
        tools: [{ name: 'f', input_schema: {} }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      }),
      ['top_k', 'tool_choice.disable_parallel_tool_use'],
    ],
  ])('%s names them as its clients send them (top-level fields before nested ones)', (_format, decoded, names) => {
    const req: CanonicalRequest = { ...decoded.request, model: gemini, maxOutputTokens: 9 };
    expect(dropHints(req, new Set(), decoded.hintNames).droppedHints).toEqual(names);
  });

  test("with another protocol's settings: their headers first, then top-level fields, then nested ones", () => {
    const vendorOnly: VendorOnlySettings = {
      protocol: 'anthropic',
      body: {},
      toolFields: {},
      headers: {},
      contextEdits: [],
      deferredTools: [],
      hints: ['anthropic-beta=b1', 'tools[0].eager_input_streaming', 'service_tier'],
    };
    const settled = settleForVendor(
      request(gemini, { vendorOnly, topK: 4, verbosity: 'low' }),
      { hints: () => GEMINI_TAKES },
      TOP_LEVEL_HINT_NAMES,
      () => 10,
    );
    expect(settled.droppedHints).toEqual(['anthropic-beta=b1', 'service_tier', 'top_k', 'verbosity', 'tools[0].eager_input_streaming']);
    expect(settled.request.vendorOnly).toBeUndefined();
  });
});
