import type {
  CanonicalMcpCall,
  CanonicalMessage,
  CanonicalReasoning,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolCall,
  CanonicalToolChoice,
  ReasoningEffort,
} from '../../domain/generation/canonical';
import { mapReasoningEffort } from '../../domain/generation/rules';
import type { DecodedTextRequest } from '../../domain/generation/service';
import type { WireFieldNames } from '../../domain/generation/validate';
import { Fields, checkToolCount, compact, fieldPath, joinTextParts, nameAt, refuseField } from '../decode-fields';
import { applyFieldPolicy, fieldsOf, fieldsWith } from '../apply-field-policy';
import { TOP_LEVEL_HINT_NAMES } from '../field-policy';
import { type MessagesRequestHeaders, VendorOnlyCollector } from './decode-vendor-only';
import { MESSAGES_FIELD_POLICY, MESSAGES_POLICY, NESTED_FIELD_POLICIES, TOOL_FIELD_POLICY } from './field-policy';

/**
 * Client side of `POST /v1/messages` (Anthropic Messages format): the request body → canonical
 * request. Every refusal is a 400 naming the field (docs/api.md).
 */

/** Every top-level field the decoder reads (others are refused): the field policy's, tied to the request type there; the API document is built from it. */
export const KNOWN_FIELDS = fieldsOf(MESSAGES_FIELD_POLICY);
const TOOL_FIELDS = fieldsOf(TOOL_FIELD_POLICY);
const TOOL_PASSED_FIELDS = fieldsWith(TOOL_FIELD_POLICY, 'passed-to-vendor');
const BLOCK = {
  text: fieldsOf(NESTED_FIELD_POLICIES.text),
  toolUse: fieldsOf(NESTED_FIELD_POLICIES.tool_use),
  toolResult: fieldsOf(NESTED_FIELD_POLICIES.tool_result),
  thinking: fieldsOf(NESTED_FIELD_POLICIES.thinking_block),
  redacted: fieldsOf(NESTED_FIELD_POLICIES.redacted_thinking),
  mcpUse: fieldsOf(NESTED_FIELD_POLICIES.mcp_tool_use),
  mcpResult: fieldsOf(NESTED_FIELD_POLICIES.mcp_tool_result),
  message: fieldsOf(NESTED_FIELD_POLICIES.message),
};

const MEDIA_BLOCKS = ['image', 'document', 'search_result'];
const MIN_THINKING_BUDGET = 1024;

/** Where the canonical rules' refusals point in a Messages request. */
const MESSAGES_FIELDS: WireFieldNames = {
  requiredToolChoice: { field: 'tool_choice.type', value: "'any'" },
  namedToolChoice: { field: 'tool_choice.name', noun: 'a tool' },
  schema: 'output_config.format.schema',
  thinkingBudget: 'thinking.budget_tokens',
  hints: { ...TOP_LEVEL_HINT_NAMES, parallelToolCalls: 'tool_choice.disable_parallel_tool_use' },
};
const MESSAGES_BETA_FORMAT_FIELDS: WireFieldNames = { ...MESSAGES_FIELDS, schema: 'output_format.schema' };

/** The canonical name of a Messages structured-output schema (Anthropic's format has none). */
export const MESSAGES_SCHEMA_NAME = 'output';

type AssistantMessage = Extract<CanonicalMessage, { role: 'assistant' }>;

/** A decoded Messages request, and what its answer's encoding needs to know. */
export interface MessagesIngress {
  decoded: DecodedTextRequest;
  /** `thinking.display: 'omitted'`: thinking blocks are answered with their signature and no text. */
  omitThinking: boolean;
}

