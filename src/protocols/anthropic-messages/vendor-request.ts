import type {
  CanonicalMcpCall,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  VendorHints,
  VendorOnlySettings,
} from '../../domain/generation/canonical';
import { badRequest } from '../../domain/shared/errors';
import { type MarkedText, withBreakpoint } from '../cache-breakpoints';
import type {
  AnthropicRequestPlan,
  AnthropicWireBlock,
  AnthropicWireMcpServer,
  AnthropicWireMessage,
  AnthropicWireRequest,
  AnthropicWireTextBlock,
  AnthropicWireTool,
  AnthropicWireToolChoice,
} from './vendor-types';
import { CONTEXT_MANAGEMENT_BETA } from './decode-vendor-only';
import { cacheControlOf, checkCacheBreakpoints } from './vendor-cache';

/**
 * Vendor side of the Anthropic Messages API: canonical request → request body and the betas it
 * needs (its answer, streamed or whole, is read by `stream-decoder.ts`). One small pure mapper
 * per concern: messages (system hoisting, role alternation, thinking round-trip), tools and
 * tool choice, thinking, structured output.
 *
 * Choices:
 * - Structured output: `json_schema` → GA `output_config.format` (constrained decoding, no
 *   beta header); `json_object` has no Anthropic equivalent without a schema → an instruction
 *   appended to `system`.
 * - Thinking: `enabled` → budget_tokens as given; an effort → low 1024 / medium 4096 /
 *   high 16384 / extra_high 32768; `adaptive` → the effort's (default medium) budget, since
 *   the 4.5 models have no adaptive mode. The budget always stays below `max_tokens` (a
 *   budget under 1,024 is impossible, so then thinking is left off). A forced tool choice
 *   cannot be combined with thinking: the tool choice wins and thinking is left off.
 * - Sampling: temperature clamped to Anthropic's 0..1. Which hints Anthropic takes for a request
 *   (none of temperature, top_p and top_k with thinking; not top_p beside temperature) is
 *   declared by `anthropicHints` and settled by the pipeline (hints.ts): what arrives is sent.
 * - What a Messages client sent for Anthropic alone (the field policy's `passed-to-vendor`:
 *   `context_management`, `service_tier`, `cache_control`, tools' own fields, the
 *   `anthropic-beta` and `anthropic-version` headers) goes as sent.
 * - Cache breakpoints go back on the block, tool or system block that carried them (the system
 *   prompt is then sent as text blocks, one per canonical system message); too many of them, or
 *   in an order Anthropic refuses, are refused first (vendor-cache.ts).
 */

export const ANTHROPIC_VERSION = '2023-06-01';
export const MCP_CLIENT_BETA = 'mcp-client-2025-04-04';
export const MIN_THINKING_BUDGET = 1024;
export const THINKING_BUDGETS = { low: 1024, medium: 4096, high: 16384, extra_high: 32768 } as const;
export const JSON_OBJECT_INSTRUCTION = 'Respond with a single valid JSON object and nothing else.';

export function toMessagesRequest(request: CanonicalRequest): AnthropicRequestPlan {
  const betas: string[] = [];
  const { system, messages } = toAnthropicMessages(request.messages);
  const systemParts: MarkedText[] = [...system];
  // A client that reads the answer whole gets a non-streamed upstream call (decoded by pushWhole).
  const body: AnthropicWireRequest = {
    model: request.model.vendorModelId,
    max_tokens: request.maxOutputTokens,
    messages,
    stream: request.stream !== false,
  };

  const functionTools = request.tools.filter((tool) => tool.type !== 'mcp');
  const budget = plannedThinkingBudget(request);
  if (budget !== null) body.thinking = { type: 'enabled', budget_tokens: budget };

  const vendorOnly = request.vendorOnly?.protocol === 'anthropic' ? request.vendorOnly : undefined;
  if (functionTools.length > 0) {
    body.tools = functionTools.map((tool) => ({ ...toAnthropicTool(tool), ...vendorOnly?.toolFields[tool.name] }));
    const choice = toAnthropicToolChoice(request.toolChoice, request.parallelToolCalls);
    if (choice) body.tool_choice = choice;
  }
  const servers = request.tools.flatMap((tool) => (tool.type === 'mcp' ? [toMcpServer(tool)] : []));
  if (servers.length > 0) {
    body.mcp_servers = servers;
    betas.push(MCP_CLIENT_BETA);
  }

  const format = request.responseFormat;
  if (format?.type === 'json_schema') body.output_config = { format: { type: 'json_schema', schema: format.schema } };
  if (format?.type === 'json_object') systemParts.push({ text: JSON_OBJECT_INSTRUCTION });
  if (systemParts.length > 0) body.system = systemBody(systemParts);

  if (request.stop && request.stop.length > 0) body.stop_sequences = request.stop;
  if (request.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, request.temperature));
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  const plan = vendorOnly ? withVendorOnly({ body, betas }, vendorOnly) : { body, betas };
  checkCacheBreakpoints(plan.body);
  return plan;
}

