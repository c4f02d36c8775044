import type {
  CanonicalEvent,
  CanonicalMcpItem,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  CanonicalUsage,
  FinishReason,
  McpApprovalRule,
  McpToolFilter,
  McpToolListing,
} from '../../domain/generation/canonical';
import { compact } from '../ingress-common';
import { responsesMcpItem, type ResponseMcpItem } from './mcp-items';
import { ProviderError } from '../../domain/generation/errors';
import { toOpenAIEffort, type OpenAIEffort } from '../openai-chat/egress';

/**
 * Egress codec for the OpenAI Responses API, stateless (`store: false`, the whole
 * conversation in `input` every time). Used for OpenAI reasoning models and whenever MCP
 * tools are present (only Responses lets OpenAI call an MCP server itself).
 *
 * Not sent: stop sequences and penalties (Responses has no such fields). Reasoning items of
 * earlier turns are not sent back either (they are optional input; their encrypted content
 * would need `include` and an item id that the canonical form does not carry).
 */

// --- wire types (request) ---------------------------------------------------------------

export type ResponsesWireInputItem =
  | { type: 'message'; role: 'system' | 'user' | 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'custom_tool_call'; call_id: string; name: string; input: string }
  | { type: 'function_call_output'; call_id: string; output: string }
  | { type: 'custom_tool_call_output'; call_id: string; output: string }
  /** MCP items go back as OpenAI's own client echoes them (the shape Tollgate shows its clients). */
  | ResponseMcpItem;

type WireToolFilter = { tool_names?: string[]; read_only?: boolean };

export type ResponsesWireTool =
  | { type: 'function'; name: string; description?: string; parameters: Record<string, unknown>; strict: boolean }
  | { type: 'custom'; name: string; description?: string; format?: Record<string, unknown> }
  | {
      type: 'mcp';
      server_label: string;
      server_url: string;
      allowed_tools?: string[];
      headers?: Record<string, string>;
      authorization?: string;
      require_approval?: 'always' | 'never' | { always?: WireToolFilter; never?: WireToolFilter };
    };

export type ResponsesWireToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string } | { type: 'custom'; name: string };

export type ResponsesWireTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export interface ResponsesWireRequest {
  model: string;
  input: ResponsesWireInputItem[];
  stream: boolean;
  store: false;
  tools?: ResponsesWireTool[];
  tool_choice?: ResponsesWireToolChoice;
  parallel_tool_calls?: boolean;
  text?: { format: ResponsesWireTextFormat };
  max_output_tokens: number;
  temperature?: number;
  top_p?: number;
  reasoning?: { effort: OpenAIEffort };
  user?: string;
}

// --- wire types (stream) ----------------------------------------------------------------

export interface ResponsesWireUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number | null } | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
}

interface ResponsesWireItem {
  id?: string;
  type?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  input?: string;
  /** MCP items. */
  server_label?: string;
  tools?: Array<{ name?: string; description?: string | null; input_schema?: unknown; annotations?: unknown } | null>;
  output?: string | null;
  error?: string | null;
  approval_request_id?: string | null;
  /** Reasoning items: summary paragraphs, and (open-weight models) the reasoning text itself. */
  summary?: Array<{ text?: string }>;
  /** Message items: output text and refusal parts; reasoning items: reasoning text parts. */
  content?: Array<{ type?: string; text?: string; refusal?: string }>;
}

interface ResponsesWireResponse {
  status?: string;
  output?: ResponsesWireItem[];
  usage?: ResponsesWireUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string; message?: string } | null;
}

interface ResponsesWireEvent {
  type?: string;
  output_index?: number;
  summary_index?: number;
  item?: ResponsesWireItem;
  delta?: string;
  response?: ResponsesWireResponse;
  code?: string | null;
  message?: string;
}

// --- request mapping ----------------------------------------------------------------------

