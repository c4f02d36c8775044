import type { CanonicalEvent, CanonicalUsage, VendorCapabilities } from '../../src/domain/generation/canonical';
import { namedFor } from '../../src/domain/generation/field-keys';
import { ApiError } from '../../src/domain/shared/errors';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import { collectEvents } from '../../src/protocols/collect';
import { decodeResponsesIngress } from '../../src/protocols/openai-responses/decode-request';
import { encodeResponsesResponse } from '../../src/protocols/openai-responses/encode-answer';
import { ResponsesStreamEncoder } from '../../src/protocols/openai-responses/stream-encoder';
import { toResponsesRequest } from '../../src/protocols/openai-responses/vendor-request';
import { OPENAI_CHAT_OPTIONS, toChatRequest } from '../../src/protocols/openai-chat/vendor-request';
import { decodeChatIngress } from '../../src/protocols/openai-chat/decode-request';
import { SseDecoder } from '../../src/protocols/sse-parse';
import { validateCanonicalRequest } from '../../src/domain/generation/validate';

/**
 * Namespace tools (a group of function tools the client runs, as Codex declares them) are
 * served as the tools they group and their calls are shown under their own name and
 * namespace again; hosted tools are refused saying how to switch them off; hints reach the
 * vendors that have them.
 */

const usage: CanonicalUsage = { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 0 };

const agents = {
  type: 'namespace',
  name: 'multi_agent_v1',
  description: 'Tools for spawning and managing sub-agents.',
  tools: [
    {
      type: 'function',
      name: 'close_agent',
      description: 'Close an agent.',
      strict: false,
      parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
    },
    { type: 'function', name: 'spawn_agent', strict: false, parameters: { type: 'object', properties: {} } },
  ],
};
const request = {
  model: 'o4-mini',
  input: 'Close agent a1',
  tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } }, agents],
};

const callEvents: CanonicalEvent[] = [
  { type: 'tool-call-start', index: 0, id: 'call_1', name: 'multi_agent_v1__close_agent', kind: 'function' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: '{"target":"a1"}' },
  { type: 'tool-call-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'call_2', name: 'exec_command', kind: 'function' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
  { type: 'tool-call-end', index: 1 },
  { type: 'finish', reason: 'tool_calls', refusal: false, usage },
];

function meta(raw: unknown) {
  let n = 0;
  return {
    id: 'resp_1',
    model: 'openai/o4-mini',
    created: 1,
    now: () => 2,
    newId: (prefix: string) => `${prefix}${++n}`,
    echo: decodeResponsesIngress(raw).echo,
  };
}

test('a namespace is served as its tools, named <namespace>__<name>, its description given to each', () => {
  const { decoded, echo } = decodeResponsesIngress(request);
  expect(decoded.request.tools).toStrictEqual([
    { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } },
    {
      type: 'function',
      name: 'multi_agent_v1__close_agent',
      description: 'Close an agent.\n\n(Part of multi_agent_v1: Tools for spawning and managing sub-agents.)',
      parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
      strict: false,
    },
    {
      type: 'function',
      name: 'multi_agent_v1__spawn_agent',
      description: '(Part of multi_agent_v1: Tools for spawning and managing sub-agents.)',
      parameters: { type: 'object', properties: {} },
      strict: false,
    },
  ]);
  // The answer echoes the namespace as declared.
  expect(echo.settings.tools[1]).toMatchObject({
    type: 'namespace',
    name: 'multi_agent_v1',
    tools: [{ name: 'close_agent' }, { name: 'spawn_agent' }],
  });
});

test('calls of namespaced tools are answered with their own name and namespace', () => {
  const answer = encodeResponsesResponse(collectEvents(callEvents), meta(request));
  expect(answer.output).toStrictEqual([
    {
      id: 'fc_1',
      type: 'function_call',
      status: 'completed',
      arguments: '{"target":"a1"}',
      call_id: 'call_1',
      name: 'close_agent',
      namespace: 'multi_agent_v1',
    },
    { id: 'fc_2', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'call_2', name: 'exec_command' },
  ]);
});

