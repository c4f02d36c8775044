import type {
  CanonicalEvent,
  CanonicalMcpCall,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  CanonicalUsage,
  FinishReason,
} from '../../domain/generation/canonical';
import { ProviderError } from '../../domain/generation/errors';
import { badRequest } from '../../domain/shared/errors';
import { withFields } from '../../domain/shared/objects';

/**
 * Egress codec for the Anthropic Messages API (streamed, or whole when the client reads the answer whole). One small pure mapper
 * per concern: messages (system hoisting, role alternation, thinking round-trip), tools and
 * tool choice, thinking, structured output, stop reason, usage.
 *
 * Decisions (see the README):
 * - Structured output: `json_schema` → GA `output_config.format` (constrained decoding, no
 *   beta header); `json_object` has no Anthropic equivalent without a schema → an instruction
 *   appended to `system`.
 * - Thinking: `enabled` → budget_tokens as given; an effort → low 1024 / medium 4096 /
 *   high 16384 / extra_high 32768; `adaptive` → the effort's (default medium) budget, since
 *   the 4.5 models have no adaptive mode. The budget always stays below `max_tokens` (a
 *   budget under 1,024 is impossible, so then thinking is left off). A forced tool choice
 *   cannot be combined with thinking: the tool choice wins and thinking is left off.
 * - Sampling: temperature clamped to Anthropic's 0..1; with thinking, temperature and top_p
 *   are dropped (Anthropic refuses them); when both are set only temperature is sent (the
 *   4.5 models refuse both). Penalties do not exist at Anthropic and are dropped.
 */

export const ANTHROPIC_VERSION = '2023-06-01';
export const MCP_CLIENT_BETA = 'mcp-client-2025-04-04';
export const MIN_THINKING_BUDGET = 1024;
export const THINKING_BUDGETS = { low: 1024, medium: 4096, high: 16384, extra_high: 32768 } as const;
export const JSON_OBJECT_INSTRUCTION = 'Respond with a single valid JSON object and nothing else.';

// --- wire types (request) ---------------------------------------------------------------

export type AnthropicWireBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }
  | { type: 'mcp_tool_use'; id: string; name: string; server_name: string; input: unknown }
  | { type: 'mcp_tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface AnthropicWireMessage {
  role: 'user' | 'assistant';
  content: AnthropicWireBlock[];
}

export interface AnthropicWireTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicWireToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicWireMcpServer {
  type: 'url';
  url: string;
  name: string;
  authorization_token?: string;
  tool_configuration?: { enabled: true; allowed_tools: string[] };
}

export interface AnthropicWireRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicWireMessage[];
  system?: string;
  stream: boolean;
  tools?: AnthropicWireTool[];
  tool_choice?: AnthropicWireToolChoice;
  mcp_servers?: AnthropicWireMcpServer[];
  thinking?: { type: 'enabled'; budget_tokens: number };
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  metadata?: { user_id: string };
}

/** The body plus the `anthropic-beta` features it needs. */
export interface AnthropicRequestPlan {
  body: AnthropicWireRequest;
  betas: string[];
}

// --- wire types (stream) ----------------------------------------------------------------

export interface AnthropicWireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** A content block of an answer: whole in a non-streamed message, started by `content_block_start` in a stream. */
type AnthropicWireAnswerBlock = {
  type?: string;
  id?: string;
  name?: string;
  text?: string;
  thinking?: string;
  signature?: string;
  data?: string;
  input?: unknown;
  /** mcp_tool_use */
  server_name?: string;
  /** mcp_tool_result */
  tool_use_id?: string;
  is_error?: boolean;
  content?: unknown;
};

interface AnthropicWireStreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: AnthropicWireUsage };
  content_block?: AnthropicWireAnswerBlock;
  delta?: { type?: string; text?: string; thinking?: string; signature?: string; partial_json?: string; stop_reason?: string | null; stop_sequence?: string | null };
  usage?: AnthropicWireUsage;
  error?: { type?: string; message?: string };
}

// --- request mapping ----------------------------------------------------------------------

export function toMessagesRequest(request: CanonicalRequest): AnthropicRequestPlan {
  const betas: string[] = [];
  const { system, messages } = toAnthropicMessages(request.messages);
  const systemParts = system ? [system] : [];
  // A client that reads the answer whole gets a non-streamed upstream call (decoded by pushWhole).
  const body: AnthropicWireRequest = { model: request.model.vendorModelId, max_tokens: request.maxOutputTokens, messages, stream: request.stream !== false };

  const functionTools = request.tools.filter((tool) => tool.type !== 'mcp');
  const forcedTool = functionTools.length > 0 && (request.toolChoice === 'required' || typeof request.toolChoice === 'object');
  const budget = forcedTool ? null : thinkingBudget(request);
  if (budget !== null) body.thinking = { type: 'enabled', budget_tokens: budget };

  if (functionTools.length > 0) {
    body.tools = functionTools.map(toAnthropicTool);
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
  if (format?.type === 'json_object') systemParts.push(JSON_OBJECT_INSTRUCTION);
  if (systemParts.length > 0) body.system = systemParts.join('\n\n');

  if (request.stop && request.stop.length > 0) body.stop_sequences = request.stop;
  if (budget === null) {
    if (request.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, request.temperature));
    else if (request.topP !== undefined) body.top_p = request.topP;
  }
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  return { body, betas };
}

