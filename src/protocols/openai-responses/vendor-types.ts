import type { ResponseMcpItem } from './items';
import { type OpenAIEffort } from '../openai-effort';

/**
 * Vendor side of the OpenAI Responses API: what Tollgate writes, and the lenient shape it accepts
 * back (every field optional). The client side's full types are in `types.ts`.
 */

export type ResponsesWireInputItem =
  | { type: 'message'; role: 'system' | 'user' | 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'custom_tool_call'; call_id: string; name: string; input: string }
  | { type: 'function_call_output'; call_id: string; output: string }
  | { type: 'custom_tool_call_output'; call_id: string; output: string }
  /** MCP items go back as OpenAI's own client echoes them (the shape Tollgate shows its clients). */
  | ResponseMcpItem;

export type WireToolFilter = { tool_names?: string[]; read_only?: boolean };

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
  text?: { format?: ResponsesWireTextFormat; verbosity?: 'low' | 'medium' | 'high' };
  max_tool_calls?: number;
  max_output_tokens: number;
  temperature?: number;
  top_p?: number;
  reasoning?: { effort: OpenAIEffort };
  user?: string;
}

export interface ResponsesWireUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number | null } | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export interface ResponsesWireItem {
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

export interface ResponsesWireResponse {
  status?: string;
  output?: ResponsesWireItem[];
  usage?: ResponsesWireUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string; message?: string } | null;
}

export interface ResponsesWireEvent {
  type?: string;
  output_index?: number;
  summary_index?: number;
  item?: ResponsesWireItem;
  delta?: string;
  response?: ResponsesWireResponse;
  code?: string | null;
  message?: string;
}