test('and streamed the same way (item added, arguments done, item done)', () => {
  const encoder = new ResponsesStreamEncoder(meta(request));
  const decoder = new SseDecoder();
  const events = [...decoder.push(callEvents.map((e) => encoder.encode(e)).join('')), ...decoder.end()].map(
    (e) => JSON.parse(e.data) as Record<string, any>,
  );
  const added = events.find((e) => e.type === 'response.output_item.added')!;
  expect(added.item).toMatchObject({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1', status: 'in_progress' });
  expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({
    name: 'close_agent',
    arguments: '{"target":"a1"}',
  });
  expect(events.at(-1)!.response.output[0]).toMatchObject({ name: 'close_agent', namespace: 'multi_agent_v1' });
});

test('a namespaced call sent back goes to the vendor under its served name; its output may repeat name and namespace', () => {
  const input = [
    { role: 'user', content: 'Close agent a1' },
    { type: 'function_call', call_id: 'call_1', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{"target":"a1"}' },
    { type: 'function_call_output', call_id: 'call_1', name: 'close_agent', namespace: 'multi_agent_v1', output: 'closed' },
  ];
  const { decoded } = decodeResponsesIngress({ ...request, input });
  expect(decoded.request.messages[1]).toMatchObject({
    role: 'assistant',
    toolCalls: [{ id: 'call_1', name: 'multi_agent_v1__close_agent' }],
  });
  expect(decoded.request.messages[2]).toMatchObject({ role: 'tool', toolCallId: 'call_1', content: 'closed' });
});

test('a tool choice may name a namespaced tool by its own name', () => {
  expect(decodeResponsesIngress({ ...request, tool_choice: { type: 'function', name: 'spawn_agent' } }).decoded.request.toolChoice).toEqual(
    { name: 'multi_agent_v1__spawn_agent' },
  );
});

test("a hosted web_search tool is refused with Codex's switch to turn it off", () => {
  let error: unknown;
  try {
    decodeResponsesIngress({ ...request, tools: [...request.tools, { type: 'web_search', external_web_access: false }] });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).message).toBe(
    'tools[2].type \'web_search\' is not supported: hosted tools are not available; remove it and declare function, custom or mcp tools (Codex: web_search = "disabled" in config.toml, or -c web_search=\'"disabled"\')',
  );
  expect((error as ApiError).details).toEqual({ field: 'tools[2].type' });
});

describe('hints reach the vendors that have them', () => {
  const catalog = builtinCatalog();
  const o4 = findModel(catalog, 'openai/o4-mini', 'text')!;
  const gpt4o = findModel(catalog, 'openai/gpt-4o-mini', 'text')!;

  test('Responses upstream: text.verbosity, and max_tool_calls when MCP tools are declared', () => {
    const { decoded } = decodeResponsesIngress({
      model: 'o4-mini',
      input: 'Hi',
      text: { verbosity: 'low' },
      max_tool_calls: 3,
      tools: [{ type: 'mcp', server_label: 'd', server_url: 'https://m', require_approval: 'never' }],
    });
    const body = toResponsesRequest({ ...decoded.request, model: o4, maxOutputTokens: 100 });
    expect(body.text).toEqual({ verbosity: 'low' });
    expect(body.max_tool_calls).toBe(3);
  });

  test('Chat upstream: verbosity and seed (which vendors take them is the hint rule: hints.test.ts)', () => {
    const { decoded } = decodeChatIngress({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      verbosity: 'high',
      seed: 42,
    });
    const canonical = { ...decoded.request, model: gpt4o, maxOutputTokens: 100 };
    expect(toChatRequest(canonical, OPENAI_CHAT_OPTIONS)).toMatchObject({ verbosity: 'high', seed: 42 });
  });
});

test('max_tool_calls with MCP tools is refused for a vendor that cannot limit MCP calls, naming it', () => {
  const claude = findModel(builtinCatalog(), 'anthropic/claude-sonnet-4-5', 'text')!;
  const { decoded, names } = decodeResponsesIngress({
    model: 'claude-sonnet-4-5',
    input: 'Hi',
    max_tool_calls: 1,
    tools: [{ type: 'mcp', server_label: 'd', server_url: 'https://m', require_approval: 'never' }],
  });
  const request = { ...decoded.request, model: claude, maxOutputTokens: 100 };
  const anthropicLike = { customTools: false, mcpServers: true, mcpCalls: true, mcpApprovals: false };
  // As the text endpoints answer: the rule's refusal named as Responses names the field.
  const named = (can: VendorCapabilities) => () => {
    try {
      validateCanonicalRequest(request, can);
    } catch (error) {
      throw namedFor(error, names);
    }
  };
  expect(named(anthropicLike)).toThrow(
    "max_tool_calls cannot be enforced for model 'anthropic/claude-sonnet-4-5': its vendor calls MCP servers without a limit; remove max_tool_calls.",
  );
  expect(() =>
    validateCanonicalRequest(request, { ...anthropicLike, customTools: true, mcpApprovals: true, mcpCallLimit: true }),
  ).not.toThrow();
});

test('a tool choice naming a plain tool keeps it, even when a namespace has a tool of that name', () => {
  const tools = [{ type: 'function', name: 'spawn_agent' }, agents];
  expect(
    decodeResponsesIngress({ ...request, tools, tool_choice: { type: 'function', name: 'spawn_agent' } }).decoded.request.toolChoice,
  ).toEqual({ name: 'spawn_agent' });
});
