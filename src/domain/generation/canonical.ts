import type { AnswerCost } from '../billing/answer-cost';
import type { TextModel } from '../catalog/types';
import type { Cancellation } from './cancellation';

/**
 * The canonical form of a text generation: every ingress format (Chat Completions, Responses,
 * Messages) decodes into a CanonicalRequest, every provider (OpenAI, Anthropic, Gemini,
 * OpenAI-compatible, sandbox) consumes one and yields CanonicalEvents, and every ingress
 * format encodes those events back. N formats × M vendors cost N + M codecs.
 */

/** Effort on one scale for every format (`none`/`minimal` → low, `xhigh` → extra_high). */
export type ReasoningEffort = 'low' | 'medium' | 'high' | 'extra_high';

export interface CanonicalReasoning {
  /** `disabled`: no thinking; `enabled`: with `budgetTokens`; `adaptive`: the vendor decides; `default`: nothing said. */
  mode: 'default' | 'disabled' | 'enabled' | 'adaptive';
  effort?: ReasoningEffort;
  /** Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`. */
  budgetTokens?: number;
}

/**
 * A prompt-cache breakpoint the client marked (Anthropic `cache_control`): a vendor that takes
 * breakpoints caches the prompt through the part that carries it (tools, then system, then
 * messages, in that order), for `ttl` (absent: the vendor's default, 5 minutes at Anthropic).
 * Vendors that cache prompts on their own (OpenAI, Gemini) have no breakpoints and ignore it.
 */
export interface CacheBreakpoint {
  ttl?: '5m' | '1h';
}

export interface CanonicalToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments (function tools) or the raw input (custom tools). */
  arguments: string;
  kind: 'function' | 'custom';
  cacheBreakpoint?: CacheBreakpoint;
}

/** A reasoning block an assistant turn carried (Anthropic needs the signature to continue). */
export interface CanonicalReasoningBlock {
  text: string;
  signature?: string;
  /** Anthropic `redacted_thinking` data. */
  redactedData?: string;
}

export type JsonSchema = Record<string, unknown>;

/** A tool an MCP server listed, as the vendor reported it. */
export interface McpToolListing {
  name: string;
  description?: string;
  inputSchema: unknown;
  annotations?: unknown;
}

/**
 * What a vendor that runs MCP servers itself reports of that work (OpenAI Responses items,
 * Anthropic `mcp_tool_use` + `mcp_tool_result` pairs). A stateless client must send these back
 * on its next turn: the approval it answers, the calls already made, the listing the vendor
 * need not fetch again. Ids are the vendor's own, since the vendor matches them.
 */
export type CanonicalMcpItem =
  | { kind: 'list_tools'; id: string; serverLabel: string; tools: McpToolListing[]; error?: string }
  | {
      kind: 'call';
      id: string;
      serverLabel: string;
      name: string;
      arguments: string;
      output?: string;
      error?: string;
      approvalRequestId?: string;
    }
  /** The vendor asks the client before calling the server (`require_approval`). */
  | { kind: 'approval_request'; id: string; serverLabel: string; name: string; arguments: string }
  /** The client's answer to an approval request (only ever sent, never produced). */
  | { kind: 'approval_response'; id?: string; approvalRequestId: string; approve: boolean; reason?: string };

export type CanonicalMcpCall = Extract<CanonicalMcpItem, { kind: 'call' }>;

/** `cacheBreakpoint`: after the message's text (an assistant's: its text, before its tool calls). */
export type CanonicalMessage =
  | { role: 'system'; content: string; cacheBreakpoint?: CacheBreakpoint }
  | { role: 'user'; content: string; cacheBreakpoint?: CacheBreakpoint }
  | {
      role: 'assistant';
      content: string;
      toolCalls: CanonicalToolCall[];
      reasoning: CanonicalReasoningBlock[];
      cacheBreakpoint?: CacheBreakpoint;
    }
  | { role: 'tool'; toolCallId: string; content: string; isError: boolean; cacheBreakpoint?: CacheBreakpoint }
  /** MCP work of an earlier turn, in conversation order (see CanonicalMcpItem). */
  | { role: 'mcp'; item: CanonicalMcpItem };