export function toResponsesRequest(request: CanonicalRequest): ResponsesWireRequest {
  const usesEffort = request.model.effort === 'openai-effort';
  const body: ResponsesWireRequest = {
    model: request.model.vendorModelId,
    input: toResponsesInput(request.messages),
    // A client that reads the answer whole gets a non-streamed call: one JSON body (pushWhole).
    stream: request.stream !== false,
    store: false,
    max_output_tokens: request.maxOutputTokens,
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map(toResponsesTool);
    if (request.toolChoice !== undefined) body.tool_choice = toResponsesToolChoice(request.toolChoice, request.tools);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const format = request.responseFormat;
  if (format && format.type !== 'text') {
    body.text = {
      format:
        format.type === 'json_object'
          ? { type: 'json_object' }
          : {
              type: 'json_schema',
              name: format.name,
              schema: format.schema,
              ...(format.strict !== undefined ? { strict: format.strict } : {}),
              ...(format.description !== undefined ? { description: format.description } : {}),
            },
    };
  }
  // Reasoning models refuse sampling parameters.
  if (!usesEffort) {
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
  } else {
    const effort = toOpenAIEffort(request.reasoning);
    if (effort) body.reasoning = { effort };
  }
  if (request.user !== undefined) body.user = request.user;
  return body;
}

export function toResponsesInput(messages: readonly CanonicalMessage[]): ResponsesWireInputItem[] {
  // Tool results name only the call id; the call's kind decides the output item type.
  const customCallIds = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls) if (call.kind === 'custom') customCallIds.add(call.id);
  }
  const items: ResponsesWireInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        items.push({ type: 'message', role: message.role, content: message.content });
        break;
      case 'assistant':
        if (message.content !== '') items.push({ type: 'message', role: 'assistant', content: message.content });
        for (const call of message.toolCalls) {
          items.push(
            call.kind === 'custom'
              ? { type: 'custom_tool_call', call_id: call.id, name: call.name, input: call.arguments }
              : { type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments },
          );
        }
        break;
      case 'tool':
        items.push({
          type: customCallIds.has(message.toolCallId) ? 'custom_tool_call_output' : 'function_call_output',
          call_id: message.toolCallId,
          output: message.content,
        });
        break;
      case 'mcp':
        items.push(responsesMcpItem(message.item));
        break;
    }
  }
  return items;
}

function toResponsesTool(tool: CanonicalTool): ResponsesWireTool {
  switch (tool.type) {
    case 'function':
      // Responses defaults `strict` to true, which refuses non-strict schemas: say it explicitly.
      return {
        type: 'function',
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters,
        strict: tool.strict ?? false,
      };
    case 'custom':
      return { type: 'custom', name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), ...(tool.format ? { format: tool.format } : {}) };
    case 'mcp':
      return {
        type: 'mcp',
        server_label: tool.serverLabel,
        server_url: tool.serverUrl,
        ...(tool.allowedTools ? { allowed_tools: tool.allowedTools } : {}),
        ...(tool.headers ? { headers: tool.headers } : {}),
        ...(tool.authorization ? { authorization: tool.authorization } : {}),
        // Absent: OpenAI's default (approval before every call), as the client expects of OpenAI.
        ...(tool.requireApproval !== undefined ? { require_approval: toWireApprovalRule(tool.requireApproval) } : {}),
      };
  }
}

function toWireApprovalRule(rule: McpApprovalRule): NonNullable<Extract<ResponsesWireTool, { type: 'mcp' }>['require_approval']> {
  if (typeof rule === 'string') return rule;
  const filter = (f: McpToolFilter | undefined): WireToolFilter | undefined =>
    f && { ...(f.toolNames ? { tool_names: f.toolNames } : {}), ...(f.readOnly !== undefined ? { read_only: f.readOnly } : {}) };
  return { ...(rule.always ? { always: filter(rule.always) } : {}), ...(rule.never ? { never: filter(rule.never) } : {}) };
}

/**
 * A finished MCP item of OpenAI's output → canonical; null for anything else, or for an item
 * too malformed to send back (it would be refused on the next turn).
 */
export function fromWireMcpItem(item: ResponsesWireItem): CanonicalMcpItem | null {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const id = text(item.id);
  const serverLabel = text(item.server_label);
  if (id === undefined || serverLabel === undefined) return null;
  switch (item.type) {
    case 'mcp_list_tools':
      return compact<CanonicalMcpItem>({
        kind: 'list_tools',
        id,
        serverLabel,
        tools: (Array.isArray(item.tools) ? item.tools : []).flatMap((tool) =>
          typeof tool?.name === 'string' ? [compact<McpToolListing>({ name: tool.name, description: text(tool.description), inputSchema: tool.input_schema ?? {}, annotations: tool.annotations ?? undefined })] : [],
        ),
        error: text(item.error),
      });
    case 'mcp_call':
      return compact<CanonicalMcpItem>({
        kind: 'call',
        id,
        serverLabel,
        name: text(item.name) ?? '',
        arguments: text(item.arguments) ?? '',
        output: text(item.output),
        error: text(item.error),
        approvalRequestId: text(item.approval_request_id),
      });
    case 'mcp_approval_request':
      return { kind: 'approval_request', id, serverLabel, name: text(item.name) ?? '', arguments: text(item.arguments) ?? '' };
    default:
      return null;
  }
}

