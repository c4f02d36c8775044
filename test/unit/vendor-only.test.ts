import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { TextModel } from '../../src/domain/catalog/types';
import type { CanonicalMessage, CanonicalRequest, VendorOnlySettings } from '../../src/domain/generation/canonical';
import { settleVendorOnly } from '../../src/domain/generation/vendor-only';
import { ApiError } from '../../src/domain/shared/errors';
import { decodeMessagesRequest } from '../../src/protocols/anthropic-messages/decode-request';

/** The field policy's rule for settings only Anthropic's protocol carries, once another vendor serves (vendor-only.ts). */

const catalog = builtinCatalog();
const model = (id: string): TextModel => findModel(catalog, id, 'text')!;
const SANDBOX = model('sandbox/echo');
const SONNET = model('anthropic/claude-sonnet-4-5');
const settings = (extra: Partial<VendorOnlySettings>): VendorOnlySettings => ({
  protocol: 'anthropic',
  body: {},
  toolFields: {},
  headers: {},
  contextEdits: [],
  deferredTools: [],
  hints: [],
  ...extra,
});
const thinkingTurn = (text: string): CanonicalMessage => ({
  role: 'assistant',
  content: text,
  toolCalls: [{ id: text, name: 'look', arguments: '{}', kind: 'function' }],
  reasoning: [{ text: `why ${text}`, signature: `sig-${text}` }],
});
const result = (id: string): CanonicalMessage => ({ role: 'tool', toolCallId: id, content: 'ok', isError: false });
const request = (m: TextModel, messages: CanonicalMessage[], vendorOnly: VendorOnlySettings): CanonicalRequest => ({
  model: m,
  messages,
  tools: [],
  maxOutputTokens: 100,
  reasoning: { mode: 'default' },
  vendorOnly,
});
const bound = () => 10;

test('a model of the protocol gets its settings untouched', () => {
  const req = request(
    SONNET,
    [thinkingTurn('a')],
    settings({ contextEdits: [{ kind: 'clear_thinking', field: 'f', keepTurns: 0 }], hints: ['top_k'] }),
  );
  expect(settleVendorOnly(req, bound)).toEqual({ request: req, droppedHints: [] });
});

test('clear_thinking keeps the thinking of the last N assistant turns only (a tool result ends a turn)', () => {
  const messages: CanonicalMessage[] = [
    { role: 'user', content: 'go' },
    thinkingTurn('a'),
    result('a'),
    thinkingTurn('b'),
    result('b'),
    thinkingTurn('c'),
  ];
  const { request: settled, droppedHints } = settleVendorOnly(
    request(SANDBOX, messages, settings({ contextEdits: [{ kind: 'clear_thinking', field: 'f', keepTurns: 2 }], hints: ['top_k'] })),
    bound,
  );
  expect(settled.messages.map((m) => (m.role === 'assistant' ? m.reasoning.length : null))).toEqual([null, 0, null, 1, null, 1]);
  expect(settled.vendorOnly).toBeUndefined();
  expect(droppedHints).toEqual(['top_k']);
});

test("keep 'all' changes nothing", () => {
  const messages = [thinkingTurn('a'), result('a'), thinkingTurn('b')];
  expect(
    settleVendorOnly(
      request(SANDBOX, messages, settings({ contextEdits: [{ kind: 'clear_thinking', field: 'f', keepTurns: 'all' }] })),
      bound,
    ).request.messages,
  ).toEqual(messages);
});

test.each([
  ['under its input-token trigger (the prompt bound is below it)', { unit: 'input_tokens' as const, value: 11 }, 1, [], true],
  ['at its input-token trigger with uses to clear', { unit: 'input_tokens' as const, value: 10 }, 1, [], false],
  ['nothing beyond keep', { unit: 'tool_uses' as const, value: 1 }, 3, [], true],
  ['the other uses are excluded', { unit: 'tool_uses' as const, value: 1 }, 1, ['look'], true],
  ['fewer uses than the trigger', { unit: 'tool_uses' as const, value: 4 }, 1, [], true],
])('clear_tool_uses %s: served only when it provably clears nothing', (_name, trigger, keep, excludeTools, served) => {
  const messages = [thinkingTurn('a'), result('a'), thinkingTurn('b'), result('b'), thinkingTurn('c')];
  const edit = { kind: 'clear_tool_uses' as const, field: 'context_management.edits[1]', trigger, keep, excludeTools };
  // The bound counts thinking too: give it none, so the trigger is compared with the bound alone.
  const plain = messages.map((m) => (m.role === 'assistant' ? { ...m, reasoning: [] } : m));
  const run = () => settleVendorOnly(request(SANDBOX, plain, settings({ contextEdits: [edit] })), bound);
  if (served) expect(run().request.messages).toEqual(plain);
  else
    expect(run).toThrow(
      expect.objectContaining({ status: 400, details: { field: 'context_management.edits[1]', model: 'sandbox/echo' } }) as ApiError,
    );
});

test('a deferred tool stays out until the conversation calls it (or the tool choice names it)', () => {
  const decoded = decodeMessagesRequest({
    model: 'x',
    max_tokens: 10,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'used', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] },
    ],
    tools: ['plain', 'used', 'unused'].map((name) => ({
      name,
      input_schema: { type: 'object' },
      ...(name !== 'plain' ? { defer_loading: true } : {}),
    })),
  });
  const req: CanonicalRequest = { ...decoded.request, model: SANDBOX, maxOutputTokens: 10 };
  expect(settleVendorOnly(req, bound).request.tools.map((t) => (t.type === 'function' ? t.name : ''))).toEqual(['plain', 'used']);
  expect(settleVendorOnly(req, bound).droppedHints).toEqual([]);
});

test("Claude Code's context_management (clear thinking, keep all) decodes to an edit that changes nothing elsewhere", () => {
  const decoded = decodeMessagesRequest(
    {
      model: 'x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    },
    { beta: 'claude-code-20250219,context-management-2025-06-27', version: '2023-06-01' },
  );
  expect(decoded.request.vendorOnly).toEqual(
    settings({
      body: { context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } },
      headers: { 'anthropic-beta': 'claude-code-20250219,context-management-2025-06-27', 'anthropic-version': '2023-06-01' },
      contextEdits: [{ kind: 'clear_thinking', field: 'context_management.edits[0]', keepTurns: 'all' }],
      hints: ['anthropic-beta=claude-code-20250219', 'anthropic-beta=context-management-2025-06-27'],
    }),
  );
});
