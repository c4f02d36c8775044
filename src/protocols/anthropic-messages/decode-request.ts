import type {
  CanonicalReasoning,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
  ReasoningEffort,
} from '../../domain/generation/canonical';
import { mapReasoningEffort } from '../../domain/generation/rules';
import type { DecodedTextRequest } from '../../domain/generation/service';
import type { TextFieldNames } from '../../domain/generation/field-keys';
import { Fields, checkToolCount, compact, fieldPath, nameAt, refuseField } from '../decode-fields';
import { applyFieldPolicy, fieldsOf, fieldsWith } from '../apply-field-policy';
import { readCacheBreakpoint } from '../cache-breakpoints';
import { TOP_LEVEL_HINT_NAMES } from '../field-policy';
import { decodeConversation } from './decode-messages';
import { type MessagesRequestHeaders, VendorOnlyCollector } from './decode-vendor-only';
import { MESSAGES_FIELD_POLICY, MESSAGES_POLICY, NESTED_FIELD_POLICIES, TOOL_FIELD_POLICY } from './field-policy';

/**
 * Client side of `POST /v1/messages` (Anthropic Messages format): the request body → canonical
 * request. Every refusal is a 400 naming the field (docs/api.md).
 */

/** Every top-level field the decoder reads (others are refused): the field policy's, tied to the request type there; the API document is built from it. */
export const KNOWN_FIELDS = fieldsOf(MESSAGES_FIELD_POLICY);
const TOOL_FIELDS = fieldsOf(TOOL_FIELD_POLICY);
/** A tool's `cache_control` becomes its canonical breakpoint; its other passed fields go as sent. */
const TOOL_PASSED_FIELDS = fieldsWith(TOOL_FIELD_POLICY, 'passed-to-vendor').filter(
  <K extends string>(key: K): key is Exclude<K, 'cache_control'> => key !== 'cache_control',
);
const MIN_THINKING_BUDGET = 1024;

/** How a Messages request names what the canonical rules refuse. */
const MESSAGES_NAMES: TextFieldNames = {
  fields: {
    'text.outputLimit': 'max_tokens',
    'text.toolChoice': 'tool_choice.type',
    'text.toolChoiceName': 'tool_choice.name',
    'text.schema': 'output_config.format.schema',
    'text.thinkingBudget': 'thinking.budget_tokens',
    'text.prompt': 'messages',
    'text.tools': 'tools',
    'text.mcpServers': 'mcp_servers',
    // Messages has no approvals (its MCP servers never ask) nor a tool-call limit: named for completeness.
    'text.mcpApproval': 'require_approval',
    'text.maxToolCalls': 'max_tool_calls',
  },
  requiredChoice: "'any'",
  toolNoun: { function: 'a tool', custom: 'a tool' },
};
/** The beta spelling of structured output carries the schema elsewhere. */
const MESSAGES_BETA_FORMAT_NAMES: TextFieldNames = {
  ...MESSAGES_NAMES,
  fields: { ...MESSAGES_NAMES.fields, 'text.schema': 'output_format.schema' },
};
/** How Messages names each hint (parallel tool use is the inverse of a tool_choice flag). */
const MESSAGES_HINT_NAMES = { ...TOP_LEVEL_HINT_NAMES, parallelToolCalls: 'tool_choice.disable_parallel_tool_use' };

/** The canonical name of a Messages structured-output schema (Anthropic's format has none). */
export const MESSAGES_SCHEMA_NAME = 'output';

/** A decoded Messages request, and what its answer's encoding needs to know. */
export interface MessagesIngress {
  decoded: DecodedTextRequest;
  /** How this request names the fields the canonical rules refuse (field-keys.ts). */
  names: TextFieldNames;
  /** `thinking.display: 'omitted'`: thinking blocks are answered with their signature and no text. */
  omitThinking: boolean;
}

/** Validates a Messages body (field policy: field-policy.ts); throws 400 `bad_request` naming the field. */
export function decodeMessagesIngress(body: unknown, headers: MessagesRequestHeaders = {}): MessagesIngress {
  const req = Fields.body(body);
  applyFieldPolicy(req, MESSAGES_POLICY);
  if (req.oneOf('speed', ['standard', 'fast']) === 'fast')
    refuseField(
      'speed',
      "'fast' is not supported: fast mode is billed at a premium the catalog price does not cover; send 'standard' or leave it out",
    );
  const billing = req.object('billing_policy')?.allowOnly(['type', 'bill_to']);
  billing?.oneOf('type', ['billing_policy']);
  if (billing?.oneOf('bill_to', ['self', 'user_profile']) === 'user_profile')
    refuseField('billing_policy.bill_to', "'user_profile' is not supported: the account of the API key pays; send 'self' or leave it out");

  const vendorOnly = new VendorOnlyCollector(headers);
  vendorOnly.pass(req, 'service_tier', (r, key) => r.oneOf(key, ['auto', 'standard_only']));
  vendorOnly.pass(req, 'cache_control', (r, key) => (readCacheBreakpoint(r, key) ? r.jsonObject(key) : undefined));
  vendorOnly.contextManagement(req);

  const modelId = req.requiredString('model', { nonEmpty: true });
  if (!req.isSet('max_tokens')) refuseField('max_tokens', 'is required');
  const messages = decodeConversation(req, vendorOnly);
  const tools = [...decodeTools(req, vendorOnly), ...decodeMcpServers(req)];
  const choice = decodeToolChoice(req);
  const responseFormat = decodeOutputFormat(req);
  const thinking = decodeReasoning(req, vendorOnly);

  const decoded: DecodedTextRequest = {
    modelId,
    // Required above, so the fallback is never used.
    outputLimit: { value: req.raw('max_tokens'), fallback: 0 },
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
    hintNames: MESSAGES_HINT_NAMES,
  };
  // Which of the two fields carried the schema, for a refusal to name it.
  const names = req.object('output_format') ? MESSAGES_BETA_FORMAT_NAMES : MESSAGES_NAMES;
  return { decoded, names, omitThinking: thinking.omitted };
}

/** The canonical request of a Messages body (see decodeMessagesIngress). */
export const decodeMessagesRequest = (body: unknown, headers: MessagesRequestHeaders = {}): DecodedTextRequest =>
  decodeMessagesIngress(body, headers).decoded;

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
    return compact<CanonicalTool>({
      type: 'function',
      name,
      description: tool.string('description'),
      parameters: schema,
      strict: tool.boolean('strict'),
      cacheBreakpoint: vendorOnly.cacheBreakpoint(tool),
    });
  });
}

/** A tool's passed-to-vendor field, type-checked as Anthropic types it. */
function readToolField(tool: Fields, key: (typeof TOOL_PASSED_FIELDS)[number]): unknown {
  switch (key) {
    case 'eager_input_streaming':
    case 'defer_loading':
      return tool.boolean(key);
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
