import type { CanonicalMcpCall, CanonicalMessage, CanonicalToolCall } from '../../domain/generation/canonical';
import { type MarkedText, markedText, readCacheBreakpoint, textRuns, withBreakpoint } from '../cache-breakpoints';
import { Fields, compact, fieldPath, joinTextParts, refuseField } from '../decode-fields';
import type { VendorOnlyCollector } from './decode-vendor-only';
import { fieldsOf } from '../apply-field-policy';
import { NESTED_FIELD_POLICIES } from './field-policy';

/**
 * Client side of Messages, the conversation: `system` and `messages` → canonical messages. Text
 * blocks of one message are joined a line apart, up to each cache breakpoint (textRuns), so a
 * breakpoint stays after the same text; `cache_control` is read through the vendor-only
 * collector, which names it as a hint for vendors without breakpoints.
 */

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

type AssistantMessage = Extract<CanonicalMessage, { role: 'assistant' }>;

/** The system prompt and the conversation, in order (`system` first). */
export function decodeConversation(req: Fields, marks: VendorOnlyCollector): CanonicalMessage[] {
  const system = decodeSystem(req, marks);
  return [...(system?.map((run) => systemMessage(run)) ?? []), ...decodeMessages(req, marks)];
}

const systemMessage = (run: MarkedText): CanonicalMessage => ({
  role: 'system',
  content: run.text,
  ...withBreakpoint(run.cacheBreakpoint),
});

function decodeSystem(req: Fields, marks: VendorOnlyCollector): MarkedText[] | undefined {
  const value = req.raw('system');
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [{ text: value }];
  if (!Array.isArray(value)) refuseField('system', 'must be a string or an array of text blocks');
  return textRuns(value.map((raw, i) => textBlock(Fields.at(raw, fieldPath('system', i)), marks)));
}

function textBlock(block: Fields, marks: VendorOnlyCollector): MarkedText {
  const type = block.requiredString('type');
  if (type !== 'text') refuseBlock(block, type, "'text'");
  block.allowOnly(BLOCK.text);
  return markedText(block, block.requiredString('text'), marks.cacheBreakpoint(block));
}

function decodeMessages(req: Fields, marks: VendorOnlyCollector): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  req.requiredArray('messages', { nonEmpty: true }).forEach((raw, i) => {
    const message = Fields.at(raw, fieldPath('messages', i)).allowOnly(BLOCK.message);
    const role = message.requiredOneOf('role', ['user', 'assistant', 'system']);
    const content = message.raw('content');
    const field = message.field('content');
    if (content === undefined) refuseField(field, 'is required');
    if (typeof content !== 'string' && !Array.isArray(content)) refuseField(field, 'must be a string or an array of content blocks');
    const blocks = typeof content === 'string' ? null : content.map((b, j) => Fields.at(b, fieldPath(field, j)));
    if (role === 'assistant') out.push(...assistantMessages(typeof content === 'string' ? content : null, blocks ?? [], marks));
    else if (role === 'system')
      out.push(
        ...(typeof content === 'string' ? [{ text: content }] : textRuns(blocks!.map((b) => textBlock(b, marks)))).map(systemMessage),
      );
    else out.push(...userMessages(typeof content === 'string' ? content : null, blocks ?? [], marks));
  });
  return out;
}

/** Refuses a block type the role cannot carry, naming media and server-side blocks precisely. */
function refuseBlock(block: Fields, type: string, allowed: string): never {
  if (MEDIA_BLOCKS.includes(type)) refuseField(block.field('type'), `'${type}' is not supported: chat endpoints take text input only`);
  return refuseField(block.field('type'), `'${type}' is not supported here; expected ${allowed}`);
}

/** A user turn: its tool results become tool messages (first, as Anthropic requires), its text user messages. */
function userMessages(text: string | null, blocks: Fields[], marks: VendorOnlyCollector): CanonicalMessage[] {
  if (text !== null) return [{ role: 'user', content: text }];
  const results: CanonicalMessage[] = [];
  const texts: MarkedText[] = [];
  for (const block of blocks) {
    const type = block.requiredString('type');
    if (type === 'text') texts.push(textBlock(block, marks));
    else if (type === 'tool_result') results.push(toolResult(block, marks));
    else refuseBlock(block, type, "'text' or 'tool_result'");
  }
  if (texts.length === 0 && results.length > 0) return results;
  return [
    ...results,
    ...textRuns(texts).map((run): CanonicalMessage => ({ role: 'user', content: run.text, ...withBreakpoint(run.cacheBreakpoint) })),
  ];
}

