import type { OpenAIEffort } from '../openai-effort';

/**
 * Vendor side of Chat Completions: what Tollgate writes to a vendor, and the lenient shape it
 * accepts back (every field optional: vendors and compatible servers differ). The client side's
 * full types are in `types.ts`.
 */

export type ChatWireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatWireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatWireToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } };

export type ChatWireTool =
  | { type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean } }
  | { type: 'custom'; custom: { name: string; description?: string; format?: Record<string, unknown> } };

export type ChatWireToolChoice =
  'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } } | { type: 'custom'; custom: { name: string } };

export type ChatWireResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string } };

export interface ChatWireRequest {
  model: string;
  messages: ChatWireMessage[];
  stream: boolean;
  stream_options?: { include_usage: true };
  tools?: ChatWireTool[];
  tool_choice?: ChatWireToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ChatWireResponseFormat;
  max_completion_tokens?: number;
  max_tokens?: number;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  reasoning_effort?: OpenAIEffort;
  user?: string;
  seed?: number;
  verbosity?: 'low' | 'medium' | 'high';
}

export interface ChatWireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export interface ChatWireDeltaToolCall {
  index?: number;
  id?: string;
  type?: 'function' | 'custom';
  function?: { name?: string; arguments?: string };
  custom?: { name?: string; input?: string };
}

export interface ChatWireChunk {
  choices?: Array<{
    index?: number;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      /** Not OpenAI: DeepSeek and vLLM (`reasoning_content`), Ollama/OpenRouter (`reasoning`). */
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ChatWireDeltaToolCall[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatWireUsage | null;
  error?: { message?: string } | string;
}
