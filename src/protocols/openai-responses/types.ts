import type { UsageCostFields } from '../cost';
import type { ResponseInputItem, ResponseOutputItem } from './items';

/**
 * Client-side wire types of the OpenAI Responses API (`POST /v1/responses`): request body,
 * tools and the `response` object (the items are in `items.ts`, re-exported here; the stream
 * events in `stream-events.ts`). Names and nullability follow the real API (and the `openai` SDK).
 * The request type's top-level fields are tied to the decoder's field list; the answer types
 * type what the encoders write.
 */

export type ResponsesReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

export type JsonSchemaObject = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Tools, tool choice, text format, reasoning
// ---------------------------------------------------------------------------------------------

export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  parameters: JsonSchemaObject | null;
  strict: boolean | null;
  description?: string | null;
  defer_loading?: boolean;
}

export type ResponseCustomToolFormat = { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };

export interface ResponseCustomTool {
  type: 'custom';
  name: string;
  description?: string;
  format?: ResponseCustomToolFormat;
  defer_loading?: boolean;
}

export interface ResponseMcpToolFilter {
  read_only?: boolean;
  tool_names?: string[];
}

export interface ResponseMcpTool {
  type: 'mcp';
  server_label: string;
  server_url?: string;
  server_description?: string;
  allowed_tools?: string[] | ResponseMcpToolFilter | null;
  headers?: Record<string, string> | null;
  authorization?: string;
  require_approval?: 'always' | 'never' | { always?: ResponseMcpToolFilter; never?: ResponseMcpToolFilter } | null;
  connector_id?: string;
  defer_loading?: boolean;
}

/** Tools the vendor runs itself (search, files, computers, code, images, shells): not offered. */
export type ResponseHostedToolType =
  | 'file_search'
  | 'computer'
  | 'computer_use'
  | 'computer_use_preview'
  | 'web_search'
  | 'web_search_2025_08_26'
  | 'web_search_preview'
  | 'web_search_preview_2025_03_11'
  | 'code_interpreter'
  | 'image_generation'
  | 'local_shell'
  | 'shell'
  | 'apply_patch'
  | 'tool_search';

/** Function and custom tools grouped under a name: calls name the tool and its `namespace`. */
export interface ResponseNamespaceTool {
  type: 'namespace';
  name: string;
  description: string;
  tools: Array<ResponseFunctionTool | ResponseCustomTool>;
}

export type ResponseTool = ResponseFunctionTool | ResponseCustomTool | ResponseMcpTool | ResponseNamespaceTool;

export type ResponseToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'custom'; name: string }
  | { type: 'mcp'; server_label: string; name?: string | null }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> }
  | { type: ResponseHostedToolType };

export type ResponseFormatTextConfig =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: JsonSchemaObject; description?: string; strict?: boolean | null };

export interface ResponseTextConfig {
  format?: ResponseFormatTextConfig;
  verbosity?: 'low' | 'medium' | 'high' | null;
}

export interface ResponseReasoningConfig {
  effort?: ResponsesReasoningEffort | null;
  summary?: 'auto' | 'concise' | 'detailed' | null;
  /** Deprecated alias of `summary`. */
  generate_summary?: 'auto' | 'concise' | 'detailed' | null;
}

export type ResponseIncludable =
  | 'file_search_call.results'
  | 'web_search_call.results'
  | 'web_search_call.action.sources'
  | 'message.input_image.image_url'
  | 'computer_call_output.output.image_url'
  | 'code_interpreter_call.outputs'
  | 'reasoning.encrypted_content'
  | 'message.output_text.logprobs';

// ---------------------------------------------------------------------------------------------
// Request body
// ---------------------------------------------------------------------------------------------

export interface ResponseCreateParams {
  model: string;
  input?: string | ResponseInputItem[];
  instructions?: string | null;
  tools?: ResponseTool[];
  tool_choice?: ResponseToolChoice;
  parallel_tool_calls?: boolean | null;
  text?: ResponseTextConfig;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  reasoning?: ResponseReasoningConfig | null;
  /** Open Responses' sampling penalties (OpenAI's Responses API has none). */
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  /** OpenAI's default is true; Tollgate is stateless and treats absent as false. */
  store?: boolean | null;
  include?: ResponseIncludable[] | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  user?: string;
  safety_identifier?: string | null;
  metadata?: Record<string, string> | null;
  /** String pairs about the calling client (Codex sends its turn metadata here). */
  client_metadata?: Record<string, string> | null;
  truncation?: 'auto' | 'disabled' | null;
  service_tier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority' | 'fast' | 'ultrafast' | null;
  prompt_cache_key?: string | null;
  prompt_cache_options?: { mode?: 'implicit' | 'explicit'; ttl?: '30m' };
  /** `in_memory` (older SDKs wrote `in-memory`) or `24h`. */
  prompt_cache_retention?: 'in_memory' | 'in-memory' | '24h' | null;
  /** Image context optimisation (moot: input is text only). */
  image?: { context_compression?: 'auto' | 'enabled' | 'disabled' };
  /** OpenAI's moderation of input and output, with results in the answer. */
  moderation?: { model: string; policy?: Record<string, unknown> | null } | null;
  /** OpenAI's access programs for restricted model tiers. */
  access_programs?: { cyber?: 'standard' | 'daybreak_blue' | 'daybreak_red' };
  // Stored state, refused by a stateless gateway:
  previous_response_id?: string | null;
  conversation?: string | { id: string } | null;
  prompt?: { id: string; variables?: Record<string, unknown> | null; version?: string | null } | null;
  background?: boolean | null;
  context_management?: Array<{ type: string; compact_threshold?: number | null }> | null;
}

// ---------------------------------------------------------------------------------------------
// The response object
// ---------------------------------------------------------------------------------------------

export interface ResponseUsage extends Partial<UsageCostFields> {
  /** Includes cached tokens. */
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  /** Includes reasoning tokens. */
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseError {
  code: string;
  message: string;
}

/**
 * The response object, complete per the Open Responses schema (which makes every field below
 * required) and OpenAI's: request settings are echoed, with the documented defaults where the
 * request set none.
 */
export interface ResponseObject {
  id: string;
  object: 'response';
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds; null until the response is completed. */
  completed_at: number | null;
  status: ResponseStatus;
  background: boolean;
  error: ResponseError | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: ResponsesReasoningEffort | null; summary: 'auto' | 'concise' | 'detailed' | null };
  service_tier: string;
  store: boolean;
  temperature: number;
  text: ResponseTextConfig;
  tool_choice: ResponseToolChoice;
  tools: ResponseTool[];
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  truncation: 'auto' | 'disabled';
  usage: ResponseUsage | null;
  user: string | null;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  metadata: Record<string, string>;
  /** OpenAI's: the standard program, implicitly (null). */
  access_programs: null;
}