/** Validates a Messages body (field policy: field-policy.ts); throws 400 `bad_request` naming the field. */
export function decodeMessagesIngress(body: unknown, headers: MessagesRequestHeaders = {}): MessagesIngress {
  const req = Fields.body(body);
  applyFieldPolicy(req, MESSAGES_POLICY);
  if (req.oneOf('speed', ['standard', 'fast']) === 'fast') refuseField('speed', "'fast' is not supported: fast mode is billed at a premium the catalog price does not cover; send 'standard' or leave it out");
  const billing = req.object('billing_policy')?.allowOnly(['type', 'bill_to']);
  billing?.oneOf('type', ['billing_policy']);
  if (billing?.oneOf('bill_to', ['self', 'user_profile']) === 'user_profile') refuseField('billing_policy.bill_to', "'user_profile' is not supported: the account of the API key pays; send 'self' or leave it out");

  const vendorOnly = new VendorOnlyCollector(headers);
  vendorOnly.pass(req, 'service_tier', (r, key) => r.oneOf(key, ['auto', 'standard_only']));
  vendorOnly.pass(req, 'cache_control', (r, key) => r.jsonObject(key));
  vendorOnly.contextManagement(req);

  const modelId = req.requiredString('model', { nonEmpty: true });
  if (!req.isSet('max_tokens')) refuseField('max_tokens', 'is required');
  const system = decodeSystem(req);
  const messages = [...(system !== undefined ? [{ role: 'system' as const, content: system }] : []), ...decodeMessages(req)];
  const tools = [...decodeTools(req, vendorOnly), ...decodeMcpServers(req)];
  const choice = decodeToolChoice(req);
  const responseFormat = decodeOutputFormat(req);
  const thinking = decodeReasoning(req, vendorOnly);

  const decoded: DecodedTextRequest = {
    modelId,
    // Required above, so the fallback is never used.
    outputLimit: { value: req.raw('max_tokens'), field: 'max_tokens', fallback: 0 },
    request: compact({
      messages,
      tools,
      toolChoice: choice?.toolChoice,
      parallelToolCalls: choice?.parallelToolCalls,
      responseFormat,
      stop: decodeStopSequences(req),
      temperature: req.number('temperature', { min: 0, max: 1 }),
      topP: req.number('top_p', { min: 0, max: 1 }),
      topK: req.integer('top_k', { min: 0 }),
      reasoning: thinking.reasoning,
      user: req.object('metadata')?.string('user_id'),
      vendorOnly: vendorOnly.settings(),
    }),
    stream: req.boolean('stream') ?? false,
    // Which of the two fields carried the schema, for a refusal to name it.
    fields: req.object('output_format') ? MESSAGES_BETA_FORMAT_FIELDS : MESSAGES_FIELDS,
  };
  return { decoded, omitThinking: thinking.omitted };
}

/** The canonical request of a Messages body (see decodeMessagesIngress). */
export const decodeMessagesRequest = (body: unknown, headers: MessagesRequestHeaders = {}): DecodedTextRequest => decodeMessagesIngress(body, headers).decoded;

function decodeSystem(req: Fields): string | undefined {
  const value = req.raw('system');
  if (value === undefined || typeof value === 'string') return value;
  if (!Array.isArray(value)) refuseField('system', 'must be a string or an array of text blocks');
  return joinTextParts(value.map((raw, i) => textBlock(Fields.at(raw, fieldPath('system', i)))));
}

function textBlock(block: Fields): string {
  const type = block.requiredString('type');
  if (type !== 'text') refuseBlock(block, type, "'text'");
  block.allowOnly(BLOCK.text);
  return block.requiredString('text');
}

function decodeMessages(req: Fields): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  req.requiredArray('messages', { nonEmpty: true }).forEach((raw, i) => {
    const message = Fields.at(raw, fieldPath('messages', i)).allowOnly(BLOCK.message);
    const role = message.requiredOneOf('role', ['user', 'assistant', 'system']);
    const content = message.raw('content');
    const field = message.field('content');
    if (content === undefined) refuseField(field, 'is required');
    if (typeof content !== 'string' && !Array.isArray(content)) refuseField(field, 'must be a string or an array of content blocks');
    const blocks = typeof content === 'string' ? null : content.map((b, j) => Fields.at(b, fieldPath(field, j)));
    if (role === 'assistant') out.push(...assistantMessages(typeof content === 'string' ? content : null, blocks ?? []));
    else if (role === 'system') out.push({ role: 'system', content: typeof content === 'string' ? content : joinTextParts(blocks!.map(textBlock)) });
    else out.push(...userMessages(typeof content === 'string' ? content : null, blocks ?? []));
  });
  return out;
}

