import type {
  CanonicalMessage,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolCall,
  CanonicalToolChoice,
} from '../../domain/generation/canonical';
import { DEFAULT_OUTPUT_TOKENS, mapReasoningEffort } from '../../domain/generation/rules';
import type { DecodedTextRequest } from '../../domain/generation/service';
import type { TextFieldNames } from '../../domain/generation/field-keys';
import {
  Fields,
  checkToolCount,
  compact,
  emptyParameters,
  fieldPath,
  joinTextParts,
  nameAt,
  preferFirst,
  refuseField,
} from '../decode-fields';
import { applyFieldPolicy, fieldsOf } from '../apply-field-policy';
import { TOP_LEVEL_HINT_NAMES } from '../field-policy';
import { CHAT_FIELD_POLICY, CHAT_POLICY } from './field-policy';
import { BreakpointMarks, type MarkedText, markedText, textRuns, withBreakpoint } from '../cache-breakpoints';

/**
 * Client side of `POST /v1/chat/completions`: the request body → canonical request. Every refusal
 * is a 400 naming the field (docs/api.md).
 */

/** Every top-level field a request may carry (others are refused), from the field policy; the API document is built from this list. */
export const KNOWN_FIELDS = fieldsOf(CHAT_FIELD_POLICY);

/** Content part types of the API that carry media: refused, the text endpoints take text only. */
const MEDIA_PARTS = ['image_url', 'input_audio', 'file'];

const MAX_STOP_SEQUENCES = 4;

/** How a Chat request names what the canonical rules refuse (the output limit: the field it sent). */
const CHAT_NAMES: TextFieldNames = {
  fields: {
    'text.outputLimit': 'max_completion_tokens',
    'text.toolChoice': 'tool_choice',
    'text.toolChoiceName': 'tool_choice.function.name',
    'text.schema': 'response_format.json_schema.schema',
    'text.thinkingBudget': 'the thinking budget',
    'text.prompt': 'messages',
    'text.tools': 'tools',
    // Chat has no MCP tools nor a tool-call limit: never refused there, named for completeness.
    'text.mcpServers': 'tools',
    'text.mcpApproval': 'require_approval',
    'text.maxToolCalls': 'max_tool_calls',
  },
  requiredChoice: "'required'",
  toolNoun: { function: 'a function', custom: 'a function' },
};
const CHAT_NAMES_MAX_TOKENS: TextFieldNames = { ...CHAT_NAMES, fields: { ...CHAT_NAMES.fields, 'text.outputLimit': 'max_tokens' } };

/** What the Chat decoder yields besides the canonical request. */
export interface ChatIngress {
  decoded: DecodedTextRequest;
  /** How this request names the fields the canonical rules refuse (field-keys.ts). */
  names: TextFieldNames;
  /** `stream_options.include_usage`: end the stream with a usage chunk. */
  includeUsage: boolean;
}

/** Validates a Chat Completions body; throws 400 `bad_request` naming the field. */
export function decodeChatIngress(body: unknown): ChatIngress {
  const req = Fields.body(body);
  applyFieldPolicy(req, CHAT_POLICY);

  const modelId = req.requiredString('model', { nonEmpty: true });
  const marks = new BreakpointMarks();
  const sentMessages = req.requiredArray('messages', { nonEmpty: true });
  const messages: CanonicalMessage[] = [];
  for (let i = 0; i < sentMessages.length; i++)
    messages.push(...decodeMessage(Fields.at(sentMessages[i], fieldPath('messages', i)), marks));
  const tools = decodeTools(req, marks);
  const effort = mapReasoningEffort(req.raw('reasoning_effort'), 'reasoning_effort');

  const streamOptions = req.object('stream_options')?.allowOnly(['include_usage', 'include_obfuscation']);
  streamOptions?.boolean('include_obfuscation');

  const outputLimit = decodeOutputLimit(req);
  const decoded: DecodedTextRequest = {
    modelId,
    outputLimit: { value: outputLimit.value, fallback: DEFAULT_OUTPUT_TOKENS },
    request: compact({
      messages,
      tools,
      toolChoice: decodeToolChoice(req),
      parallelToolCalls: req.boolean('parallel_tool_calls'),
      responseFormat: decodeResponseFormat(req),
      stop: decodeStop(req),
      temperature: req.number('temperature', { min: 0, max: 2 }),
      topP: req.number('top_p', { min: 0, max: 1 }),
      frequencyPenalty: req.number('frequency_penalty', { min: -2, max: 2 }),
      presencePenalty: req.number('presence_penalty', { min: -2, max: 2 }),
      reasoning: effort ? { mode: 'default' as const, effort } : { mode: 'default' as const },
      // `safety_identifier` is OpenAI's successor of `user`; either reaches vendors as the end-user id.
      user: preferFirst(req.string('safety_identifier'), req.string('user')),
      verbosity: req.oneOf('verbosity', ['low', 'medium', 'high']),
      seed: req.integer('seed', { min: Number.MIN_SAFE_INTEGER }),
      vendorOnly: marks.asVendorOnly(),
    }),
    stream: req.boolean('stream') ?? false,
    hintNames: TOP_LEVEL_HINT_NAMES,
  };
  const names = outputLimit.field === 'max_tokens' ? CHAT_NAMES_MAX_TOKENS : CHAT_NAMES;
  return { decoded, names, includeUsage: streamOptions?.boolean('include_usage') ?? false };
}

