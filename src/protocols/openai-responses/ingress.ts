import type {
  CanonicalEvent,
  CanonicalMcpItem,
  CanonicalMessage,
  CanonicalReasoningBlock,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolCall,
  CanonicalToolChoice,
  CanonicalUsage,
  McpApprovalRule,
  McpToolFilter,
  McpToolListing,
} from '../../domain/generation/canonical';
import { DEFAULT_OUTPUT_TOKENS, mapReasoningEffort } from '../../domain/generation/rules';
import type { DecodedTextRequest } from '../../domain/generation/service';
import type { ApiError } from '../../domain/shared/errors';
import { type AnswerMeta, type CollectedResult, type FinishEvent, type IdFactory, randomWireId, reportedReasoningTokens } from '../collect';
import {
  Fields,
  checkSchemaSize,
  checkToolCount,
  compact,
  dropReasoningForModel,
  emptyParameters,
  fieldPath,
  joinTextParts,
  nameAt,
  preferFirst,
  refuseField,
} from '../ingress-common';
import { sseEvent } from '../sse-write';
import type {
  ResponseCustomToolCall,
  ResponseCustomToolFormat,
  ResponseFormatTextConfig,
  ResponseFunctionToolCall,
  ResponseItemStatus,
  ResponseMcpApprovalResponse,
  ResponseMcpTool,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseReasoningItem,
  ResponseStatus,
  ResponseStreamEvent,
  ResponseTextConfig,
  ResponseTool,
  ResponseToolChoice,
  ResponseUsage,
  ResponsesReasoningEffort,
} from './types';
import { withFields } from '../../domain/shared/objects';
import { responsesMcpItem, type ResponseMcpItem } from './mcp-items';

/**
 * Ingress codec of the stateless `POST /v1/responses` (spec 4.5): the request body → canonical
 * request (plus the request fields the `response` object echoes), canonical events → the
 * `response` object or its SSE events.
 */

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/** Every top-level field the decoder reads (others are refused); the API document is built from this list. */
export const KNOWN_FIELDS = [
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'max_output_tokens',
  'max_tool_calls', 'reasoning', 'stream', 'stream_options', 'store', 'include', 'temperature', 'top_p',
  'top_logprobs', 'user', 'safety_identifier', 'metadata', 'truncation', 'service_tier', 'prompt_cache_key',
  'prompt_cache_retention', 'previous_response_id', 'conversation', 'prompt', 'background', 'context_management',
] as const;

const STATELESS = 'is not supported: /v1/responses is stateless; send the whole conversation in input with store: false';

const HOSTED_TOOLS = [
  'file_search', 'computer', 'computer_use', 'computer_use_preview', 'web_search', 'web_search_2025_08_26',
  'web_search_preview', 'web_search_preview_2025_03_11', 'code_interpreter', 'image_generation', 'local_shell',
  'shell', 'apply_patch', 'namespace', 'tool_search',
];

const INPUT_ITEM_TYPES =
  'message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, mcp_list_tools, mcp_call, mcp_approval_request or mcp_approval_response';

/** The only `include` value with a meaning here: reasoning state for the next stateless turn. */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/**
 * `encrypted_content` carries a reasoning block's signature verbatim, or its Anthropic
 * `redacted_thinking` data behind this prefix, so both survive a round trip through a client.
 */
export const REDACTED_REASONING_PREFIX = 'redacted_thinking:';

const MAX_METADATA_PAIRS = 16;

/** Request fields the `response` object repeats back (the SDK types them as always present). */
export interface ResponsesEcho {
  instructions: string | null;
  /** As declared, without MCP credentials (`authorization`, `headers` are never echoed). */
  tools: ResponseTool[];
  toolChoice: ResponseToolChoice;
  parallelToolCalls: boolean;
  text: ResponseTextConfig;
  /** The limit as sent; the REST layer may put the clamped value here. */
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  reasoning: ResponseObject['reasoning'];
  metadata: Record<string, string>;
  user: string | null;
  /** `include` held `reasoning.encrypted_content`: reasoning items carry `encrypted_content`. */
  includeEncryptedReasoning: boolean;
}