function toResponsesToolChoice(choice: CanonicalToolChoice, tools: readonly CanonicalTool[]): ResponsesWireToolChoice {
  if (typeof choice === 'string') return choice;
  const named = tools.find((tool) => tool.type !== 'mcp' && tool.name === choice.name);
  return { type: named?.type === 'custom' ? 'custom' : 'function', name: choice.name };
}

// --- stream mapping -----------------------------------------------------------------------

export function responsesUsageToCanonical(usage: ResponsesWireUsage): CanonicalUsage {
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage.input_tokens ?? 0,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: typeof reasoning === 'number' ? reasoning : null,
  };
}

/** `incomplete_details.reason` → canonical; anything else incomplete counts as `length`. */
export function responsesIncompleteReason(reason: string | undefined): FinishReason {
  return reason === 'content_filter' ? 'content_filter' : 'length';
}

/**
 * Turns Responses stream events into canonical events. Only client-side tool calls
 * (function, custom) become tool-call events; MCP items (listings, calls, approval requests)
 * become one `mcp-item` event each when done; other vendor-run items are the vendor's
 * business. `finish` comes from `response.completed`/`response.incomplete`.
 */
export class ResponsesStreamDecoder {
  /** output_index → canonical tool-call index. */
  private readonly toolCalls = new Map<number, number>();
  private toolCallCount = 0;
  private reasoningOpen = false;
  private refusal = false;
  private finished = false;

  constructor(private readonly vendor: string) {}

  get done(): boolean {
    return this.finished;
  }

  push(data: string): CanonicalEvent[] {
    return this.apply(parseEvent(this.vendor, data));
  }

  /**
   * A whole (non-streamed) response: replayed as the stream events that would have carried it,
   * so both paths share one mapping.
   */
  pushWhole(answer: unknown): CanonicalEvent[] {
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new ProviderError(`${this.vendor} answered with a body that is not a response object.`, this.vendor);
    const response = answer as ResponsesWireResponse;
    if (response.status === 'failed') return this.apply({ type: 'response.failed', response });
    const events: CanonicalEvent[] = [];
    (response.output ?? []).forEach((item, outputIndex) => {
      for (const event of streamEventsOf(item, outputIndex)) events.push(...this.apply(event));
    });
    events.push(...this.apply({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response }));
    return events;
  }

