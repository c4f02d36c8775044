/**
 * Vendor side of the Anthropic Messages API: what Tollgate writes, and the lenient shape it
 * accepts back (every field optional). The client side's full types are in `types.ts`.
 */

/** A prompt-cache breakpoint on the block, tool or system block that carries it. */
export interface AnthropicWireCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface AnthropicWireTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicWireCacheControl;
}

export type AnthropicWireBlock =
  | AnthropicWireTextBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown; cache_control?: AnthropicWireCacheControl }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean; cache_control?: AnthropicWireCacheControl }
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
  cache_control?: AnthropicWireCacheControl;
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
  /** Text blocks when a system part carries a cache breakpoint; one string otherwise. */
  system?: string | AnthropicWireTextBlock[];
  stream: boolean;
  tools?: AnthropicWireTool[];
  tool_choice?: AnthropicWireToolChoice;
  mcp_servers?: AnthropicWireMcpServer[];
  thinking?: { type: 'enabled'; budget_tokens: number };
  output_config?: { format?: { type: 'json_schema'; schema: Record<string, unknown> }; [setting: string]: unknown };
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id: string };
  /** Passed as the client sent them (field policy `passed-to-vendor`). */
  context_management?: unknown;
  service_tier?: unknown;
  cache_control?: unknown;
}

/** The body plus the `anthropic-beta` features it needs and the client's `anthropic-version`, if it sent one. */
export interface AnthropicRequestPlan {
  body: AnthropicWireRequest;
  betas: string[];
  version?: string;
}

export interface AnthropicWireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** The cache writes by entry lifetime (their sum is cache_creation_input_tokens). */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
}

/** A content block of an answer: whole in a non-streamed message, started by `content_block_start` in a stream. */
export type AnthropicWireAnswerBlock = {
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

/** `context_management` of an answer (beta): the edits Anthropic applied to the prompt. */
export interface AnthropicWireContextManagement {
  applied_edits?: unknown;
}

export interface AnthropicWireStreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: AnthropicWireUsage };
  /** On `message_delta`. */
  context_management?: AnthropicWireContextManagement | null;
  content_block?: AnthropicWireAnswerBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
    stop_sequence?: string | null;
  };
  usage?: AnthropicWireUsage;
  error?: { type?: string; message?: string };
}