export interface ResponsesIngress {
  decoded: DecodedTextRequest;
  echo: ResponsesEcho;
}

type AssistantMessage = Extract<CanonicalMessage, { role: 'assistant' }>;

/** Validates a Responses body; throws 400 `bad_request` naming the field. */
export function decodeResponsesIngress(body: unknown): ResponsesIngress {
  const req = Fields.body(body).allowOnly(KNOWN_FIELDS);
  refuseUnsupported(req);

  const modelId = req.requiredString('model', { nonEmpty: true });
  const instructions = req.string('instructions');
  const messages: CanonicalMessage[] = [...(instructions !== undefined ? [{ role: 'system' as const, content: instructions }] : []), ...decodeInput(req)];
  const tools = decodeTools(req);
  const toolChoice = decodeToolChoice(req, tools.map((t) => t.canonical));
  const text = req.object('text')?.allowOnly(['format', 'verbosity']).refuseIfSet(['verbosity']);
  const format = text?.object('format');
  const reasoning = req.object('reasoning')?.allowOnly(['effort', 'summary', 'generate_summary']);
  const effort = reasoning ? mapReasoningEffort(reasoning.raw('effort'), reasoning.field('effort')) : undefined;
  // Summaries are shown whenever the vendor gives reasoning text; the setting itself is echoed only.
  const summary = reasoning?.oneOf('summary', ['auto', 'concise', 'detailed']) ?? reasoning?.oneOf('generate_summary', ['auto', 'concise', 'detailed']);
  const metadata = req.stringMap('metadata');
  if (metadata && Object.keys(metadata).length > MAX_METADATA_PAIRS) refuseField('metadata', `must hold at most ${MAX_METADATA_PAIRS} pairs`);
  const include = req.strings('include') ?? [];
  include.forEach((value, i) => {
    if (value !== ENCRYPTED_REASONING) refuseField(fieldPath('include', i), `'${value}' is not supported; only '${ENCRYPTED_REASONING}' is`);
  });
  // Accepted and ignored: cache routing hints and the obfuscation switch.
  req.string('prompt_cache_key');
  req.oneOf('prompt_cache_retention', ['in-memory', '24h']);
  req.object('stream_options')?.allowOnly(['include_obfuscation']).boolean('include_obfuscation');

  const temperature = req.number('temperature', { min: 0, max: 2 });
  const topP = req.number('top_p', { min: 0, max: 1 });
  const parallelToolCalls = req.boolean('parallel_tool_calls');
  const user = preferFirst(req.string('safety_identifier'), req.string('user'));
  const maxOutputTokens = req.raw('max_output_tokens');

  const decoded: DecodedTextRequest = {
    modelId,
    outputLimit: { value: maxOutputTokens, field: 'max_output_tokens', fallback: DEFAULT_OUTPUT_TOKENS },
    request: compact({
      messages,
      tools: tools.map((t) => t.canonical),
      toolChoice: toolChoice?.canonical,
      parallelToolCalls,
      responseFormat: format ? decodeTextFormat(format) : undefined,
      temperature,
      topP,
      reasoning: effort ? { mode: 'default' as const, effort } : { mode: 'default' as const },
      user,
    }),
    stream: req.boolean('stream') ?? false,
    finalize: dropReasoningForModel,
  };
  const echo: ResponsesEcho = {
    instructions: instructions ?? null,
    tools: tools.map((t) => t.echo),
    toolChoice: toolChoice?.echo ?? 'auto',
    parallelToolCalls: parallelToolCalls ?? true,
    text: { format: (format?.value as ResponseFormatTextConfig | undefined) ?? { type: 'text' } },
    maxOutputTokens: typeof maxOutputTokens === 'number' ? maxOutputTokens : null,
    temperature: temperature ?? null,
    topP: topP ?? null,
    reasoning: { effort: (reasoning?.string('effort') as ResponsesReasoningEffort | undefined) ?? null, summary: summary ?? null },
    metadata: metadata ?? {},
    user: user ?? null,
    includeEncryptedReasoning: include.includes(ENCRYPTED_REASONING),
  };
  return { decoded, echo };
}