/** A canonical MCP call → Anthropic's pair of blocks (the use, then the server's result). */
function mcpCallBlocks(call: CanonicalMcpCall): AnthropicWireBlock[] {
  const failed = call.error !== undefined;
  return [
    { type: 'mcp_tool_use', id: call.id, name: call.name, server_name: call.serverLabel, input: toolInput(call.arguments, 'function') },
    { type: 'mcp_tool_result', tool_use_id: call.id, content: (failed ? call.error : call.output) ?? '', ...(failed ? { is_error: true } : {}) },
  ];
}

/**
 * Canonical messages → Anthropic: system messages hoisted (joined in order), tool results as
 * `tool_result` blocks of a user turn, consecutive same-role turns merged (Anthropic requires
 * alternation), thinking blocks sent back only with their signature (unsigned ones would be
 * refused).
 */
export function toAnthropicMessages(input: readonly CanonicalMessage[]): { system: string | undefined; messages: AnthropicWireMessage[] } {
  const systemTexts: string[] = [];
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
        systemTexts.push(message.content);
        break;
      case 'user':
        if (message.content !== '') append('user', [{ type: 'text', text: message.content }]);
        break;
      case 'assistant': {
        const blocks: AnthropicWireBlock[] = [];
        for (const block of message.reasoning) {
          if (block.redactedData !== undefined) blocks.push({ type: 'redacted_thinking', data: block.redactedData });
          else if (block.signature !== undefined) blocks.push({ type: 'thinking', thinking: block.text, signature: block.signature });
        }
        if (message.content !== '') blocks.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments, call.kind) });
        append('assistant', blocks);
        break;
      }
      case 'tool':
        append('user', [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content, ...(message.isError ? { is_error: true } : {}) }]);
        break;
      case 'mcp':
        // An MCP call of an earlier turn, as Anthropic's own answer carried it. Only listings
        // get here besides (assertToolsSupported refuses approvals): Anthropic lists tools itself.
        if (message.item.kind === 'call') append('assistant', mcpCallBlocks(message.item));
        break;
    }
  }
  // Anthropic wants a user turn's tool results before its text.
  for (const message of messages) {
    if (message.role === 'user') message.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  }
  return { system: systemTexts.length > 0 ? systemTexts.join('\n\n') : undefined, messages };
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
  const schema = tool.type === 'function' ? tool.parameters : { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };
  return { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), input_schema: schema };
}

export function toAnthropicToolChoice(choice: CanonicalToolChoice | undefined, parallel: boolean | undefined): AnthropicWireToolChoice | undefined {
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
    else throw badRequest(`tools: MCP server '${tool.serverLabel}' sets header '${name}', which Anthropic cannot forward (only an authorization token).`, { param: 'tools' });
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
  else if (mode === 'enabled' || mode === 'adaptive' || (mode === 'default' && effort !== undefined)) wanted = THINKING_BUDGETS[effort ?? 'medium'];
  else return null;
  // budget_tokens must be below max_tokens; leave at least some room for the answer when we chose it.
  const ceiling = mode === 'enabled' && budgetTokens !== undefined ? request.maxOutputTokens - 1 : request.maxOutputTokens - MIN_THINKING_BUDGET;
  const budget = Math.min(wanted, ceiling);
  return budget >= MIN_THINKING_BUDGET ? budget : null;
}

// --- stream mapping -----------------------------------------------------------------------

export function anthropicStopReason(reason: string | null | undefined): { reason: FinishReason; refusal: boolean } {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { reason: 'length', refusal: false };
    case 'tool_use':
      return { reason: 'tool_calls', refusal: false };
    case 'refusal':
      return { reason: 'content_filter', refusal: true };
    default: // end_turn, stop_sequence, pause_turn
      return { reason: 'stop', refusal: false };
  }
}

/**
 * Anthropic's `input_tokens` excludes cache reads and writes; canonical `inputTokens` is the
 * whole prompt. Anthropic reports no separate thinking count: reasoning is unknown (null) when
 * the answer had thinking blocks, and exactly 0 when it had none.
 */