/** Which of a server's tools an approval rule covers (OpenAI `McpToolFilter`). */
export interface McpToolFilter {
  toolNames?: string[];
  readOnly?: boolean;
}

/** `always`/`never` for every tool, or per tool; absent: the vendor's default. */
export type McpApprovalRule = 'always' | 'never' | { always?: McpToolFilter; never?: McpToolFilter };

export type CanonicalTool =
  | { type: 'function'; name: string; description?: string; parameters: JsonSchema; strict?: boolean; cacheBreakpoint?: CacheBreakpoint }
  | { type: 'custom'; name: string; description?: string; format?: Record<string, unknown>; cacheBreakpoint?: CacheBreakpoint }
  /** Remote MCP server the vendor itself calls (OpenAI Responses `mcp`, Anthropic `mcp_servers`). */
  | {
      type: 'mcp';
      serverLabel: string;
      serverUrl: string;
      allowedTools?: string[];
      headers?: Record<string, string>;
      authorization?: string;
      requireApproval?: McpApprovalRule;
    };

/** A named choice forces that tool: a function tool unless `kind` says custom. */
export type CanonicalToolChoice = 'auto' | 'none' | 'required' | { name: string; kind?: 'custom' };

export type CanonicalResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: JsonSchema; strict?: boolean; description?: string };

export interface CanonicalRequest {
  model: TextModel;
  /** In conversation order; `system` messages may appear anywhere (vendor requests hoist them). */
  messages: CanonicalMessage[];
  tools: CanonicalTool[];
  toolChoice?: CanonicalToolChoice;
  /** A hint (see `temperature`). */
  parallelToolCalls?: boolean;
  responseFormat?: CanonicalResponseFormat;
  /** Output limit after defaulting and clamping to the model's maximum (reasoning included). */
  maxOutputTokens: number;
  stop?: string[];
  /**
   * Hints (hints.ts, the hint rule): sent to a vendor that takes them for this request, dropped
   * and named on the answer otherwise. Sampling, answer length (`verbosity`), and whether tool
   * calls may come several at once (`parallelToolCalls`).
   */
  temperature?: number;
  topP?: number;
  topK?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
  verbosity?: 'low' | 'medium' | 'high';
  reasoning: CanonicalReasoning;
  /** End-user id for vendor abuse monitoring (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /** Most calls of vendor-run (MCP) tools in one answer (Responses `max_tool_calls`); set only when MCP tools are declared. */
  maxToolCalls?: number;
  /**
   * false: the client reads the answer whole, so a provider may call its vendor without
   * streaming (every vendor adapter does). Absent: stream.
   */
  stream?: boolean;
  /** Settings only one vendor protocol carries; absent when the client sent none. */
  vendorOnly?: VendorOnlySettings;
}

/**
 * Settings of one vendor's protocol with no canonical meaning (docs/api.md, "Field policy"). A
 * model served over that protocol gets them as sent; for any other, the pipeline applies the
 * context edits where that is exact (refusing an edit it cannot apply), leaves deferred tools out
 * until the conversation calls them, and drops the hints, naming them on the answer
 * (vendor-only.ts, hints.ts).
 */
export interface VendorOnlySettings {
  protocol: 'anthropic';
  /** Top-level body fields as sent (`context_management`, `top_k`, `service_tier`…). */
  body: Record<string, unknown>;
  /** Extra fields per tool name (`eager_input_streaming`, `defer_loading`…). */
  toolFields: Record<string, Record<string, unknown>>;
  /** Request headers for that vendor (`anthropic-beta`, `anthropic-version`). */
  headers: Record<string, string>;
  contextEdits: CanonicalContextEdit[];
  /** Tools offered only once a tool search names them (Anthropic `defer_loading`). */
  deferredTools: string[];
  /** What a vendor without these settings ignores, as the client named it. */
  hints: string[];
}