const SAMPLING_ALONE: VendorHints = new Set(['temperature', 'topK', 'parallelToolCalls']);
const SAMPLING: VendorHints = new Set([...SAMPLING_ALONE, 'topP']);
const WHILE_THINKING: VendorHints = new Set(['parallelToolCalls']);

/**
 * The hints Anthropic takes for a request: no sampling value while thinking (Anthropic refuses
 * them then), and top_p only without temperature (the 4.5 models refuse both); no penalties,
 * seed or verbosity.
 */
export function anthropicHints(request: CanonicalRequest): VendorHints {
  if (plannedThinkingBudget(request) !== null) return WHILE_THINKING;
  return request.temperature !== undefined ? SAMPLING_ALONE : SAMPLING;
}

/** The thinking budget Anthropic is sent, or null: none with a forced tool, which Anthropic refuses beside thinking. */
function plannedThinkingBudget(request: CanonicalRequest): number | null {
  const forcedTool = request.toolChoice === 'required' || typeof request.toolChoice === 'object';
  return forcedTool && request.tools.some((tool) => tool.type !== 'mcp') ? null : thinkingBudget(request);
}

/**
 * The system prompt: one string, its parts a blank line apart, as long as no part carries a
 * breakpoint; text blocks otherwise, so each breakpoint stays on its part (empty parts left out:
 * Anthropic refuses empty text blocks).
 */
function systemBody(parts: readonly MarkedText[]): string | AnthropicWireTextBlock[] {
  if (!parts.some((part) => part.cacheBreakpoint)) return parts.map((part) => part.text).join('\n\n');
  return parts
    .filter((part) => part.text !== '')
    .map((part) => ({ type: 'text', text: part.text, ...cacheControlOf(part.cacheBreakpoint) }));
}

/** The client's Anthropic-only fields and headers on top of the body Tollgate built. */
function withVendorOnly(plan: AnthropicRequestPlan, settings: VendorOnlySettings): AnthropicRequestPlan {
  const { body } = plan;
  const { output_config: outputConfig, ...rest } = settings.body;
  Object.assign(body, rest);
  if (outputConfig !== undefined) body.output_config = { ...body.output_config, ...(outputConfig as Record<string, unknown>) };
  const betas = [...(settings.headers['anthropic-beta']?.split(',') ?? []), ...plan.betas];
  if (body.context_management !== undefined) betas.push(CONTEXT_MANAGEMENT_BETA);
  const version = settings.headers['anthropic-version'];
  return { body, betas: [...new Set(betas)], ...(version !== undefined ? { version } : {}) };
}

/** A canonical MCP call → Anthropic's pair of blocks (the use, then the server's result). */
function mcpCallBlocks(call: CanonicalMcpCall): AnthropicWireBlock[] {
  const failed = call.error !== undefined;
  return [
    { type: 'mcp_tool_use', id: call.id, name: call.name, server_name: call.serverLabel, input: toolInput(call.arguments, 'function') },
    {
      type: 'mcp_tool_result',
      tool_use_id: call.id,
      content: (failed ? call.error : call.output) ?? '',
      ...(failed ? { is_error: true } : {}),
    },
  ];
}

/**
 * Canonical messages → Anthropic: system messages hoisted (joined in order), tool results as
 * `tool_result` blocks of a user turn, consecutive same-role turns merged (Anthropic requires
 * alternation), thinking blocks sent back only with their signature (unsigned ones would be
 * refused).
 */
