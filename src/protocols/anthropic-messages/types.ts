import type { UsageCostFields } from '../cost';
/**
 * Client-side wire types of the Anthropic Messages API (`POST /v1/messages`): request body,
 * content blocks, the `message` answer, its SSE stream events and the error body. Names and
 * nullability follow the real API (and `@anthropic-ai/sdk`). The request type's top-level
 * fields are tied to the decoder's field list; the answer and event types type what the
 * encoders write. What Tollgate sends Anthropic is in `vendor-types.ts`.
 */

export type MessagesRole = 'user' | 'assistant';

export type MessagesStopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export type MessagesEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export type JsonSchemaObject = Record<string, unknown>;

export interface CacheControlEphemeral {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

// ---------------------------------------------------------------------------------------------
// Request content blocks
// ---------------------------------------------------------------------------------------------

export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControlEphemeral | null;
  citations?: unknown[] | null;
}

export interface ImageBlockParam {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } | { type: 'file'; file_id: string };
  cache_control?: CacheControlEphemeral | null;
}

export interface DocumentBlockParam {
  type: 'document';
  source: Record<string, unknown>;
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControlEphemeral | null;
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: CacheControlEphemeral | null;
}

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam | DocumentBlockParam>;
  is_error?: boolean;
  cache_control?: CacheControlEphemeral | null;
}

export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | DocumentBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam;

export interface MessageParam {
  role: MessagesRole;
  content: string | ContentBlockParam[];
}

// ---------------------------------------------------------------------------------------------
// Request: tools, tool choice, thinking, output config, MCP servers
// ---------------------------------------------------------------------------------------------

/** A client tool: the model calls it, the client runs it and answers with `tool_result`. */
export interface MessagesTool {
  type?: 'custom' | null;
  name: string;
  description?: string;
  input_schema: JsonSchemaObject & { type: 'object' };
  strict?: boolean;
  cache_control?: CacheControlEphemeral | null;
  /** Stream the tool's input without buffering it (fine-grained tool streaming). */
  eager_input_streaming?: boolean | null;
  /** Left out of the prompt until a tool search finds it. */
  defer_loading?: boolean | null;
  /** Example inputs shown to the model. */
  input_examples?: Array<Record<string, unknown>> | null;
  /** Who may call the tool (the model directly, or code execution). */
  allowed_callers?: string[] | null;
}

export type MessagesToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type ThinkingConfigParam =
  | { type: 'disabled' }
  | { type: 'enabled'; budget_tokens: number; display?: 'summarized' | 'omitted' | null }
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' | null };

export interface JsonOutputFormat {
  type: 'json_schema';
  schema: JsonSchemaObject;
}

export interface OutputConfig {
  effort?: MessagesEffort | null;
  format?: JsonOutputFormat | null;
}

/** Beta (`mcp-client-2025-04-04`): a remote MCP server Anthropic calls itself. */
export interface McpServerUrlDefinition {
  type: 'url';
  url: string;
  name: string;
  authorization_token?: string | null;
  tool_configuration?: { allowed_tools?: string[] | null; enabled?: boolean | null } | null;
}

// ---------------------------------------------------------------------------------------------
// Request body
// ---------------------------------------------------------------------------------------------

/**
 * The request body: every top-level field of Anthropic's current Messages schema (GA and beta,
 * plus the sampling fields older models still take and clients still send). What Tollgate does
 * with each is its field policy (`field-policy.ts`), keyed by exactly these names.
 */