/** Refuses a block type the role cannot carry, naming media and server-side blocks precisely. */
function refuseBlock(block: Fields, type: string, allowed: string): never {
  if (MEDIA_BLOCKS.includes(type)) refuseField(block.field('type'), `'${type}' is not supported: chat endpoints take text input only`);
  return refuseField(block.field('type'), `'${type}' is not supported here; expected ${allowed}`);
}

/** A user turn: its tool results become tool messages (first, as Anthropic requires), its text a user message. */
function userMessages(text: string | null, blocks: Fields[]): CanonicalMessage[] {
  if (text !== null) return [{ role: 'user', content: text }];
  const results: CanonicalMessage[] = [];
  const texts: string[] = [];
  for (const block of blocks) {
    const type = block.requiredString('type');
    if (type === 'text') texts.push(textBlock(block));
    else if (type === 'tool_result') results.push(toolResult(block));
    else refuseBlock(block, type, "'text' or 'tool_result'");
  }
  return texts.length > 0 || results.length === 0 ? [...results, { role: 'user', content: joinTextParts(texts) }] : results;
}

function toolResult(block: Fields): CanonicalMessage {
  block.allowOnly(BLOCK.toolResult);
  block.string('toolset_name');
  const value = block.raw('content');
  const field = block.field('content');
  let content = '';
  if (typeof value === 'string') content = value;
  else if (Array.isArray(value)) {
    content = joinTextParts(
      value.map((raw, k) => {
        const part = Fields.at(raw, fieldPath(field, k));
        const type = part.requiredString('type');
        return type === 'text' ? textBlock(part) : refuseBlock(part, type, "'text' (tool results are text only)");
      }),
    );
  } else if (value !== undefined) refuseField(field, 'must be a string or an array of text blocks');
  return { role: 'tool', toolCallId: block.requiredString('tool_use_id', { nonEmpty: true }), content, isError: block.boolean('is_error') ?? false };
}

/**
 * An assistant turn. MCP calls Anthropic made in it (`mcp_tool_use`, then its `mcp_tool_result`)
 * become canonical MCP calls where they stood, so the turn splits around them: the egress
 * codecs join consecutive assistant messages again.
 */
function assistantMessages(text: string | null, blocks: Fields[]): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  let message: AssistantMessage = { role: 'assistant', content: text ?? '', toolCalls: [], reasoning: [] };
  let texts: string[] = [];
  const flush = () => {
    if (text === null) message.content = joinTextParts(texts);
    if (message.content !== '' || message.toolCalls.length > 0 || message.reasoning.length > 0) out.push(message);
    message = { role: 'assistant', content: '', toolCalls: [], reasoning: [] };
    texts = [];
  };
  const uses = new Map<string, CanonicalMcpCall>();
  for (const block of blocks) {
    const type = block.requiredString('type');
    switch (type) {
      case 'mcp_tool_use': {
        const use = mcpToolUse(block);
        if (uses.has(use.id)) refuseField(block.field('id'), `repeats the id '${use.id}' of an earlier mcp_tool_use`);
        uses.set(use.id, use);
        flush();
        out.push({ role: 'mcp', item: use });
        break;
      }
      case 'mcp_tool_result': {
        const { toolUseId, content, isError } = mcpToolResult(block);
        const use = uses.get(toolUseId);
        if (!use) refuseField(block.field('tool_use_id'), `'${toolUseId}' names no mcp_tool_use before it in this turn`);
        // The call is completed in place: its message was pushed when the use came.
        if (isError) use.error = content;
        else use.output = content;
        uses.delete(toolUseId);
        break;
      }
      case 'text':
        texts.push(textBlock(block));
        break;
      case 'tool_use':
        message.toolCalls.push(toolUse(block));
        break;
      case 'thinking':
        block.allowOnly(BLOCK.thinking);
        message.reasoning.push({ text: block.requiredString('thinking'), signature: block.requiredString('signature') });
        break;
      case 'redacted_thinking':
        block.allowOnly(BLOCK.redacted);
        message.reasoning.push({ text: '', redactedData: block.requiredString('data') });
        break;
      default:
        refuseBlock(block, type, "'text', 'tool_use', 'thinking', 'redacted_thinking', 'mcp_tool_use' or 'mcp_tool_result'");
    }
  }
  flush();
  // A turn must say something: an empty one stays, as before.
  return out.length > 0 ? out : [{ role: 'assistant', content: '', toolCalls: [], reasoning: [] }];
}