export function toAnthropicMessages(input: readonly CanonicalMessage[]): { system: MarkedText[]; messages: AnthropicWireMessage[] } {
  const system: MarkedText[] = [];
  const messages: AnthropicWireMessage[] = [];
  const append = (role: 'user' | 'assistant', blocks: AnthropicWireBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of input) {
    switch (message.role) {
      case 'system':
        system.push({ text: message.content, ...withBreakpoint(message.cacheBreakpoint) });
        break;
      case 'user':
        if (message.content !== '') append('user', [{ type: 'text', text: message.content, ...cacheControlOf(message.cacheBreakpoint) }]);
        break;
      case 'assistant': {
        const blocks: AnthropicWireBlock[] = [];
        for (const block of message.reasoning) {
          if (block.redactedData !== undefined) blocks.push({ type: 'redacted_thinking', data: block.redactedData });
          else if (block.signature !== undefined) blocks.push({ type: 'thinking', thinking: block.text, signature: block.signature });
        }
        if (message.content !== '') blocks.push({ type: 'text', text: message.content, ...cacheControlOf(message.cacheBreakpoint) });
        for (const call of message.toolCalls)
          blocks.push({
            type: 'tool_use',
            id: call.id,
            name: call.name,
            input: toolInput(call.arguments, call.kind),
            ...cacheControlOf(call.cacheBreakpoint),
          });
        append('assistant', blocks);
        break;
      }
      case 'tool':
        append('user', [
          {
            type: 'tool_result',
            tool_use_id: message.toolCallId,
            content: message.content,
            ...(message.isError ? { is_error: true } : {}),
            ...cacheControlOf(message.cacheBreakpoint),
          },
        ]);
        break;
      case 'mcp':
        // An MCP call of an earlier turn, as Anthropic's own answer carried it. Only listings
        // get here besides (Anthropic's capabilities refuse approvals): Anthropic lists tools itself.
        if (message.item.kind === 'call') append('assistant', mcpCallBlocks(message.item));
        break;
    }
  }
  // Anthropic wants a user turn's tool results before its text.
  for (const message of messages) {
    if (message.role === 'user') message.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  }
  return { system, messages };
}

/** tool_use.input must be an object: JSON arguments are parsed, anything else is wrapped. */
function toolInput(args: string, kind: 'function' | 'custom'): unknown {
  if (kind === 'custom') return { input: args };
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : { value: parsed };
  } catch {
    return { input: args };
  }
}

function toAnthropicTool(tool: Exclude<CanonicalTool, { type: 'mcp' }>): AnthropicWireTool {
  // Custom tools are refused before this point; history may still hold their calls.
  const schema =
    tool.type === 'function' ? tool.parameters : { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };
  return {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    input_schema: schema,
    ...cacheControlOf(tool.cacheBreakpoint),
  };
}

export function toAnthropicToolChoice(
  choice: CanonicalToolChoice | undefined,
  parallel: boolean | undefined,
): AnthropicWireToolChoice | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...disable } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...disable };
  if (choice === 'required') return { type: 'any', ...disable };
  return { type: 'tool', name: choice.name, ...disable };
}

function toMcpServer(tool: Extract<CanonicalTool, { type: 'mcp' }>): AnthropicWireMcpServer {
  let token = tool.authorization;
  for (const [name, value] of Object.entries(tool.headers ?? {})) {
    if (name.toLowerCase() === 'authorization') token ??= value.replace(/^Bearer\s+/i, '');
    // The MCP connector takes a bearer token only; other headers cannot be forwarded.
    else
      throw badRequest(
        `tools: MCP server '${tool.serverLabel}' sets header '${name}', which Anthropic cannot forward (only an authorization token).`,
        { field: 'tools' },
      );
  }
  return {
    type: 'url',
    url: tool.serverUrl,
    name: tool.serverLabel,
    ...(token ? { authorization_token: token } : {}),
    ...(tool.allowedTools ? { tool_configuration: { enabled: true as const, allowed_tools: tool.allowedTools } } : {}),
  };
}

/** The thinking budget to send, or null for no thinking. */
export function thinkingBudget(request: CanonicalRequest): number | null {
  if (request.model.effort !== 'anthropic-thinking') return null;
  const { mode, effort, budgetTokens } = request.reasoning;
  let wanted: number;
  if (mode === 'enabled' && budgetTokens !== undefined) wanted = budgetTokens;
  else if (mode === 'enabled' || mode === 'adaptive' || (mode === 'default' && effort !== undefined))
    wanted = THINKING_BUDGETS[effort ?? 'medium'];
  else return null;
  // budget_tokens must be below max_tokens; leave at least some room for the answer when we chose it.
  const ceiling =
    mode === 'enabled' && budgetTokens !== undefined ? request.maxOutputTokens - 1 : request.maxOutputTokens - MIN_THINKING_BUDGET;
  const budget = Math.min(wanted, ceiling);
  return budget >= MIN_THINKING_BUDGET ? budget : null;
}