export function anthropicUsageToCanonical(usage: AnthropicWireUsage, hadThinking: boolean): CanonicalUsage {
  const input = usage.input_tokens ?? 0;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  return {
    inputTokens: input + cacheRead + cacheWrite,
    cachedInputTokens: cacheRead,
    cacheCreationInputTokens: cacheWrite,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: hadThinking ? null : 0,
  };
}

/** The short message a refusal carries when the model itself wrote nothing. */
export const REFUSAL_TEXT = 'The model declined to answer this request.';

type OpenBlock =
  | { kind: 'text' }
  | { kind: 'thinking'; signature?: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; index: number; argumentChars: number }
  | { kind: 'mcp-use'; id: string; name: string; server: string; json: string }
  | { kind: 'ignored' };

/** Turns Anthropic stream events (`event:` name + `data:` JSON) into canonical events. */
export class MessagesStreamDecoder {
  private readonly blocks = new Map<number, OpenBlock>();
  /** MCP calls Anthropic made whose result block has not come yet, by tool use id. */
  private readonly mcpCalls = new Map<string, CanonicalMcpCall>();
  private toolCallCount = 0;
  private hadThinking = false;
  private wroteText = false;
  private usage: AnthropicWireUsage = {};
  private stop: { reason: string | null; sequence: string | null } | null = null;
  private finished = false;

  constructor(private readonly vendor: string) {}

  get done(): boolean {
    return this.finished;
  }

  push(data: string): CanonicalEvent[] {
    return this.pushEvent(parseEvent(this.vendor, data));
  }