function mcpToolUse(block: Fields): CanonicalMcpCall {
  block.allowOnly(BLOCK.mcpUse);
  const input = block.raw('input');
  if (input === undefined || typeof input !== 'object' || Array.isArray(input)) refuseField(block.field('input'), 'must be an object');
  return { kind: 'call', id: block.requiredString('id', { nonEmpty: true }), serverLabel: block.requiredString('server_name', { nonEmpty: true }), name: block.requiredString('name'), arguments: JSON.stringify(input) };
}

function mcpToolResult(block: Fields): { toolUseId: string; content: string; isError: boolean } {
  block.allowOnly(BLOCK.mcpResult);
  const value = block.raw('content');
  const field = block.field('content');
  let content = '';
  if (typeof value === 'string') content = value;
  else if (Array.isArray(value)) content = joinTextParts(value.map((raw, k) => textBlock(Fields.at(raw, fieldPath(field, k)))));
  else if (value !== undefined) refuseField(field, 'must be a string or an array of text blocks');
  return { toolUseId: block.requiredString('tool_use_id', { nonEmpty: true }), content, isError: block.boolean('is_error') ?? false };
}

function toolUse(block: Fields): CanonicalToolCall {
  // `caller` is what newer Anthropic answers attach; a client echoing an answer back sends it.
  block.allowOnly(BLOCK.toolUse);
  block.string('toolset_name');
  const input = block.raw('input');
  if (input === undefined || typeof input !== 'object' || Array.isArray(input)) refuseField(block.field('input'), 'must be an object');
  return { id: block.requiredString('id', { nonEmpty: true }), name: block.requiredString('name'), arguments: JSON.stringify(input), kind: 'function' };
}

function decodeTools(req: Fields, vendorOnly: VendorOnlyCollector): CanonicalTool[] {
  const list = req.array('tools') ?? [];
  checkToolCount(list, 'tools');
  return list.map((raw, i) => {
    const tool = Fields.at(raw, fieldPath('tools', i));
    const type = tool.string('type');
    if (type !== undefined && type !== 'custom') {
      refuseField(tool.field('type'), `'${type}' is not supported: server tools are not available; declare client tools with input_schema`);
    }
    tool.allowOnly(TOOL_FIELDS);
    const schema = tool.jsonObject('input_schema');
    if (!schema) refuseField(tool.field('input_schema'), 'is required');
    const name = nameAt(tool, 'name');
    for (const key of TOOL_PASSED_FIELDS) vendorOnly.passToolField(tool, name, key, readToolField(tool, key));
    return compact<CanonicalTool>({ type: 'function', name, description: tool.string('description'), parameters: schema, strict: tool.boolean('strict') });
  });
}

/** A tool's passed-to-vendor field, type-checked as Anthropic types it. */
function readToolField(tool: Fields, key: (typeof TOOL_PASSED_FIELDS)[number]): unknown {
  switch (key) {
    case 'eager_input_streaming':
    case 'defer_loading':
      return tool.boolean(key);
    case 'cache_control':
      return tool.jsonObject(key);
    case 'input_examples':
      return tool.objects(key)?.map((example) => example.value);
    case 'allowed_callers':
      return tool.strings(key);
  }
}

/**
 * Beta `mcp_servers` → canonical MCP tools (a server with `enabled: false` offers nothing and is
 * left out). Anthropic calls them without asking, so approvals are off whichever vendor serves.
 */
function decodeMcpServers(req: Fields): CanonicalTool[] {
  return (req.objects('mcp_servers') ?? []).flatMap((server): CanonicalTool[] => {
    server.requiredOneOf('type', ['url']);
    server.allowOnly(['type', 'url', 'name', 'authorization_token', 'tool_configuration']);
    const config = server.object('tool_configuration')?.allowOnly(['allowed_tools', 'enabled']);
    const tool = compact<CanonicalTool>({
      type: 'mcp',
      serverLabel: server.requiredString('name', { nonEmpty: true }),
      serverUrl: server.requiredString('url', { nonEmpty: true }),
      authorization: server.string('authorization_token'),
      allowedTools: config?.strings('allowed_tools'),
      requireApproval: 'never',
    });
    return config?.boolean('enabled') === false ? [] : [tool];
  });
}