/**
 * A context edit (Anthropic `context_management.edits[]`) in canonical terms. `field` names it in
 * the request, for a refusal. Triggers count input tokens (or tool uses); `keep` counts the most
 * recent tool uses (or assistant turns with thinking) left alone.
 */
export type CanonicalContextEdit =
  | { kind: 'clear_thinking'; field: string; keepTurns: number | 'all' }
  | {
      kind: 'clear_tool_uses';
      field: string;
      trigger: { unit: 'input_tokens' | 'tool_uses'; value: number };
      keep: number;
      excludeTools: readonly string[];
    }
  | { kind: 'compact'; field: string; trigger: { unit: 'input_tokens'; value: number } };

/** The canonical request's hints (hints.ts, the hint rule). */
export type CanonicalHint =
  'temperature' | 'topP' | 'topK' | 'frequencyPenalty' | 'presencePenalty' | 'seed' | 'verbosity' | 'parallelToolCalls';

/** The hints a vendor takes for one request. */
export type VendorHints = ReadonlySet<CanonicalHint>;

/**
 * Usage as the vendor reported it, in one shape whatever the vendor counts: `inputTokens` is the
 * whole prompt (uncached, cache reads and cache writes), `outputTokens` includes reasoning.
 */
export interface CanonicalUsage {
  inputTokens: number;
  /** Part of `inputTokens` read from the vendor's prompt cache, billed at the cached-input price. */
  cachedInputTokens: number;
  /**
   * Parts of `inputTokens` written to the vendor's prompt cache (Anthropic), by how long the entry
   * lives, billed at the cache-write prices; absent: none.
   */
  cacheWrite5mInputTokens?: number;
  cacheWrite1hInputTokens?: number;
  outputTokens: number;
  /** null when the vendor does not report a reasoning count (the pipeline then estimates it). */
  reasoningTokens: number | null;
  /** What the answer was charged, set by the pipeline on the finish it delivers (never by a vendor). */
  cost?: AnswerCost;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export type CanonicalEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  /** Closes a reasoning block; carries what a later turn must send back (Anthropic). */
  | { type: 'reasoning-end'; signature?: string; redactedData?: string }
  | { type: 'tool-call-start'; index: number; id: string; name: string; kind: 'function' | 'custom' }
  | { type: 'tool-call-delta'; index: number; argumentsDelta: string }
  | { type: 'tool-call-end'; index: number }
  /** A finished piece of MCP work the vendor did or asks approval for (never a tool call for the client). */
  | { type: 'mcp-item'; item: CanonicalMcpItem }
  /**
   * Always last on success. `refusal`: the model declined for safety (Chat: finish_reason
   * content_filter; Messages: stop_reason refusal), with its short message as text.
   * `appliedContextEdits`: the vendor's report of the context edits it applied, if it sent one.
   */
  | {
      type: 'finish';
      reason: FinishReason;
      refusal: boolean;
      usage: CanonicalUsage;
      stopSequence?: string;
      appliedContextEdits?: AppliedContextEdit[];
    };

/**
 * A context edit the vendor applied to the prompt (Anthropic `context_management.applied_edits[]`:
 * `type`, `cleared_tool_uses` or `cleared_thinking_turns`, `cleared_input_tokens`), as it reported it,
 * for a client of the same protocol.
 */
export type AppliedContextEdit = Readonly<Record<string, unknown>>;

/** The prompt's usage as a vendor reports it before its answer (Anthropic's `message_start`). */
export type InputUsage = Pick<CanonicalUsage, 'inputTokens' | 'cachedInputTokens' | 'cacheWrite5mInputTokens' | 'cacheWrite1hInputTokens'>;

/** What a provider yields: the canonical events, and first, when its vendor reports it, the prompt's usage (kept by the pipeline for the answer's start). */
export type ProviderEvent =
  | CanonicalEvent
  | { type: 'input-usage'; usage: InputUsage }
  /** Routing (domain/routing): which deployment of the model answers, before its first event. */
  | { type: 'served-by'; deployment: string; vendor: string; attempts: number };

/**
 * A provider's answer to a non-streamed call, which arrives whole: iterable like a stream (what
 * routing and other wrappers read), and readable in one promise of all its events, which the
 * pipeline uses to deliver a whole answer without an async step per event (docs/performance.md).
 * Both give the same events.
 */
export interface WholeAnswer extends AsyncIterable<ProviderEvent> {
  whole(): Promise<ProviderEvent[]>;
}

export function isWholeAnswer(answer: AsyncIterable<ProviderEvent>): answer is WholeAnswer {
  return typeof (answer as Partial<WholeAnswer>).whole === 'function';
}

/**
 * A provider's streamed answer that also hands over, at once, the events of what arrived
 * together (a vendor's packet usually completes several): the pipeline reads it batch by batch,
 * without an async step per event. Iterated, it gives the same events one by one.
 */
export interface BatchedAnswer extends AsyncIterable<ProviderEvent> {
  /** The events of what arrived since the last call (never empty), or null once the answer has ended. */
  nextBatch(): Promise<ProviderEvent[] | null>;
  /** Stops the call when its reader leaves before the end (the vendor request is aborted). */
  close(): void;
}

export function isBatchedAnswer(answer: AsyncIterable<ProviderEvent>): answer is BatchedAnswer {
  return typeof (answer as Partial<BatchedAnswer>).nextBatch === 'function';
}

/** What routing may use of the request beyond its body (domain/routing): the client's session, for cache affinity. */
export interface RouteHints {
  session?: string | null;
}

/** The provider port: one call, one stream of canonical events; throws ProviderError on failure. */
export interface TextProvider {
  /** What the vendor serves beyond function tools; the pipeline refuses the rest before anything is reserved. */
  readonly capabilities: VendorCapabilities;
  /** The hints (hints.ts) the vendor takes for this request; the pipeline drops and names the others before calling `generate`. */
  hints(request: CanonicalRequest): VendorHints;
  /** Refuses (400) what the vendor's request format cannot carry (beyond its capabilities), before anything is reserved. */
  validate?(request: CanonicalRequest): void;
  /** The answer's events; a non-streamed call may answer a WholeAnswer. */
  generate(request: CanonicalRequest, signal: Cancellation, route?: RouteHints): AsyncIterable<ProviderEvent>;
  /** Whether any upstream may take a request now (routing: false when every deployment is cooled); absent: always. */
  available?(): boolean;
  /** The prompt's input tokens as the vendor counts them (its token-counting endpoint), where it has one; free. */
  countTokens?(request: CanonicalRequest, signal: Cancellation): Promise<number>;
}

export interface TextProviderRegistry {
  /** The provider that serves this model (by its vendor). */
  forModel(model: TextModel): TextProvider;
}

/**
 * What a vendor can serve beyond plain function tools, declared once by each provider. The
 * pipeline refuses what the serving vendor lacks (400 naming it) before anything is reserved.
 * Reasoning effort is not here: whether a model has one is the catalog's `effort` (per model).
 */
export interface VendorCapabilities {
  /** Freeform custom tools (OpenAI). */
  customTools: boolean;
  /** Remote MCP servers the vendor calls itself (OpenAI Responses, Anthropic `mcp_servers`). */
  mcpServers: boolean;
  /** Reads the MCP calls of earlier turns back (OpenAI Responses, Anthropic). */
  mcpCalls: boolean;
  /** Asks the client before an MCP call, and reads approval items back (OpenAI Responses). */
  mcpApprovals: boolean;
  /** Stops calling MCP servers after `maxToolCalls` calls (OpenAI Responses); absent: false. */
  mcpCallLimit?: boolean;
}
