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
import { Fields, checkToolCount, compact, fieldListOf, fieldPath, joinTextParts, nameAt, refuseField } from '../decode-fields';
import type { MessageCreateParams } from './types';

/**
 * Client side of `POST /v1/messages` (Anthropic Messages format): the request body → canonical
 * request. Every refusal is a 400 naming the field (docs/api.md).
 */

/** Every top-level field the decoder reads (others are refused), exactly the request type's; the API document is built from this list. */
export const KNOWN_FIELDS = fieldListOf<MessageCreateParams>()([
  'model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'output_format',
  'stop_sequences', 'temperature', 'top_p', 'top_k', 'stream', 'metadata', 'mcp_servers', 'service_tier',
  'cache_control', 'container', 'context_management', 'inference_geo', 'speed', 'diagnostics',
]);

const MEDIA_BLOCKS = ['image', 'document', 'search_result'];
const MIN_THINKING_BUDGET = 1024;

/** Where the canonical rules' refusals point in a Messages request. */
const MESSAGES_FIELDS: WireFieldNames = {
  requiredToolChoice: { field: 'tool_choice.type', value: "'any'" },
  namedToolChoice: { field: 'tool_choice.name', noun: 'a tool' },
  schema: 'output_config.format.schema',
  thinkingBudget: 'thinking.budget_tokens',
};
const MESSAGES_BETA_FORMAT_FIELDS: WireFieldNames = { ...MESSAGES_FIELDS, schema: 'output_format.schema' };

/** The canonical name of a Messages structured-output schema (Anthropic's format has none). */
export const MESSAGES_SCHEMA_NAME = 'output';

type AssistantMessage = Extract<CanonicalMessage, { role: 'assistant' }>;

/** Validates a Messages body; throws 400 `bad_request` naming the field. */
export function decodeMessagesRequest(body: unknown): DecodedTextRequest {
  const req = Fields.body(body).allowOnly(KNOWN_FIELDS);
  req.refuseIfSet(['top_k'], 'is not supported: not every vendor behind Tollgate offers top-k sampling');
  req.refuseIfSet(['container', 'context_management', 'inference_geo', 'diagnostics']);
  if (req.oneOf('speed', ['standard', 'fast']) === 'fast') refuseField('speed', "'fast' is not supported");
  // Accepted and ignored: routing and prompt-caching hints with no effect on the answer.
  req.oneOf('service_tier', ['auto', 'standard_only']);
  req.object('cache_control');

  const modelId = req.requiredString('model', { nonEmpty: true });
  if (!req.isSet('max_tokens')) refuseField('max_tokens', 'is required');
  const system = decodeSystem(req);
  const messages = [...(system !== undefined ? [{ role: 'system' as const, content: system }] : []), ...decodeMessages(req)];
  const tools = [...decodeTools(req), ...decodeMcpServers(req)];
  const choice = decodeToolChoice(req);
  const metadata = req.object('metadata')?.allowOnly(['user_id']);
  const responseFormat = decodeOutputFormat(req);

  return {
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
      reasoning: decodeReasoning(req),
      user: metadata?.string('user_id'),
    }),
    stream: req.boolean('stream') ?? false,
    // Which of the two fields carried the schema, for a refusal to name it.
    fields: req.object('output_format') ? MESSAGES_BETA_FORMAT_FIELDS : MESSAGES_FIELDS,
  };
}

function decodeSystem(req: Fields): string | undefined {
  const value = req.raw('system');
  if (value === undefined || typeof value === 'string') return value;
  if (!Array.isArray(value)) refuseField('system', 'must be a string or an array of text blocks');
  return joinTextParts(value.map((raw, i) => textBlock(Fields.at(raw, fieldPath('system', i)))));
}

function textBlock(block: Fields): string {
  const type = block.requiredString('type');
  if (type !== 'text') refuseBlock(block, type, "'text'");
  block.allowOnly(['type', 'text', 'cache_control', 'citations']);
  return block.requiredString('text');
}