export interface MessageCreateParams {
  model: string;
  /** Required. Includes thinking tokens. */
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: MessagesTool[];
  tool_choice?: MessagesToolChoice;
  thinking?: ThinkingConfigParam;
  output_config?: OutputConfig;
  /** Beta structured-outputs spelling of `output_config.format` (deprecated by Anthropic). */
  output_format?: JsonOutputFormat | null;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream?: boolean;
  metadata?: { user_id?: string | null };
  mcp_servers?: McpServerUrlDefinition[];
  service_tier?: 'auto' | 'standard_only';
  cache_control?: CacheControlEphemeral | null;
  /** Beta context editing: `{edits: [...]}` (clear_tool_uses_*, clear_thinking_*, compact_*). */
  context_management?: { edits?: Array<Record<string, unknown>> } | null;
  /** Server-side code-execution container (refused). */
  container?: unknown;
  /** Data residency (refused: priced differently). */
  inference_geo?: string | null;
  /** Prompt-cache diagnostics request. */
  diagnostics?: { previous_message_id?: string | null } | null;
  speed?: 'standard' | 'fast' | null;
  /** Beta: who is billed (`{type: 'billing_policy', bill_to: 'self' | 'user_profile'}`). */
  billing_policy?: { type?: string; bill_to?: string } | null;
  /** Beta: a compaction request (the answer is a summary block). */
  compaction?: unknown;
  /** Beta: server-side fallback to other models after a refusal. */
  fallbacks?: unknown;
  fallback_credit_token?: unknown;
  /** Beta: server-held conversation state. */
  thread?: unknown;
}

// ---------------------------------------------------------------------------------------------
// Answer: message
// ---------------------------------------------------------------------------------------------

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** A call Anthropic made to an `mcp_servers` server (beta MCP connector). */
export interface McpToolUseBlock {
  type: 'mcp_tool_use';
  id: string;
  name: string;
  server_name: string;
  input: unknown;
}

/** What that server answered. */
export interface McpToolResultBlock {
  type: 'mcp_tool_result';
  tool_use_id: string;
  is_error: boolean;
  content: string | TextBlock[];
}

export type ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | McpToolUseBlock | McpToolResultBlock;

export interface MessagesUsage extends Partial<UsageCostFields> {
  /** Input tokens EXCLUDING cache reads and cache writes (Anthropic's convention). */
  input_tokens: number;
  cache_creation_input_tokens: number | null;
  /** The cache writes by entry lifetime. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null;
  cache_read_input_tokens: number | null;
  /** Includes thinking tokens. */
  output_tokens: number;
  output_tokens_details?: { thinking_tokens: number } | null;
}

/** Beta: the context edits Anthropic applied (`clear_tool_uses_*`, `clear_thinking_*`), as it reported them. */
export interface ContextManagementResponse {
  applied_edits: Array<Record<string, unknown>>;
}

export interface MessagesMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
  /** Present when the vendor reported the context edits it applied (an Anthropic model with context_management). */
  context_management?: ContextManagementResponse;
}

// ---------------------------------------------------------------------------------------------
// Stream events (SSE: `event: <type>` + `data: <json>`; the SDK ignores frames without `event:`)
// ---------------------------------------------------------------------------------------------

export interface MessageStartEvent {
  type: 'message_start';
  message: MessagesMessage;
}

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string };

export interface ContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  content_block: ContentBlock;
}

export interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: ContentBlockDelta;
}

export interface ContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

/** Usage counters here are cumulative totals for the whole message. */
export interface MessageDeltaUsage {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** Sent here too: the stream's `message_start` goes out before the vendor reports usage. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null;
  cache_read_input_tokens?: number | null;
  output_tokens: number;
  output_tokens_details?: { thinking_tokens: number } | null;
}

export interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason: MessagesStopReason | null; stop_sequence: string | null };
  usage: MessageDeltaUsage;
  context_management?: ContextManagementResponse;
}

export interface MessageStopEvent {
  type: 'message_stop';
}

export interface PingEvent {
  type: 'ping';
}

export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/** The error body, both as a JSON answer and as the data of `event: error`. */
export interface MessagesErrorBody {
  type: 'error';
  /** Anthropic's `type` and `message`, with Tollgate's own `code` and `details` beside them (docs/api.md, Errors). */
  error: { type: MessagesErrorType; message: string; code: string; details: Record<string, unknown> };
  request_id?: string;
}

export type MessagesStreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | PingEvent;
