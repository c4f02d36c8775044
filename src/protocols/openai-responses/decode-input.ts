import type {
  CanonicalMcpItem,
  CanonicalMessage,
  CanonicalReasoningBlock,
  CanonicalToolCall,
  McpToolListing,
} from '../../domain/generation/canonical';
import { Fields, compact, fieldPath, joinTextParts, refuseField } from '../decode-fields';
import { NAMESPACE_SEPARATOR } from './decode-tools';

/**
 * The `input` items of a Responses request → canonical messages.
 */

const INPUT_ITEM_TYPES =
  'message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, mcp_list_tools, mcp_call, mcp_approval_request or mcp_approval_response';

/**
 * `encrypted_content` carries a reasoning block's signature verbatim, or its Anthropic
 * `redacted_thinking` data behind this prefix, so both survive a round trip through a client.
 */
export const REDACTED_REASONING_PREFIX = 'redacted_thinking:';

type AssistantMessage = Extract<CanonicalMessage, { role: 'assistant' }>;

export function decodeInput(req: Fields): CanonicalMessage[] {
  const value = req.raw('input');
  if (value === undefined) refuseField('input', 'is required: send the whole conversation on every call');
  if (typeof value === 'string') return [{ role: 'user', content: value }];
  if (!Array.isArray(value)) refuseField('input', 'must be a string or an array of input items');
  if (value.length === 0) refuseField('input', 'must not be empty');

  const messages: CanonicalMessage[] = [];
  // Responses spreads one assistant turn over several items (reasoning, message, calls): they
  // fold into one canonical assistant message until another role speaks.
  const assistantTurn = (): AssistantMessage => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last;
    const turn: AssistantMessage = { role: 'assistant', content: '', toolCalls: [], reasoning: [] };
    messages.push(turn);
    return turn;
  };

  value.forEach((raw, i) => {
    const item = Fields.at(raw, fieldPath('input', i));
    const type = item.string('type') ?? 'message';
    switch (type) {
      case 'message': {
        const message = decodeMessageItem(item);
        if (message.role === 'assistant') {
          const turn = assistantTurn();
          turn.content = turn.content === '' ? message.content : joinTextParts([turn.content, message.content]);
        } else {
          messages.push(message);
        }
        break;
      }
      case 'function_call':
      case 'custom_tool_call':
        assistantTurn().toolCalls.push(decodeCallItem(item, type));
        break;
      case 'reasoning':
        assistantTurn().reasoning.push(decodeReasoningItem(item));
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        // `name` and `namespace` repeat the call's; the call id is what links them.
        item.allowOnly(
          type === 'function_call_output'
            ? ['type', 'id', 'call_id', 'output', 'status', 'name', 'namespace']
            : ['type', 'id', 'call_id', 'output', 'name', 'namespace'],
        );
        item.string('name');
        item.string('namespace');
        messages.push({
          role: 'tool',
          toolCallId: item.requiredString('call_id', { nonEmpty: true }),
          content: outputText(item),
          isError: false,
        });
        break;
      case 'mcp_list_tools':
      case 'mcp_call':
      case 'mcp_approval_request':
      case 'mcp_approval_response':
        messages.push({ role: 'mcp', item: decodeMcpItem(item, type) });
        break;
      default:
        refuseField(item.field('type'), `'${type}' is not supported; input items may be ${INPUT_ITEM_TYPES}`);
    }
  });
  return messages;
}

type MessageItem = { role: 'system'; content: string } | { role: 'user'; content: string } | { role: 'assistant'; content: string };

function decodeMessageItem(item: Fields): MessageItem {
  item.allowOnly(['type', 'role', 'content', 'id', 'status', 'phase']);
  const role = item.requiredOneOf('role', ['user', 'assistant', 'system', 'developer']);
  const value = item.raw('content');
  const field = item.field('content');
  let content: string;
  if (typeof value === 'string') {
    content = value;
  } else if (Array.isArray(value)) {
    content = joinTextParts(
      value.map((raw, j) => {
        const part = Fields.at(raw, fieldPath(field, j));
        const type = part.requiredString('type');
        switch (type) {
          case 'input_text':
            return part.allowOnly(['type', 'text']).requiredString('text');
          case 'output_text':
            return part.allowOnly(['type', 'text', 'annotations', 'logprobs']).requiredString('text');
          case 'refusal':
            return part.allowOnly(['type', 'refusal']).requiredString('refusal');
          case 'input_image':
          case 'input_file':
          case 'input_audio':
            return refuseField(part.field('type'), `'${type}' is not supported: chat endpoints take text input only`);
          default:
            return refuseField(part.field('type'), "must be 'input_text', 'output_text' or 'refusal'");
        }
      }),
    );
  } else {
    refuseField(field, value === undefined ? 'is required' : 'must be a string or an array of content parts');
  }
  return { role: role === 'developer' ? 'system' : role, content };
}