/** The canonical request alone (see `decodeChatIngress` for `include_usage`). */
export function decodeChatRequest(body: unknown): DecodedTextRequest {
  return decodeChatIngress(body).decoded;
}

/** The output limit sent, and which of the two fields carried it. */
function decodeOutputLimit(req: Fields): { value: unknown; field: 'max_tokens' | 'max_completion_tokens' } {
  const maxCompletionTokens = req.raw('max_completion_tokens');
  const maxTokens = req.raw('max_tokens');
  if (maxCompletionTokens !== undefined && maxTokens !== undefined) {
    refuseField('max_tokens', 'cannot be sent together with max_completion_tokens; send only max_completion_tokens');
  }
  return maxTokens !== undefined
    ? { value: maxTokens, field: 'max_tokens' }
    : { value: maxCompletionTokens, field: 'max_completion_tokens' };
}

/**
 * A message; its text parts may carry `cache_control` (LiteLLM's and OpenRouter's convention for
 * Anthropic models): a marked part ends a run of joined text, and each run is its own message
 * (an assistant's tool calls go with its last), so the breakpoint stays after the same text.
 */
function decodeMessage(m: Fields, marks: BreakpointMarks): CanonicalMessage[] {
  const role = m.requiredOneOf('role', ['system', 'developer', 'user', 'assistant', 'tool', 'function']);
  switch (role) {
    case 'system':
    case 'developer':
    case 'user': {
      // `name` is accepted and ignored: no vendor behind Tollgate uses participant names.
      m.allowOnly(['role', 'content', 'name']).string('name');
      const canonicalRole = role === 'user' ? 'user' : 'system';
      return textContent(m, { required: true, refusalParts: false }, marks).map((run) => ({
        role: canonicalRole,
        content: run.text,
        ...withBreakpoint(run.cacheBreakpoint),
      }));
    }
    case 'assistant': {
      // `annotations` is part of every answer message (ours included): a client sending an
      // answer back verbatim, as tool loops do, sends it. Accepted and ignored.
      m.allowOnly(['role', 'content', 'name', 'refusal', 'tool_calls', 'audio', 'function_call', 'annotations']).string('name');
      m.array('annotations');
      m.refuseIfSet(['audio'], 'is not supported: chat endpoints answer in text only');
      m.refuseIfSet(['function_call'], 'is not supported (legacy functions API); use tool_calls');
      const runs = textContent(m, { required: false, refusalParts: true }, marks);
      const last = runs.pop()!;
      // A past refusal is what the assistant said: it stays in the conversation as its text.
      const refusal = m.string('refusal');
      const toolCalls = (m.objects('tool_calls') ?? []).map(decodeToolCall);
      const earlier = runs.map((run): CanonicalMessage => ({
        role: 'assistant',
        content: run.text,
        toolCalls: [],
        reasoning: [],
        ...withBreakpoint(run.cacheBreakpoint),
      }));
      const content = last.text === '' && runs.length === 0 && refusal ? refusal : last.text;
      return [...earlier, { role: 'assistant', content, toolCalls, reasoning: [], ...withBreakpoint(last.cacheBreakpoint) }];
    }
    case 'tool': {
      m.allowOnly(['role', 'content', 'tool_call_id']);
      const runs = textContent(m, { required: true, refusalParts: false }, marks);
      return [
        {
          role: 'tool',
          toolCallId: m.requiredString('tool_call_id', { nonEmpty: true }),
          content: joinTextParts(runs.map((run) => run.text)),
          isError: false,
          ...withBreakpoint(runs.findLast((run) => run.cacheBreakpoint)?.cacheBreakpoint),
        },
      ];
    }
    case 'function':
      return refuseField(m.field('role'), "'function' is not supported (legacy functions API); use tool messages");
  }
}