  private apply(event: ResponsesWireEvent): CanonicalEvent[] {
    if (this.finished) return [];
    const events: CanonicalEvent[] = [];
    switch (event.type) {
      case 'response.output_item.added': {
        const item = event.item ?? {};
        if (item.type === 'function_call' || item.type === 'custom_tool_call') {
          this.closeReasoning(events);
          const index = this.toolCallCount++;
          this.toolCalls.set(event.output_index ?? -1, index);
          events.push({
            type: 'tool-call-start',
            index,
            id: item.call_id ?? item.id ?? `call_${index}`,
            name: item.name ?? '',
            kind: item.type === 'custom_tool_call' ? 'custom' : 'function',
          });
        }
        break;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (event.delta) {
          this.reasoningOpen = true;
          events.push({ type: 'reasoning-delta', text: event.delta });
        }
        break;
      case 'response.reasoning_summary_part.added':
        // Separate summary paragraphs the way the vendor's own UI does.
        if ((event.summary_index ?? 0) > 0 && this.reasoningOpen) events.push({ type: 'reasoning-delta', text: '\n\n' });
        break;
      case 'response.output_text.delta':
        if (event.delta) {
          this.closeReasoning(events);
          events.push({ type: 'text-delta', text: event.delta });
        }
        break;
      case 'response.refusal.delta':
        if (event.delta) {
          this.closeReasoning(events);
          this.refusal = true;
          events.push({ type: 'text-delta', text: event.delta });
        }
        break;
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const index = this.toolCalls.get(event.output_index ?? -1);
        if (index !== undefined && event.delta) events.push({ type: 'tool-call-delta', index, argumentsDelta: event.delta });
        break;
      }
      case 'response.output_item.done': {
        const item = event.item ?? {};
        if (item.type === 'reasoning') this.closeReasoning(events);
        const mcp = fromWireMcpItem(item);
        if (mcp) {
          this.closeReasoning(events);
          events.push({ type: 'mcp-item', item: mcp });
        }
        const index = this.toolCalls.get(event.output_index ?? -1);
        if (index !== undefined) {
          events.push({ type: 'tool-call-end', index });
          this.toolCalls.delete(event.output_index ?? -1);
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response ?? {};
        if (!response.usage) throw new ProviderError(`${this.vendor} finished its response without reporting token usage.`, this.vendor);
        this.closeReasoning(events);
        for (const index of this.toolCalls.values()) events.push({ type: 'tool-call-end', index });
        this.toolCalls.clear();
        let reason: FinishReason =
          response.status === 'incomplete' ? responsesIncompleteReason(response.incomplete_details?.reason) : this.toolCallCount > 0 ? 'tool_calls' : 'stop';
        if (this.refusal) reason = 'content_filter';
        this.finished = true;
        events.push({ type: 'finish', reason, refusal: reason === 'content_filter', usage: responsesUsageToCanonical(response.usage) });
        break;
      }
      case 'response.failed': {
        const error = event.response?.error;
        throw new ProviderError(`${this.vendor} failed the response: ${error?.message ?? error?.code ?? 'unknown error'}`, this.vendor);
      }
      case 'error':
        throw new ProviderError(`${this.vendor} reported an error mid-stream: ${event.message ?? event.code ?? 'unknown error'}`, this.vendor);
      default:
        break;
    }
    return events;
  }

  end(): CanonicalEvent[] {
    if (!this.finished) throw new ProviderError(`${this.vendor} stream ended before the answer was complete.`, this.vendor);
    return [];
  }

  private closeReasoning(events: CanonicalEvent[]): void {
    if (!this.reasoningOpen) return;
    this.reasoningOpen = false;
    events.push({ type: 'reasoning-end' });
  }
}

/** The stream events that carry one finished output item (what pushWhole replays). */
function streamEventsOf(item: ResponsesWireItem, outputIndex: number): ResponsesWireEvent[] {
  const events: ResponsesWireEvent[] = [];
  const at = { output_index: outputIndex };
  switch (item.type) {
    case 'reasoning':
      (item.summary ?? []).forEach((part, summaryIndex) => {
        events.push({ type: 'response.reasoning_summary_part.added', ...at, summary_index: summaryIndex });
        if (part.text) events.push({ type: 'response.reasoning_summary_text.delta', ...at, summary_index: summaryIndex, delta: part.text });
      });
      for (const part of item.content ?? []) if (part.type === 'reasoning_text' && part.text) events.push({ type: 'response.reasoning_text.delta', ...at, delta: part.text });
      break;
    case 'message':
      for (const part of item.content ?? []) {
        if (part.type === 'output_text' && part.text) events.push({ type: 'response.output_text.delta', ...at, delta: part.text });
        if (part.type === 'refusal' && part.refusal) events.push({ type: 'response.refusal.delta', ...at, delta: part.refusal });
      }
      break;
    case 'function_call':
    case 'custom_tool_call': {
      events.push({ type: 'response.output_item.added', ...at, item });
      const delta = item.type === 'function_call' ? item.arguments : item.input;
      if (delta) events.push({ type: item.type === 'function_call' ? 'response.function_call_arguments.delta' : 'response.custom_tool_call_input.delta', ...at, delta });
      break;
    }
    case 'mcp_list_tools':
    case 'mcp_call':
    case 'mcp_approval_request':
      break;
    default:
      // Other vendor-run items (searches) are the vendor's business, as in a stream.
      return events;
  }
  events.push({ type: 'response.output_item.done', ...at, item });
  return events;
}

function parseEvent(vendor: string, data: string): ResponsesWireEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProviderError(`${vendor} sent a stream event that is not JSON.`, vendor);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ProviderError(`${vendor} sent a stream event that is not a JSON object.`, vendor);
  return value as ResponsesWireEvent;
}