function decodeMessages(req: Fields): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  req.requiredArray('messages', { nonEmpty: true }).forEach((raw, i) => {
    const message = Fields.at(raw, fieldPath('messages', i)).allowOnly(['role', 'content']);
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
  block.allowOnly(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
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
        block.allowOnly(['type', 'thinking', 'signature']);
        message.reasoning.push({ text: block.requiredString('thinking'), signature: block.requiredString('signature') });
        break;
      case 'redacted_thinking':
        block.allowOnly(['type', 'data']);
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
  block.allowOnly(['type', 'id', 'name', 'server_name', 'input', 'cache_control']);
  const input = block.raw('input');
  if (input === undefined || typeof input !== 'object' || Array.isArray(input)) refuseField(block.field('input'), 'must be an object');
  return { kind: 'call', id: block.requiredString('id', { nonEmpty: true }), serverLabel: block.requiredString('server_name', { nonEmpty: true }), name: block.requiredString('name'), arguments: JSON.stringify(input) };
}

function mcpToolResult(block: Fields): { toolUseId: string; content: string; isError: boolean } {
  block.allowOnly(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
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
  block.allowOnly(['type', 'id', 'name', 'input', 'cache_control', 'caller']);
  const input = block.raw('input');
  if (input === undefined || typeof input !== 'object' || Array.isArray(input)) refuseField(block.field('input'), 'must be an object');
  return { id: block.requiredString('id', { nonEmpty: true }), name: block.requiredString('name'), arguments: JSON.stringify(input), kind: 'function' };
}

function decodeTools(req: Fields): CanonicalTool[] {
  const list = req.array('tools') ?? [];
  checkToolCount(list, 'tools');
  return list.map((raw, i) => {
    const tool = Fields.at(raw, fieldPath('tools', i));
    const type = tool.string('type');
    if (type !== undefined && type !== 'custom') {
      refuseField(tool.field('type'), `'${type}' is not supported: server tools are not available; declare client tools with input_schema`);
    }
    tool.allowOnly(['type', 'name', 'description', 'input_schema', 'strict', 'cache_control']);
    const schema = tool.jsonObject('input_schema');
    if (!schema) refuseField(tool.field('input_schema'), 'is required');
    return compact<CanonicalTool>({ type: 'function', name: nameAt(tool, 'name'), description: tool.string('description'), parameters: schema, strict: tool.boolean('strict') });
  });
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

/** `thinking` and `output_config.effort` together make the canonical reasoning setting. */
function decodeReasoning(req: Fields): CanonicalReasoning {
  const effort = decodeEffort(req);
  const thinking = req.object('thinking');
  if (!thinking) return compact({ mode: 'default', effort });
  const type = thinking.requiredOneOf('type', ['disabled', 'enabled', 'adaptive']);
  if (type === 'disabled') {
    thinking.allowOnly(['type']);
    return compact({ mode: 'disabled', effort });
  }
  thinking.allowOnly(type === 'enabled' ? ['type', 'budget_tokens', 'display'] : ['type', 'display']);
  // Showing thinking is what Tollgate does; hiding it is not offered.
  if (thinking.oneOf('display', ['summarized', 'omitted']) === 'omitted') refuseField(thinking.field('display'), "'omitted' is not supported");
  if (type === 'adaptive') return compact({ mode: 'adaptive', effort });
  if (!thinking.isSet('budget_tokens')) refuseField(thinking.field('budget_tokens'), 'is required when thinking is enabled');
  const budgetTokens = thinking.integer('budget_tokens', { min: MIN_THINKING_BUDGET });
  return compact({ mode: 'enabled', budgetTokens, effort });
}

/** Anthropic's effort levels; `max` (and `xhigh`) mean the canonical `extra_high`. */
function decodeEffort(req: Fields): ReasoningEffort | undefined {
  const config = req.object('output_config')?.allowOnly(['effort', 'format']);
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