/** A call of an earlier turn; a namespaced tool's call goes back to the vendor under the name the tool was served by. */
function decodeCallItem(item: Fields, type: 'function_call' | 'custom_tool_call'): CanonicalToolCall {
  const isFunction = type === 'function_call';
  item.allowOnly(
    isFunction
      ? ['type', 'id', 'call_id', 'name', 'arguments', 'status', 'namespace']
      : ['type', 'id', 'call_id', 'name', 'input', 'namespace'],
  );
  const name = item.requiredString('name');
  const namespace = item.string('namespace');
  const served = namespace === undefined ? name : `${namespace}${NAMESPACE_SEPARATOR}${name}`;
  return {
    id: item.requiredString('call_id', { nonEmpty: true }),
    name: served,
    arguments: item.requiredString(isFunction ? 'arguments' : 'input'),
    kind: isFunction ? 'function' : 'custom',
  };
}

/** An MCP item of an earlier turn, sent back as the vendor produced it (or the client's approval). */
function decodeMcpItem(
  item: Fields,
  type: 'mcp_list_tools' | 'mcp_call' | 'mcp_approval_request' | 'mcp_approval_response',
): CanonicalMcpItem {
  switch (type) {
    case 'mcp_list_tools': {
      item.allowOnly(['type', 'id', 'server_label', 'tools', 'error']);
      const tools = item.requiredArray('tools').map((raw, j) => {
        const tool = Fields.at(raw, fieldPath(item.field('tools'), j)).allowOnly(['name', 'description', 'input_schema', 'annotations']);
        return compact<McpToolListing>({
          name: tool.requiredString('name'),
          description: tool.string('description'),
          inputSchema: tool.raw('input_schema') ?? {},
          annotations: tool.raw('annotations'),
        });
      });
      return compact<CanonicalMcpItem>({
        kind: 'list_tools',
        id: item.requiredString('id', { nonEmpty: true }),
        serverLabel: item.requiredString('server_label'),
        tools,
        error: item.string('error'),
      });
    }
    case 'mcp_call':
      item.allowOnly(['type', 'id', 'server_label', 'name', 'arguments', 'output', 'error', 'approval_request_id', 'status']);
      item.oneOf('status', ['in_progress', 'completed', 'incomplete', 'calling', 'failed']);
      return compact<CanonicalMcpItem>({
        kind: 'call',
        id: item.requiredString('id', { nonEmpty: true }),
        serverLabel: item.requiredString('server_label'),
        name: item.requiredString('name'),
        arguments: item.requiredString('arguments'),
        output: item.string('output'),
        error: item.string('error'),
        approvalRequestId: item.string('approval_request_id'),
      });
    case 'mcp_approval_request':
      item.allowOnly(['type', 'id', 'server_label', 'name', 'arguments']);
      return {
        kind: 'approval_request',
        id: item.requiredString('id', { nonEmpty: true }),
        serverLabel: item.requiredString('server_label'),
        name: item.requiredString('name'),
        arguments: item.requiredString('arguments'),
      };
    case 'mcp_approval_response': {
      item.allowOnly(['type', 'id', 'approval_request_id', 'approve', 'reason']);
      const approve = item.boolean('approve');
      if (approve === undefined) refuseField(item.field('approve'), 'is required (true or false)');
      return compact<CanonicalMcpItem>({
        kind: 'approval_response',
        id: item.string('id'),
        approvalRequestId: item.requiredString('approval_request_id', { nonEmpty: true }),
        approve,
        reason: item.string('reason'),
      });
    }
  }
}

/** A tool output: a string or text parts. */
function outputText(item: Fields): string {
  const value = item.raw('output');
  const field = item.field('output');
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) refuseField(field, value === undefined ? 'is required' : 'must be a string or an array of input_text parts');
  return joinTextParts(
    value.map((raw, j) => {
      const part = Fields.at(raw, fieldPath(field, j));
      const type = part.requiredString('type');
      if (type === 'input_text') return part.allowOnly(['type', 'text']).requiredString('text');
      return refuseField(part.field('type'), `'${type}' is not supported: tool outputs are text only`);
    }),
  );
}

/** A reasoning item sent back: its text and its opaque state become a canonical reasoning block. */
function decodeReasoningItem(item: Fields): CanonicalReasoningBlock {
  item.allowOnly(['type', 'id', 'summary', 'content', 'encrypted_content', 'status']);
  const texts = (key: 'summary' | 'content', partType: string): string[] =>
    (item.objects(key) ?? []).map((part) => {
      part.requiredOneOf('type', [partType]);
      part.allowOnly(['type', 'text']);
      return part.requiredString('text');
    });
  const content = texts('content', 'reasoning_text');
  const summary = texts('summary', 'summary_text');
  const text = content.length > 0 ? content.join('') : summary.join('\n\n');
  const encrypted = item.string('encrypted_content');
  if (encrypted === undefined) return { text };
  if (encrypted.startsWith(REDACTED_REASONING_PREFIX)) return { text, redactedData: encrypted.slice(REDACTED_REASONING_PREFIX.length) };
  return { text, signature: encrypted };
}