function decodeToolChoice(req: Fields): { toolChoice: CanonicalToolChoice; parallelToolCalls?: boolean } | undefined {
  const choice = req.object('tool_choice');
  if (!choice) return undefined;
  const type = choice.requiredOneOf('type', ['auto', 'any', 'tool', 'none']);
  if (type === 'none') {
    choice.allowOnly(['type']);
    return { toolChoice: 'none' };
  }
  choice.allowOnly(type === 'tool' ? ['type', 'name', 'disable_parallel_tool_use'] : ['type', 'disable_parallel_tool_use']);
  const disableParallel = choice.boolean('disable_parallel_tool_use');
  let toolChoice: CanonicalToolChoice;
  if (type === 'tool') {
    const name = choice.requiredString('name');
    toolChoice = { name };
  } else {
    toolChoice = type === 'any' ? 'required' : 'auto';
  }
  return compact({ toolChoice, parallelToolCalls: disableParallel === undefined ? undefined : !disableParallel });
}

/**
 * `thinking` and `output_config.effort` together make the canonical reasoning setting;
 * `display: 'omitted'` is emulated by the answer's encoding (thinking blocks without their text).
 */
function decodeReasoning(req: Fields, vendorOnly: VendorOnlyCollector): { reasoning: CanonicalReasoning; omitted: boolean } {
  const effort = decodeEffort(req, vendorOnly);
  const thinking = req.object('thinking');
  if (!thinking) return { reasoning: compact({ mode: 'default', effort }), omitted: false };
  const type = thinking.requiredOneOf('type', ['disabled', 'enabled', 'adaptive']);
  if (type === 'disabled') {
    thinking.allowOnly(['type']);
    return { reasoning: compact({ mode: 'disabled', effort }), omitted: false };
  }
  thinking.allowOnly(type === 'enabled' ? ['type', 'budget_tokens', 'display'] : ['type', 'display']);
  const omitted = thinking.oneOf('display', ['summarized', 'omitted']) === 'omitted';
  if (type === 'adaptive') return { reasoning: compact({ mode: 'adaptive', effort }), omitted };
  if (!thinking.isSet('budget_tokens')) refuseField(thinking.field('budget_tokens'), 'is required when thinking is enabled');
  const budgetTokens = thinking.integer('budget_tokens', { min: MIN_THINKING_BUDGET });
  return { reasoning: compact({ mode: 'enabled', budgetTokens, effort }), omitted };
}

/** Anthropic's effort levels; `max` (and `xhigh`) mean the canonical `extra_high`. */
function decodeEffort(req: Fields, vendorOnly: VendorOnlyCollector): ReasoningEffort | undefined {
  const config = req.object('output_config')?.allowOnly(fieldsOf(NESTED_FIELD_POLICIES.output_config));
  if (config) vendorOnly.passNested(config, 'output_config', 'task_budget', config.jsonObject('task_budget'));
  const effort = config?.oneOf('effort', ['low', 'medium', 'high', 'xhigh', 'max']);
  return effort === 'max' ? 'extra_high' : mapReasoningEffort(effort, 'output_config.effort');
}

/** Structured output: `output_config.format`, or the beta spelling `output_format` (not both). */
function decodeOutputFormat(req: Fields): CanonicalResponseFormat | undefined {
  const config = req.object('output_config');
  const current = config?.object('format');
  const beta = req.object('output_format');
  if (current && beta) refuseField('output_format', 'cannot be sent together with output_config.format');
  const format = current ?? beta;
  if (!format) return undefined;
  format.requiredOneOf('type', ['json_schema']);
  format.allowOnly(['type', 'schema']);
  const schema = format.jsonObject('schema');
  if (!schema) refuseField(format.field('schema'), 'is required');
  // Anthropic constrains decoding to the schema: strict by construction.
  return { type: 'json_schema', name: MESSAGES_SCHEMA_NAME, schema, strict: true };
}

function decodeStopSequences(req: Fields): string[] | undefined {
  const list = req.strings('stop_sequences');
  list?.forEach((s, i) => {
    if (s === '') refuseField(fieldPath('stop_sequences', i), 'must not be empty');
  });
  return list && list.length > 0 ? list : undefined;
}
