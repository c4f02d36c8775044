import type { UsageCostFields } from '../cost';
/**
 * Client-side wire types of the OpenAI Chat Completions API (`POST /v1/chat/completions`): the
 * request body, the `chat.completion` answer and the `chat.completion.chunk` stream. Field
 * names, optionality and nullability follow the real API (and the `openai` v6 SDK). The request
 * type's top-level fields are tied to the decoder's field list (parts Tollgate refuses are
 * declared too, as the decoder reads them to refuse them); the answer types type what the
 * encoders write. What Tollgate sends vendors is in `vendor-types.ts`.
 */

export type ChatReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export type ChatServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority' | 'fast';

// ---------------------------------------------------------------------------------------------
// Request: content parts
// ---------------------------------------------------------------------------------------------

export interface ChatContentPartText {
  type: 'text';
  text: string;
}

export interface ChatContentPartImage {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface ChatContentPartInputAudio {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' };
}

export interface ChatContentPartFile {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
}

export interface ChatContentPartRefusal {
  type: 'refusal';
  refusal: string;
}

export type ChatContentPart = ChatContentPartText | ChatContentPartImage | ChatContentPartInputAudio | ChatContentPartFile;

// ---------------------------------------------------------------------------------------------
// Request: messages
// ---------------------------------------------------------------------------------------------

export interface ChatDeveloperMessageParam {
  role: 'developer';
  content: string | ChatContentPartText[];
  name?: string;
}

export interface ChatSystemMessageParam {
  role: 'system';
  content: string | ChatContentPartText[];
  name?: string;
}

export interface ChatUserMessageParam {
  role: 'user';
  content: string | ChatContentPart[];
  name?: string;
}

export interface ChatFunctionToolCall {
  id: string;
  type: 'function';
  function: {
    name: string;
    /** JSON text, as the model produced it (not necessarily valid JSON). */
    arguments: string;
  };
}

export interface ChatCustomToolCall {
  id: string;
  type: 'custom';
  custom: { name: string; input: string };
}

export type ChatMessageToolCall = ChatFunctionToolCall | ChatCustomToolCall;

export interface ChatAssistantMessageParam {
  role: 'assistant';
  content?: string | Array<ChatContentPartText | ChatContentPartRefusal> | null;
  refusal?: string | null;
  name?: string;
  tool_calls?: ChatMessageToolCall[];
  /** Previous audio answer by id. */
  audio?: { id: string } | null;
  /** Deprecated: legacy `functions` API. */
  function_call?: { name: string; arguments: string } | null;
}

export interface ChatToolMessageParam {
  role: 'tool';
  content: string | ChatContentPartText[];
  tool_call_id: string;
}

/** Deprecated: legacy `functions` API. */
export interface ChatFunctionMessageParam {
  role: 'function';
  content: string | null;
  name: string;
}

export type ChatMessageParam =
  | ChatDeveloperMessageParam
  | ChatSystemMessageParam
  | ChatUserMessageParam
  | ChatAssistantMessageParam
  | ChatToolMessageParam
  | ChatFunctionMessageParam;

// ---------------------------------------------------------------------------------------------
// Request: tools, tool choice, output format
// ---------------------------------------------------------------------------------------------

export type ChatJsonSchema = Record<string, unknown>;

export interface ChatFunctionDefinition {
  /** `^[a-zA-Z0-9_-]{1,64}$` */
  name: string;
  description?: string;
  parameters?: ChatJsonSchema;
  strict?: boolean | null;
}

export interface ChatFunctionTool {
  type: 'function';
  function: ChatFunctionDefinition;
}

export interface ChatCustomTool {
  type: 'custom';
  custom: {
    name: string;
    description?: string;
    format?: { type: 'text' } | { type: 'grammar'; grammar: { definition: string; syntax: 'lark' | 'regex' } };
  };
}

export type ChatTool = ChatFunctionTool | ChatCustomTool;

export interface ChatNamedToolChoice {
  type: 'function';
  function: { name: string };
}

export interface ChatNamedToolChoiceCustom {
  type: 'custom';
  custom: { name: string };
}

export interface ChatAllowedToolChoice {
  type: 'allowed_tools';
  allowed_tools: { mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | ChatNamedToolChoice | ChatNamedToolChoiceCustom | ChatAllowedToolChoice;

export interface ChatResponseFormatText {
  type: 'text';
}

export interface ChatResponseFormatJsonObject {
  type: 'json_object';
}

export interface ChatResponseFormatJsonSchema {
  type: 'json_schema';
  json_schema: {
    /** `^[a-zA-Z0-9_-]{1,64}$` */
    name: string;
    description?: string;
    schema?: ChatJsonSchema;
    strict?: boolean | null;
  };
}

export type ChatResponseFormat = ChatResponseFormatText | ChatResponseFormatJsonObject | ChatResponseFormatJsonSchema;

export interface ChatStreamOptions {
  /** Adds a last chunk with `choices: []` and the usage; every other chunk carries `usage: null`. */
  include_usage?: boolean;
  include_obfuscation?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Request body
// ---------------------------------------------------------------------------------------------

export interface ChatCompletionCreateParams {
  model: string;
  messages: ChatMessageParam[];
  audio?: { format: 'wav' | 'aac' | 'mp3' | 'flac' | 'opus' | 'pcm16'; voice: string | { id: string } } | null;
  frequency_penalty?: number | null;
  /** Deprecated: legacy `functions` API. */
  function_call?: 'none' | 'auto' | { name: string };
  /** Deprecated: legacy `functions` API. */
  functions?: Array<{ name: string; description?: string; parameters?: ChatJsonSchema }>;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  /** Output limit including reasoning tokens; supersedes `max_tokens`. */
  max_completion_tokens?: number | null;
  /** Deprecated in favour of `max_completion_tokens`; not accepted by reasoning models. */
  max_tokens?: number | null;
  metadata?: Record<string, string> | null;
  modalities?: Array<'text' | 'audio'> | null;
  /** OpenAI's moderation of input and output, with results in the answer. */
  moderation?: { model: string; policy?: Record<string, unknown> | null } | null;
  n?: number | null;
  parallel_tool_calls?: boolean;
  prediction?: { type: 'content'; content: string | ChatContentPartText[] } | null;
  presence_penalty?: number | null;
  prompt_cache_key?: string | null;
  prompt_cache_options?: { mode?: 'implicit' | 'explicit'; ttl?: '30m' };
  /** `in_memory` (older SDKs wrote `in-memory`) or `24h`. */
  prompt_cache_retention?: 'in_memory' | 'in-memory' | '24h' | null;
  reasoning_effort?: ChatReasoningEffort | null;
  response_format?: ChatResponseFormat;
  safety_identifier?: string | null;
  seed?: number | null;
  service_tier?: ChatServiceTier | null;
  stop?: string | string[] | null;
  store?: boolean | null;
  stream?: boolean | null;
  stream_options?: ChatStreamOptions | null;
  temperature?: number | null;
  tool_choice?: ChatToolChoice;
  tools?: ChatTool[];
  top_logprobs?: number | null;
  top_p?: number | null;
  user?: string;
  verbosity?: 'low' | 'medium' | 'high' | null;
  web_search_options?: {
    search_context_size?: 'low' | 'medium' | 'high';
    user_location?: { type: 'approximate'; approximate: { city?: string; country?: string; region?: string; timezone?: string } } | null;
  };
}

// ---------------------------------------------------------------------------------------------
// Answer: chat.completion
// ---------------------------------------------------------------------------------------------

export interface ChatTokenLogprob {
  token: string;
  bytes: number[] | null;
  logprob: number;
  top_logprobs: Array<{ token: string; bytes: number[] | null; logprob: number }>;
}

export interface ChatChoiceLogprobs {
  content: ChatTokenLogprob[] | null;
  refusal: ChatTokenLogprob[] | null;
}

export interface ChatUrlCitation {
  type: 'url_citation';
  url_citation: { start_index: number; end_index: number; title: string; url: string };
}

export interface ChatCompletionMessage {
  role: 'assistant';
  /** null when the answer is only tool calls (or only a refusal). */
  content: string | null;
  refusal: string | null;
  annotations?: ChatUrlCitation[];
  audio?: { id: string; data: string; expires_at: number; transcript: string } | null;
  /** Deprecated: legacy `functions` API. */
  function_call?: { name: string; arguments: string } | null;
  tool_calls?: ChatMessageToolCall[];
}

export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  logprobs: ChatChoiceLogprobs | null;
  finish_reason: ChatFinishReason;
}

export interface ChatCompletionUsage extends Partial<UsageCostFields> {
  /** Includes cached prompt tokens. */
  prompt_tokens: number;
  /** Includes reasoning tokens. */
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    audio_tokens?: number;
  };
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  /** Unix seconds. */
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage?: ChatCompletionUsage;
  service_tier?: ChatServiceTier | null;
  system_fingerprint?: string;
}

// ---------------------------------------------------------------------------------------------
// Stream: chat.completion.chunk (each sent as `data: <json>`, then `data: [DONE]`)
// ---------------------------------------------------------------------------------------------

export interface ChatChunkToolCallDelta {
  /** Position of the tool call in the message's `tool_calls`; deltas of one call share it. */
  index: number;
  /** Only on the first delta of a call. */
  id?: string;
  /** Only on the first delta of a call. */
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkDelta {
  role?: 'developer' | 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatChunkToolCallDelta[];
  /** Deprecated: legacy `functions` API. */
  function_call?: { name?: string; arguments?: string };
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatChunkDelta;
  logprobs?: ChatChoiceLogprobs | null;
  /** null until the choice's last chunk. */
  finish_reason: ChatFinishReason | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** Empty in the usage chunk sent last when `stream_options.include_usage` is set. */
  choices: ChatChunkChoice[];
  /** Present (null) on every chunk when `include_usage` is set; filled on the last one. */
  usage?: ChatCompletionUsage | null;
  service_tier?: ChatServiceTier | null;
  system_fingerprint?: string;
}