/** A tool result; a breakpoint inside its content marks the result (its text is one canonical string). */
function toolResult(block: Fields, marks: VendorOnlyCollector): CanonicalMessage {
  block.allowOnly(BLOCK.toolResult);
  block.string('toolset_name');
  const value = block.raw('content');
  const field = block.field('content');
  let parts: MarkedText[] = [];
  if (typeof value === 'string') parts = [{ text: value }];
  else if (Array.isArray(value)) {
    parts = value.map((raw, k) => {
      const part = Fields.at(raw, fieldPath(field, k));
      const type = part.requiredString('type');
      return type === 'text' ? textBlock(part, marks) : refuseBlock(part, type, "'text' (tool results are text only)");
    });
  } else if (value !== undefined) refuseField(field, 'must be a string or an array of text blocks');
  const inner = parts.findLast((part) => part.cacheBreakpoint)?.cacheBreakpoint;
  return {
    role: 'tool',
    toolCallId: block.requiredString('tool_use_id', { nonEmpty: true }),
    content: joinTextParts(parts.map((part) => part.text)),
    isError: block.boolean('is_error') ?? false,
    ...withBreakpoint(marks.cacheBreakpoint(block) ?? inner),
  };
}

/**
 * An assistant turn. MCP calls Anthropic made in it (`mcp_tool_use`, then its `mcp_tool_result`)
 * become canonical MCP calls where they stood, so the turn splits around them, and around a
 * text breakpoint followed by more text: the egress codecs join consecutive assistant messages
 * again.
 */
function assistantMessages(text: string | null, blocks: Fields[], marks: VendorOnlyCollector): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  let message: AssistantMessage = { role: 'assistant', content: text ?? '', toolCalls: [], reasoning: [] };
  let texts: MarkedText[] = [];
  const flush = () => {
    if (text === null) {
      const runs = textRuns(texts);
      const last = runs.pop()!;
      for (const run of runs) {
        out.push({
          role: 'assistant',
          content: run.text,
          toolCalls: [],
          reasoning: message.reasoning,
          ...withBreakpoint(run.cacheBreakpoint),
        });
        message.reasoning = [];
      }
      message.content = last.text;
      if (last.cacheBreakpoint) message.cacheBreakpoint = last.cacheBreakpoint;
    }
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
        texts.push(textBlock(block, marks));
        break;
      case 'tool_use':
        message.toolCalls.push(toolUse(block, marks));
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

/** `cache_control` on MCP blocks is metadata: the pair is rebuilt from one canonical call. */
function mcpToolUse(block: Fields): CanonicalMcpCall {
  block.allowOnly(BLOCK.mcpUse);
  const input = block.raw('input');
  if (input === undefined || typeof input !== 'object' || Array.isArray(input)) refuseField(block.field('input'), 'must be an object');
  return {
    kind: 'call',
    id: block.requiredString('id', { nonEmpty: true }),
    serverLabel: block.requiredString('server_name', { nonEmpty: true }),
    name: block.requiredString('name'),
    arguments: JSON.stringify(input),
  };
}

function mcpToolResult(block: Fields): { toolUseId: string; content: string; isError: boolean } {
  block.allowOnly(BLOCK.mcpResult);
  const value = block.raw('content');
  const field = block.field('content');
  let content = '';
  if (typeof value === 'string') content = value;
  else if (Array.isArray(value)) content = joinTextParts(value.map((raw, k) => mcpText(Fields.at(raw, fieldPath(field, k)))));
  else if (value !== undefined) refuseField(field, 'must be a string or an array of text blocks');
  return { toolUseId: block.requiredString('tool_use_id', { nonEmpty: true }), content, isError: block.boolean('is_error') ?? false };
}

/** A text block of an MCP result (its `cache_control` checked, as metadata). */
function mcpText(part: Fields): string {
  const type = part.requiredString('type');
  if (type !== 'text') refuseBlock(part, type, "'text'");
  part.allowOnly(BLOCK.text);
  readCacheBreakpoint(part);
  return part.requiredString('text');
}

function toolUse(block: Fields, marks: VendorOnlyCollector): CanonicalToolCall {
  // `caller` is what newer Anthropic answers attach; a client echoing an answer back sends it.
  block.allowOnly(BLOCK.toolUse);
  block.string('toolset_name');
  const input = block.raw('input');
  if (input === undefined || typeof input !== 'object' || Array.isArray(input)) refuseField(block.field('input'), 'must be an object');
  return compact<CanonicalToolCall>({
    id: block.requiredString('id', { nonEmpty: true }),
    name: block.requiredString('name'),
    arguments: JSON.stringify(input),
    kind: 'function',
    cacheBreakpoint: marks.cacheBreakpoint(block),
  });
}