/** The canonical request alone (see `decodeResponsesIngress` for the echoed fields). */
export function decodeResponsesRequest(body: unknown): DecodedTextRequest {
  return decodeResponsesIngress(body).decoded;
}

function refuseUnsupported(req: Fields): void {
  req.refuseIfSet(['previous_response_id', 'conversation', 'prompt'], STATELESS);
  req.refuseIfEnabled(['background'], 'is not supported: responses are answered synchronously');
  // OpenAI's default is store: true; a stateless gateway reads absent as false (spec 4.5).
  if (req.raw('store') === true) refuseField('store', 'must be false: /v1/responses is stateless and stores nothing');
  req.boolean('store');
  req.refuseIfSet(['context_management', 'max_tool_calls', 'top_logprobs']);
  if (req.oneOf('truncation', ['auto', 'disabled']) === 'auto') refuseField('truncation', "'auto' is not supported; the conversation is sent as given");
  req.oneOf('service_tier', ['auto', 'default']);
}

// Input items ---------------------------------------------------------------------------------

function decodeInput(req: Fields): CanonicalMessage[] {
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
        item.allowOnly(type === 'function_call_output' ? ['type', 'id', 'call_id', 'output', 'status'] : ['type', 'id', 'call_id', 'output']);
        messages.push({ role: 'tool', toolCallId: item.requiredString('call_id', { nonEmpty: true }), content: outputText(item), isError: false });
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

function decodeCallItem(item: Fields, type: 'function_call' | 'custom_tool_call'): CanonicalToolCall {
  const isFunction = type === 'function_call';
  item.allowOnly(isFunction ? ['type', 'id', 'call_id', 'name', 'arguments', 'status', 'namespace'] : ['type', 'id', 'call_id', 'name', 'input', 'namespace']);
  item.refuseIfSet(['namespace']);
  return {
    id: item.requiredString('call_id', { nonEmpty: true }),
    name: item.requiredString('name'),
    arguments: item.requiredString(isFunction ? 'arguments' : 'input'),
    kind: isFunction ? 'function' : 'custom',
  };
}

/** An MCP item of an earlier turn, sent back as the vendor produced it (or the client's approval). */
function decodeMcpItem(item: Fields, type: 'mcp_list_tools' | 'mcp_call' | 'mcp_approval_request' | 'mcp_approval_response'): CanonicalMcpItem {
  switch (type) {
    case 'mcp_list_tools': {
      item.allowOnly(['type', 'id', 'server_label', 'tools', 'error']);
      const tools = item.requiredArray('tools').map((raw, j) => {
        const tool = Fields.at(raw, fieldPath(item.field('tools'), j)).allowOnly(['name', 'description', 'input_schema', 'annotations']);
        return compact<McpToolListing>({ name: tool.requiredString('name'), description: tool.string('description'), inputSchema: tool.raw('input_schema') ?? {}, annotations: tool.raw('annotations') });
      });
      return compact<CanonicalMcpItem>({ kind: 'list_tools', id: item.requiredString('id', { nonEmpty: true }), serverLabel: item.requiredString('server_label'), tools, error: item.string('error') });
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

// Tools -----------------------------------------------------------------------------------------

interface DecodedTool {
  canonical: CanonicalTool;
  echo: ResponseTool;
}

function decodeTools(req: Fields): DecodedTool[] {
  const list = req.array('tools') ?? [];
  checkToolCount(list, 'tools');
  return list.map((raw, i) => {
    const tool = Fields.at(raw, fieldPath('tools', i));
    const type = tool.requiredString('type');
    switch (type) {
      case 'function':
        return decodeFunctionTool(tool);
      case 'custom':
        return decodeCustomTool(tool);
      case 'mcp':
        return decodeMcpTool(tool);
      default:
        if (HOSTED_TOOLS.includes(type)) refuseField(tool.field('type'), `'${type}' is not supported: hosted tools are not available; declare function, custom or mcp tools`);
        return refuseField(tool.field('type'), "must be 'function', 'custom' or 'mcp'");
    }
  });
}

function decodeFunctionTool(tool: Fields): DecodedTool {
  tool.allowOnly(['type', 'name', 'description', 'parameters', 'strict', 'defer_loading']).refuseIfEnabled(['defer_loading']);
  const name = nameAt(tool, 'name');
  const description = tool.string('description');
  const parameters = tool.jsonObject('parameters') ?? emptyParameters();
  const strict = tool.boolean('strict');
  return {
    canonical: compact<CanonicalTool>({ type: 'function', name, description, parameters, strict }),
    echo: { type: 'function', name, description: description ?? null, parameters, strict: strict ?? null },
  };
}

function decodeCustomTool(tool: Fields): DecodedTool {
  tool.allowOnly(['type', 'name', 'description', 'format', 'defer_loading']).refuseIfEnabled(['defer_loading']);
  const name = nameAt(tool, 'name');
  const description = tool.string('description');
  const format = tool.object('format');
  if (format) {
    const formatType = format.requiredOneOf('type', ['text', 'grammar']);
    if (formatType === 'text') format.allowOnly(['type']);
    else {
      format.allowOnly(['type', 'syntax', 'definition']).requiredOneOf('syntax', ['lark', 'regex']);
      format.requiredString('definition');
    }
  }
  return {
    canonical: compact<CanonicalTool>({ type: 'custom', name, description, format: format?.value }),
    echo: compact<ResponseTool>({ type: 'custom', name, description, format: format?.value as ResponseCustomToolFormat | undefined }),
  };
}

function decodeMcpTool(tool: Fields): DecodedTool {
  tool.allowOnly(['type', 'server_label', 'server_url', 'server_description', 'allowed_tools', 'headers', 'authorization', 'require_approval', 'connector_id', 'defer_loading']);
  tool.refuseIfSet(['connector_id'], 'is not supported: connectors need OpenAI-managed sign-in; give server_url');
  tool.refuseIfEnabled(['defer_loading']);
  const serverLabel = tool.requiredString('server_label', { nonEmpty: true });
  const serverUrl = tool.requiredString('server_url', { nonEmpty: true });
  tool.string('server_description'); // accepted; no canonical field (the vendor lists the server's tools itself)
  const allowedTools = decodeAllowedTools(tool);
  const requireApproval = decodeRequireApproval(tool);
  return {
    canonical: compact<CanonicalTool>({
      type: 'mcp',
      serverLabel,
      serverUrl,
      allowedTools,
      headers: tool.stringMap('headers'),
      authorization: tool.string('authorization'),
      requireApproval,
    }),
    echo: { type: 'mcp', server_label: serverLabel, server_url: serverUrl, allowed_tools: allowedTools ?? null, require_approval: (tool.raw('require_approval') as ResponseMcpTool['require_approval']) ?? null },
  };
}

/** `allowed_tools`: a list of names, or a filter `{tool_names}` (`read_only` filtering is not offered). */
function decodeAllowedTools(tool: Fields): string[] | undefined {
  const value = tool.raw('allowed_tools');
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return tool.strings('allowed_tools');
  const filter = tool.requiredObject('allowed_tools').allowOnly(['tool_names', 'read_only']).refuseIfEnabled(['read_only']);
  return filter.strings('tool_names');
}

/** `require_approval`: 'always' | 'never', or per-tool filters `{always, never}` of tool names or read-only tools. */
function decodeRequireApproval(tool: Fields): McpApprovalRule | undefined {
  const value = tool.raw('require_approval');
  if (value === undefined) return undefined;
  if (typeof value === 'string') return tool.oneOf('require_approval', ['always', 'never']);
  const rule = tool.requiredObject('require_approval').allowOnly(['always', 'never']);
  const filter = (key: 'always' | 'never'): McpToolFilter | undefined => {
    const f = rule.object(key)?.allowOnly(['tool_names', 'read_only']);
    return f && compact<McpToolFilter>({ toolNames: f.strings('tool_names'), readOnly: f.boolean('read_only') });
  };
  return compact({ always: filter('always'), never: filter('never') });
}

function decodeToolChoice(req: Fields, tools: readonly CanonicalTool[]): { canonical: CanonicalToolChoice; echo: ResponseToolChoice } | undefined {
  const value = req.raw('tool_choice');
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    const choice = req.oneOf('tool_choice', ['none', 'auto', 'required'])!;
    if (choice === 'required' && tools.length === 0) refuseField('tool_choice', "'required' needs at least one tool in tools");
    return { canonical: choice, echo: choice };
  }
  const named = req.requiredObject('tool_choice');
  const type = named.requiredString('type');
  if (type !== 'function' && type !== 'custom') {
    refuseField(named.field('type'), `'${type}' is not supported; tool_choice may be 'none', 'auto', 'required', or a function or custom tool by name`);
  }
  named.allowOnly(['type', 'name']);
  const name = named.requiredString('name');
  if (!tools.some((t) => t.type === type && t.name === name)) refuseField(named.field('name'), `'${name}' does not name a ${type} tool in tools`);
  return { canonical: { name }, echo: { type, name } };
}

function decodeTextFormat(format: Fields): CanonicalResponseFormat {
  const type = format.requiredOneOf('type', ['text', 'json_object', 'json_schema']);
  if (type !== 'json_schema') {
    format.allowOnly(['type']);
    return { type };
  }
  format.allowOnly(['type', 'name', 'schema', 'description', 'strict']);
  const schema = format.jsonObject('schema');
  if (!schema) refuseField(format.field('schema'), 'is required');
  return compact<CanonicalResponseFormat>({
    type: 'json_schema',
    name: nameAt(format, 'name'),
    schema: checkSchemaSize(schema, format.field('schema')),
    strict: format.boolean('strict'),
    description: format.string('description'),
  });
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

export interface ResponsesMeta extends AnswerMeta {
  echo: ResponsesEcho;
}

/** Spec 2.8: cached input in input_tokens_details, reasoning (or its estimate) in output_tokens_details. */
export function responsesUsage(usage: CanonicalUsage): ResponseUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: reportedReasoningTokens(usage) },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

interface TerminalState {
  status: Extract<ResponseStatus, 'completed' | 'incomplete'>;
  incompleteDetails: ResponseObject['incomplete_details'];
}

/**
 * A limit-truncated answer is `incomplete` (max_output_tokens); a vendor content filter that
 * cut the answer is `incomplete` (content_filter). A model's own safety refusal is a complete
 * answer whose text is the refusal message (its text streamed before the refusal was known).
 */
function terminalState(finish: CollectedResult['finish']): TerminalState {
  if (finish.reason === 'length') return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
  if (finish.reason === 'content_filter' && !finish.refusal) return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
  return { status: 'completed', incompleteDetails: null };
}

const itemStatus = (state: TerminalState): ResponseItemStatus => (state.status === 'incomplete' ? 'incomplete' : 'completed');

function outputTextPart(text: string): ResponseOutputText {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

function messageItem(id: string, text: string, status: ResponseItemStatus): ResponseOutputMessage {
  return { id, type: 'message', status, content: status === 'in_progress' && text === '' ? [] : [outputTextPart(text)], role: 'assistant' };
}

function reasoningItem(id: string, block: CanonicalReasoningBlock, includeEncrypted: boolean): ResponseReasoningItem {
  const encrypted = block.redactedData !== undefined ? REDACTED_REASONING_PREFIX + block.redactedData : block.signature;
  return {
    id,
    type: 'reasoning',
    summary: block.text === '' ? [] : [{ type: 'summary_text', text: block.text }],
    ...(includeEncrypted && encrypted !== undefined ? { encrypted_content: encrypted } : {}),
  };
}

/** An MCP item as the vendor's output shows it (approval responses are only ever input: null). */
function mcpOutputItem(item: CanonicalMcpItem): Exclude<ResponseMcpItem, ResponseMcpApprovalResponse> | null {
  const shown = responsesMcpItem(item);
  return shown.type === 'mcp_approval_response' ? null : shown;
}

function callItem(id: string, call: CanonicalToolCall, status: ResponseItemStatus): ResponseFunctionToolCall | ResponseCustomToolCall {
  return call.kind === 'custom'
    ? { id, type: 'custom_tool_call', call_id: call.id, name: call.name, input: call.arguments }
    : { id, type: 'function_call', status, arguments: call.arguments, call_id: call.id, name: call.name };
}

/** The `response` object in any state; the request's settings come from the echo. */
function responseObject(
  meta: ResponsesMeta,
  id: string,
  status: ResponseStatus,
  output: ResponseOutputItem[],
  extra: { usage?: ResponseUsage; incompleteDetails?: ResponseObject['incomplete_details']; error?: ApiError } = {},
): ResponseObject {
  const { echo } = meta;
  return {
    id,
    object: 'response',
    created_at: meta.created,
    status,
    background: false,
    error: extra.error ? { code: extra.error.code, message: extra.error.message } : null,
    incomplete_details: extra.incompleteDetails ?? null,
    instructions: echo.instructions,
    max_output_tokens: meta.clampedOutputLimit ?? echo.maxOutputTokens,
    max_tool_calls: null,
    model: meta.model,
    output,
    parallel_tool_calls: echo.parallelToolCalls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    service_tier: 'default',
    store: false,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.toolChoice,
    tools: echo.tools,
    top_p: echo.topP,
    truncation: 'disabled',
    usage: extra.usage ?? null,
    user: echo.user,
    metadata: echo.metadata,
  };
}

/** The non-streaming answer: MCP items, reasoning items, then the message, then the tool calls. */
export function encodeResponsesResponse(result: CollectedResult, meta: ResponsesMeta): ResponseObject {
  const newId = meta.newId ?? randomWireId;
  const state = terminalState(result.finish);
  const output: ResponseOutputItem[] = [
    ...result.mcpItems.flatMap((item) => mcpOutputItem(item) ?? []),
    ...result.reasoning.map((block) => reasoningItem(newId('rs_'), block, meta.echo.includeEncryptedReasoning)),
    ...(result.text !== '' ? [messageItem(newId('msg_'), result.text, itemStatus(state))] : []),
    ...result.toolCalls.map((call) => callItem(newId(call.kind === 'custom' ? 'ctc_' : 'fc_'), call, 'completed')),
  ];
  return responseObject(meta, meta.id ?? randomWireId('resp_'), state.status, output, {
    usage: responsesUsage(result.finish.usage),
    incompleteDetails: state.incompleteDetails,
  });
}

/** The event of a given `type` (lifecycle events share one interface, so `Extract` would not find them). */
type EventOf<T extends ResponseStreamEvent['type']> = ResponseStreamEvent extends infer E ? (E extends { type: infer U } ? (T extends U ? E : never) : never) : never;
type Payload<T extends ResponseStreamEvent['type']> = Omit<EventOf<T>, 'type' | 'sequence_number'>;
type OpenText = { kind: 'message' | 'reasoning'; outputIndex: number; id: string; text: string };
type OpenCall = { outputIndex: number; id: string; call: CanonicalToolCall };

/**
 * Canonical events → Responses SSE events, in the order the OpenAI SDK's ResponseStream
 * accumulates them: `response.created`, `response.in_progress`, then per output item
 * `output_item.added` … deltas … `output_item.done`, and `response.completed` (or
 * `response.incomplete`) with the whole response. Reasoning is shown as a reasoning item
 * with one summary part. A failure sends `error` then `response.failed`.
 */
export class ResponsesStreamEncoder {
  private readonly id: string;
  private readonly newId: IdFactory;
  private sequence = 0;
  private started = false;
  private ended = false;
  /** Final items by output index; a slot stays empty while its item is open. */
  private readonly output: Array<ResponseOutputItem | undefined> = [];
  /** The open message or reasoning item (they never overlap). */
  private open: OpenText | null = null;
  /** Tool-call items not yet done, by canonical index. */
  private readonly calls = new Map<number, OpenCall>();

  constructor(private readonly meta: ResponsesMeta) {
    this.id = meta.id ?? randomWireId('resp_');
    this.newId = meta.newId ?? randomWireId;
  }

  /** `response.created` and `response.in_progress`; emitted by the first `encode` when not called before. */
  start(): string {
    if (this.started || this.ended) return '';
    this.started = true;
    const response = responseObject(this.meta, this.id, 'in_progress', []);
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  encode(event: CanonicalEvent): string {
    if (this.ended) return '';
    let out = this.start();
    switch (event.type) {
      case 'reasoning-delta': {
        if (this.open?.kind !== 'reasoning') out += this.closeOpen('completed') + this.openReasoning();
        const open = this.open!;
        open.text += event.text;
        out += this.emit('response.reasoning_summary_text.delta', { item_id: open.id, output_index: open.outputIndex, summary_index: 0, delta: event.text });
        return out;
      }
      case 'reasoning-end': {
        if (this.open?.kind === 'reasoning') return out + this.closeReasoning({ signature: event.signature, redactedData: event.redactedData });
        if (event.signature === undefined && event.redactedData === undefined) return out;
        // A block with nothing to show (redacted thinking): an item added and done at once.
        out += this.closeOpen('completed');
        const outputIndex = this.output.length;
        const item = reasoningItem(this.newId('rs_'), compact({ text: '', signature: event.signature, redactedData: event.redactedData }), this.meta.echo.includeEncryptedReasoning);
        this.output.push(item);
        return out + this.emit('response.output_item.added', { output_index: outputIndex, item: withFields(item, { summary: [] }) }) + this.emit('response.output_item.done', { output_index: outputIndex, item });
      }
      case 'text-delta': {
        if (event.text === '') return out;
        if (this.open?.kind !== 'message') out += this.closeOpen('completed') + this.openMessage();
        const open = this.open!;
        open.text += event.text;
        return out + this.emit('response.output_text.delta', { item_id: open.id, output_index: open.outputIndex, content_index: 0, delta: event.text, logprobs: [] });
      }
      case 'tool-call-start': {
        out += this.closeOpen('completed');
        const call: CanonicalToolCall = { id: event.id, name: event.name, arguments: '', kind: event.kind };
        const open: OpenCall = { outputIndex: this.output.length, id: this.newId(event.kind === 'custom' ? 'ctc_' : 'fc_'), call };
        this.output.push(undefined);
        this.calls.set(event.index, open);
        return out + this.emit('response.output_item.added', { output_index: open.outputIndex, item: callItem(open.id, call, 'in_progress') });
      }
      case 'tool-call-delta': {
        const open = this.calls.get(event.index);
        if (!open || event.argumentsDelta === '') return out;
        open.call.arguments += event.argumentsDelta;
        const where = { item_id: open.id, output_index: open.outputIndex, delta: event.argumentsDelta };
        return out + (open.call.kind === 'custom' ? this.emit('response.custom_tool_call_input.delta', where) : this.emit('response.function_call_arguments.delta', where));
      }
      case 'tool-call-end':
        return out + this.closeCall(event.index, 'completed');
      case 'mcp-item': {
        // The vendor reports MCP work when it is done: the item is added and done at once.
        const item = mcpOutputItem(event.item);
        if (!item) return out;
        out += this.closeOpen('completed');
        const outputIndex = this.output.length;
        this.output.push(item);
        const added = item.type === 'mcp_list_tools' ? withFields(item, { tools: [] }) : item.type === 'mcp_call' ? withFields(item, { output: null, error: null, status: 'in_progress' as const }) : item;
        return out + this.emit('response.output_item.added', { output_index: outputIndex, item: added }) + this.emit('response.output_item.done', { output_index: outputIndex, item });
      }
      case 'finish':
        return out + this.finish(event);
    }
  }

  /** The stream failure (decisions.md): an `error` event, then `response.failed` with what was delivered. */
  encodeError(error: ApiError): string {
    if (this.ended) return '';
    const out = this.start();
    this.ended = true;
    const output = this.snapshotOutput();
    return (
      out +
      this.emit('error', { code: error.code, message: error.message, param: null }) +
      this.emit('response.failed', { response: responseObject(this.meta, this.id, 'failed', output, { error }) })
    );
  }

  private finish(event: FinishEvent): string {
    const state = terminalState(event);
    const status = itemStatus(state);
    let out = this.closeOpen(status);
    for (const index of [...this.calls.keys()]) out += this.closeCall(index, status);
    this.ended = true;
    const response = responseObject(this.meta, this.id, state.status, this.output.filter((item): item is ResponseOutputItem => item !== undefined), {
      usage: responsesUsage(event.usage),
      incompleteDetails: state.incompleteDetails,
    });
    return out + this.emit(state.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  private openMessage(): string {
    const open: OpenText = { kind: 'message', outputIndex: this.output.length, id: this.newId('msg_'), text: '' };
    this.output.push(undefined);
    this.open = open;
    const where = { item_id: open.id, output_index: open.outputIndex, content_index: 0 };
    return (
      this.emit('response.output_item.added', { output_index: open.outputIndex, item: messageItem(open.id, '', 'in_progress') }) +
      this.emit('response.content_part.added', withFields(where, { part: outputTextPart('') }))
    );
  }

  private openReasoning(): string {
    const open: OpenText = { kind: 'reasoning', outputIndex: this.output.length, id: this.newId('rs_'), text: '' };
    this.output.push(undefined);
    this.open = open;
    return (
      this.emit('response.output_item.added', { output_index: open.outputIndex, item: { id: open.id, type: 'reasoning', summary: [] } }) +
      this.emit('response.reasoning_summary_part.added', { item_id: open.id, output_index: open.outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } })
    );
  }

  /** Closes the open message or reasoning item (a reasoning item closed this way is unsigned). */
  private closeOpen(status: ResponseItemStatus): string {
    if (this.open?.kind === 'reasoning') return this.closeReasoning({});
    if (this.open?.kind !== 'message') return '';
    const open = this.open;
    this.open = null;
    const item = messageItem(open.id, open.text, status);
    this.output[open.outputIndex] = item;
    const where = { item_id: open.id, output_index: open.outputIndex, content_index: 0 };
    return (
      this.emit('response.output_text.done', withFields(where, { text: open.text, logprobs: [] })) +
      this.emit('response.content_part.done', withFields(where, { part: outputTextPart(open.text) })) +
      this.emit('response.output_item.done', { output_index: open.outputIndex, item })
    );
  }

  private closeReasoning(end: { signature?: string; redactedData?: string }): string {
    const open = this.open!;
    this.open = null;
    const item = reasoningItem(open.id, compact({ text: open.text, ...end }), this.meta.echo.includeEncryptedReasoning);
    this.output[open.outputIndex] = item;
    const where = { item_id: open.id, output_index: open.outputIndex, summary_index: 0 };
    return (
      this.emit('response.reasoning_summary_text.done', withFields(where, { text: open.text })) +
      this.emit('response.reasoning_summary_part.done', withFields(where, { part: { type: 'summary_text', text: open.text } })) +
      this.emit('response.output_item.done', { output_index: open.outputIndex, item })
    );
  }

  private closeCall(index: number, status: ResponseItemStatus): string {
    const open = this.calls.get(index);
    if (!open) return '';
    this.calls.delete(index);
    const item = callItem(open.id, open.call, status);
    this.output[open.outputIndex] = item;
    const where = { item_id: open.id, output_index: open.outputIndex };
    const done =
      open.call.kind === 'custom'
        ? this.emit('response.custom_tool_call_input.done', withFields(where, { input: open.call.arguments }))
        : this.emit('response.function_call_arguments.done', withFields(where, { name: open.call.name, arguments: open.call.arguments }));
    return done + this.emit('response.output_item.done', { output_index: open.outputIndex, item });
  }

  /** Items delivered so far, open ones as incomplete (for `response.failed`). */
  private snapshotOutput(): ResponseOutputItem[] {
    const items = [...this.output];
    if (this.open) {
      items[this.open.outputIndex] =
        this.open.kind === 'message' ? messageItem(this.open.id, this.open.text, 'incomplete') : reasoningItem(this.open.id, { text: this.open.text }, false);
    }
    for (const open of this.calls.values()) items[open.outputIndex] = callItem(open.id, open.call, 'incomplete');
    return items.filter((item): item is ResponseOutputItem => item !== undefined);
  }

  private emit<T extends ResponseStreamEvent['type']>(type: T, payload: Payload<T>): string {
    return sseEvent(type, { type, sequence_number: this.sequence++, ...payload });
  }
}