/** A message's `content`: a string or text parts (assistant messages may also hold refusal parts), in runs (textRuns). */
function textContent(m: Fields, options: { required: boolean; refusalParts: boolean }, marks: BreakpointMarks): MarkedText[] {
  const value = m.raw('content');
  const field = m.field('content');
  if (value === undefined) {
    if (options.required) refuseField(field, 'is required');
    return [{ text: '' }];
  }
  if (typeof value === 'string') return [{ text: value }];
  if (!Array.isArray(value)) refuseField(field, 'must be a string or an array of text parts');
  const parts = value.map((raw, j): MarkedText => {
    const part = Fields.at(raw, fieldPath(field, j));
    const type = part.requiredString('type');
    if (type === 'text')
      return markedText(part, part.allowOnly(['type', 'text', 'cache_control']).requiredString('text'), marks.read(part));
    if (type === 'refusal' && options.refusalParts) return { text: part.allowOnly(['type', 'refusal']).requiredString('refusal') };
    if (MEDIA_PARTS.includes(type)) refuseField(part.field('type'), `'${type}' is not supported: chat endpoints take text input only`);
    return refuseField(part.field('type'), options.refusalParts ? "must be 'text' or 'refusal'" : "must be 'text'");
  });
  return textRuns(parts);
}

function decodeToolCall(call: Fields): CanonicalToolCall {
  call.allowOnly(['id', 'type', 'function', 'custom']);
  const type = call.requiredString('type');
  if (type !== 'function') refuseField(call.field('type'), "must be 'function': chat requests declare function tools only");
  const fn = call.requiredObject('function').allowOnly(['name', 'arguments']);
  return {
    id: call.requiredString('id', { nonEmpty: true }),
    name: fn.requiredString('name'),
    arguments: fn.requiredString('arguments'),
    kind: 'function',
  };
}

function decodeTools(req: Fields, marks: BreakpointMarks): CanonicalTool[] {
  const list = req.array('tools') ?? [];
  checkToolCount(list, 'tools');
  return list.map((raw, i) => {
    // `cache_control` beside `function`: LiteLLM's convention for an Anthropic tool breakpoint.
    const tool = Fields.at(raw, fieldPath('tools', i)).allowOnly(['type', 'function', 'custom', 'cache_control']);
    const type = tool.requiredString('type');
    if (type !== 'function') refuseField(tool.field('type'), "must be 'function': chat requests take function tools only");
    const fn = tool.requiredObject('function').allowOnly(['name', 'description', 'parameters', 'strict']);
    return compact<CanonicalTool>({
      type: 'function',
      name: nameAt(fn, 'name'),
      description: fn.string('description'),
      parameters: fn.jsonObject('parameters') ?? emptyParameters(),
      strict: fn.boolean('strict'),
      cacheBreakpoint: marks.read(tool),
    });
  });
}

function decodeToolChoice(req: Fields): CanonicalToolChoice | undefined {
  const value = req.raw('tool_choice');
  if (value === undefined) return undefined;
  let choice: CanonicalToolChoice;
  if (typeof value === 'string') {
    choice = req.oneOf('tool_choice', ['none', 'auto', 'required'])!;
  } else {
    const named = req.requiredObject('tool_choice').allowOnly(['type', 'function', 'custom', 'allowed_tools']);
    const type = named.requiredString('type');
    if (type !== 'function') refuseField(named.field('type'), "must be 'function' (or tool_choice one of 'none', 'auto', 'required')");
    const fn = named.requiredObject('function').allowOnly(['name']);
    const name = fn.requiredString('name');
    choice = { name };
  }
  return choice;
}

function decodeResponseFormat(req: Fields): CanonicalResponseFormat | undefined {
  const format = req.object('response_format');
  if (!format) return undefined;
  const type = format.requiredOneOf('type', ['text', 'json_object', 'json_schema']);
  if (type !== 'json_schema') {
    format.allowOnly(['type']);
    return { type };
  }
  const spec = format
    .allowOnly(['type', 'json_schema'])
    .requiredObject('json_schema')
    .allowOnly(['name', 'description', 'schema', 'strict']);
  const schema = spec.jsonObject('schema');
  if (!schema) refuseField(spec.field('schema'), 'is required');
  return compact<CanonicalResponseFormat>({
    type: 'json_schema',
    name: nameAt(spec, 'name'),
    schema,
    strict: spec.boolean('strict'),
    description: spec.string('description'),
  });
}

function decodeStop(req: Fields): string[] | undefined {
  const value = req.raw('stop');
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : req.strings('stop');
  if (!list) return undefined;
  if (list.length > MAX_STOP_SEQUENCES) refuseField('stop', `must hold at most ${MAX_STOP_SEQUENCES} sequences`);
  list.forEach((s, i) => {
    if (s === '') refuseField(fieldPath('stop', i), 'must not be empty');
  });
  return list.length > 0 ? list : undefined;
}
