import type { TextModel } from '../catalog';
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

export interface CanonicalToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments (function tools) or the raw input (custom tools). */
  arguments: string;
  kind: 'function' | 'custom';
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
  | { kind: 'call'; id: string; serverLabel: string; name: string; arguments: string; output?: string; error?: string; approvalRequestId?: string }
  /** The vendor asks the client before calling the server (`require_approval`). */
  | { kind: 'approval_request'; id: string; serverLabel: string; name: string; arguments: string }
  /** The client's answer to an approval request (only ever sent, never produced). */
  | { kind: 'approval_response'; id?: string; approvalRequestId: string; approve: boolean; reason?: string };

export type CanonicalMcpCall = Extract<CanonicalMcpItem, { kind: 'call' }>;

export type CanonicalMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: CanonicalToolCall[]; reasoning: CanonicalReasoningBlock[] }
  | { role: 'tool'; toolCallId: string; content: string; isError: boolean }
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
  | { type: 'function'; name: string; description?: string; parameters: JsonSchema; strict?: boolean }
  | { type: 'custom'; name: string; description?: string; format?: Record<string, unknown> }
  /** Remote MCP server the vendor itself calls (OpenAI Responses `mcp`, Anthropic `mcp_servers`). */
  | { type: 'mcp'; serverLabel: string; serverUrl: string; allowedTools?: string[]; headers?: Record<string, string>; authorization?: string; requireApproval?: McpApprovalRule };

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
  parallelToolCalls?: boolean;
  responseFormat?: CanonicalResponseFormat;
  /** Output limit after defaulting and clamping to the model's maximum (reasoning included). */
  maxOutputTokens: number;
  stop?: string[];
  temperature?: number;
  topP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  reasoning: CanonicalReasoning;
  /** End-user id for vendor abuse monitoring (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /**
   * Hints only some vendors have, passed to those and dropped for the others (docs/api.md,
   * "Field policy", the hint rule): answer length (OpenAI `verbosity`), sampling seed.
   */
  verbosity?: 'low' | 'medium' | 'high';
  seed?: number;
  /** Most calls of vendor-run (MCP) tools in one answer (Responses `max_tool_calls`); set only when MCP tools are declared. */
  maxToolCalls?: number;
  /**
   * false: the client reads the answer whole, so a provider may call its vendor without
   * streaming (every vendor adapter does). Absent: stream.
   */
  stream?: boolean;
}

/** Usage as the vendor reported it; `outputTokens` includes reasoning tokens. */
export interface CanonicalUsage {
  inputTokens: number;
  /** Part of `inputTokens` billed at the cached-input price. */
  cachedInputTokens: number;
  /** Anthropic cache writes, part of `inputTokens` (billed at the input price here). */
  cacheCreationInputTokens?: number;
  outputTokens: number;
  /** null when the vendor does not report a reasoning count (the pipeline then estimates it). */
  reasoningTokens: number | null;
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
   */
  | { type: 'finish'; reason: FinishReason; refusal: boolean; usage: CanonicalUsage; stopSequence?: string };

/** The provider port: one call, one stream of canonical events; throws ProviderError on failure. */
export interface TextProvider {
  /** What the vendor serves beyond function tools; the pipeline refuses the rest before anything is reserved. */
  readonly capabilities: VendorCapabilities;
  /** Refuses (400) what the vendor's request format cannot carry (beyond its capabilities), before anything is reserved. */
  validate?(request: CanonicalRequest): void;
  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<CanonicalEvent>;
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