  /**
   * A non-streamed answer (`type: message`), replayed as the events of the stream that would
   * have carried it, so it goes through the same mapping.
   */
  pushWhole(answer: unknown): CanonicalEvent[] {
    const message = answer as { content?: unknown; usage?: AnthropicWireUsage; stop_reason?: string | null; stop_sequence?: string | null } | null;
    if (typeof message !== 'object' || message === null || !Array.isArray(message.content)) throw new ProviderError(`${this.vendor} answered without content.`, this.vendor);
    const events: CanonicalEvent[] = [];
    const replay = (event: AnthropicWireStreamEvent) => events.push(...this.pushEvent(event));
    replay({ type: 'message_start', message: { usage: message.usage } });
    (message.content as AnthropicWireAnswerBlock[]).forEach((block, index) => {
      if (block.type === 'tool_use' || block.type === 'mcp_tool_use') {
        replay({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
        replay({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
      } else {
        replay({ type: 'content_block_start', index, content_block: block }); // text and thinking start with their whole text
        if (block.type === 'thinking' && block.signature) replay({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
      }
      replay({ type: 'content_block_stop', index });
    });
    replay({ type: 'message_delta', delta: { stop_reason: message.stop_reason ?? null, stop_sequence: message.stop_sequence ?? null }, usage: message.usage });
    replay({ type: 'message_stop' });
    return events;
  }

  private pushEvent(event: AnthropicWireStreamEvent): CanonicalEvent[] {
    if (this.finished) return [];
    const events: CanonicalEvent[] = [];
    switch (event.type) {
      case 'message_start':
        this.mergeUsage(event.message?.usage);
        break;
      case 'content_block_start':
        this.startBlock(event.index ?? 0, event.content_block ?? {}, events);
        break;
      case 'content_block_delta':
        this.blockDelta(event.index ?? 0, event.delta ?? {}, events);
        break;
      case 'content_block_stop':
        this.stopBlock(event.index ?? 0, events);
        break;
      case 'message_delta':
        this.mergeUsage(event.usage);
        if (event.delta && 'stop_reason' in event.delta) this.stop = { reason: event.delta.stop_reason ?? null, sequence: event.delta.stop_sequence ?? null };
        break;
      case 'message_stop': {
        for (const index of [...this.blocks.keys()]) this.stopBlock(index, events);
        // A call whose result never came still happened: shown without output.
        for (const call of this.mcpCalls.values()) events.push({ type: 'mcp-item', item: call });
        this.mcpCalls.clear();
        const { reason, refusal } = anthropicStopReason(this.stop?.reason);
        if (refusal && !this.wroteText) events.push({ type: 'text-delta', text: REFUSAL_TEXT });
        this.finished = true;
        events.push({
          type: 'finish',
          reason,
          refusal,
          usage: anthropicUsageToCanonical(this.usage, this.hadThinking),
          ...(this.stop?.sequence ? { stopSequence: this.stop.sequence } : {}),
        });
        break;
      }
      case 'error':
        throw new ProviderError(`${this.vendor} reported an error mid-stream: ${event.error?.message ?? event.error?.type ?? 'unknown error'}`, this.vendor);
      default: // ping and future events
        break;
    }
    return events;
  }

  end(): CanonicalEvent[] {
    if (!this.finished) throw new ProviderError(`${this.vendor} stream ended before the answer was complete.`, this.vendor);
    return [];
  }

  private mergeUsage(usage: AnthropicWireUsage | undefined): void {
    if (!usage) return;
    // message_delta repeats the totals so far; null/absent means "no change".
    for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      const value = usage[key];
      if (typeof value === 'number') this.usage[key] = value;
    }
  }

  private startBlock(index: number, block: NonNullable<AnthropicWireStreamEvent['content_block']>, events: CanonicalEvent[]): void {
    switch (block.type) {
      case 'text':
        this.blocks.set(index, { kind: 'text' });
        if (block.text) this.text(block.text, events);
        break;
      case 'thinking':
        this.hadThinking = true;
        this.blocks.set(index, { kind: 'thinking' });
        if (block.thinking) events.push({ type: 'reasoning-delta', text: block.thinking });
        break;
      case 'redacted_thinking':
        this.hadThinking = true;
        this.blocks.set(index, { kind: 'redacted', data: block.data ?? '' });
        break;
      case 'tool_use': {
        const toolIndex = this.toolCallCount++;
        this.blocks.set(index, { kind: 'tool', index: toolIndex, argumentChars: 0 });
        events.push({ type: 'tool-call-start', index: toolIndex, id: block.id ?? `toolu_${toolIndex}`, name: block.name ?? '', kind: 'function' });
        break;
      }
      case 'mcp_tool_use':
        this.blocks.set(index, { kind: 'mcp-use', id: block.id ?? `mcptoolu_${index}`, name: block.name ?? '', server: block.server_name ?? '', json: '' });
        break;
      case 'mcp_tool_result': {
        // Comes whole, after its use: the pair is one canonical MCP call.
        const call = this.mcpCalls.get(block.tool_use_id ?? '');
        this.blocks.set(index, { kind: 'ignored' });
        if (!call) break;
        this.mcpCalls.delete(call.id);
        const text = mcpResultText(block.content);
        events.push({ type: 'mcp-item', item: block.is_error ? withFields(call, { error: text }) : withFields(call, { output: text }) });
        break;
      }
      default:
        // server_tool_use, web_search_tool_result…: run by Anthropic, with no canonical form.
        this.blocks.set(index, { kind: 'ignored' });
    }
  }

  private blockDelta(index: number, delta: NonNullable<AnthropicWireStreamEvent['delta']>, events: CanonicalEvent[]): void {
    const block = this.blocks.get(index);
    if (!block) return;
    if (block.kind === 'text' && delta.type === 'text_delta' && delta.text) this.text(delta.text, events);
    else if (block.kind === 'thinking' && delta.type === 'thinking_delta' && delta.thinking) events.push({ type: 'reasoning-delta', text: delta.thinking });
    else if (block.kind === 'thinking' && delta.type === 'signature_delta' && delta.signature) block.signature = (block.signature ?? '') + delta.signature;
    else if (block.kind === 'tool' && delta.type === 'input_json_delta' && delta.partial_json) {
      block.argumentChars += delta.partial_json.length;
      events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: delta.partial_json });
    } else if (block.kind === 'mcp-use' && delta.type === 'input_json_delta' && delta.partial_json) block.json += delta.partial_json;
  }

  private stopBlock(index: number, events: CanonicalEvent[]): void {
    const block = this.blocks.get(index);
    if (!block) return;
    this.blocks.delete(index);
    if (block.kind === 'thinking') events.push({ type: 'reasoning-end', ...(block.signature ? { signature: block.signature } : {}) });
    else if (block.kind === 'redacted') events.push({ type: 'reasoning-end', redactedData: block.data });
    else if (block.kind === 'mcp-use') this.mcpCalls.set(block.id, { kind: 'call', id: block.id, serverLabel: block.server, name: block.name, arguments: block.json === '' ? '{}' : block.json });
    else if (block.kind === 'tool') {
      // A tool without input streams no JSON at all; canonical arguments are always JSON.
      if (block.argumentChars === 0) events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: '{}' });
      events.push({ type: 'tool-call-end', index: block.index });
    }
  }

  private text(text: string, events: CanonicalEvent[]): void {
    this.wroteText = true;
    events.push({ type: 'text-delta', text });
  }
}

/** An MCP result's content: a string or text blocks. */
function mcpResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: { type?: string; text?: string } | null) => (part?.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

function parseEvent(vendor: string, data: string): AnthropicWireStreamEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProviderError(`${vendor} sent a stream event that is not JSON.`, vendor);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ProviderError(`${vendor} sent a stream event that is not a JSON object.`, vendor);
  return value as AnthropicWireStreamEvent;
}
