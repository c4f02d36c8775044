import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
} from '../../domain/generation/canonical';
import type {
  ChatWireMessage,
  ChatWireRequest,
  ChatWireResponseFormat,
  ChatWireTool,
  ChatWireToolCall,
  ChatWireToolChoice,
} from './vendor-types';
import { toOpenAIEffort } from '../openai-effort';

/**
 * Vendor side of OpenAI Chat Completions: canonical request → request body (its answer is read
 * by `stream-decoder.ts`). Used for OpenAI itself and, with options, for every OpenAI-compatible
 * vendor (vLLM, Ollama, DeepSeek, xAI…).
 */

export interface ChatEgressOptions {
  /** OpenAI: `max_completion_tokens`; most compatible servers still read only `max_tokens`. */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Top-level body fields this vendor rejects; removed after mapping (Portkey-style exclusion). */
  excludeParams?: readonly string[];
}

export const OPENAI_CHAT_OPTIONS: ChatEgressOptions = { maxTokensField: 'max_completion_tokens' };

export function toChatRequest(request: CanonicalRequest, options: ChatEgressOptions = OPENAI_CHAT_OPTIONS): ChatWireRequest {
  const usesEffort = request.model.effort === 'openai-effort';
  const functionLike = request.tools.filter((tool) => tool.type !== 'mcp');
  // A client that reads the answer whole gets it from a non-streamed upstream call: one JSON
  // body instead of an event per few characters (less work here and at the vendor). Two
  // literals rather than a delete: deleting a key turns the object into a slow dictionary.
  const model = request.model.vendorModelId;
  const messages = toChatMessages(request.messages);
  const body: ChatWireRequest =
    request.stream === false
      ? { model, messages, stream: false }
      : { model, messages, stream: true, stream_options: { include_usage: true } };
  if (functionLike.length > 0) {
    body.tools = functionLike.map(toChatTool).filter((tool): tool is ChatWireTool => tool !== null);
    if (request.toolChoice !== undefined) body.tool_choice = toChatToolChoice(request.toolChoice, request.tools);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const format = toChatResponseFormat(request.responseFormat);
  if (format) body.response_format = format;
  body[options.maxTokensField] = request.maxOutputTokens;
  if (request.stop && request.stop.length > 0) body.stop = request.stop;
  // Hints arrive only when the vendor takes them (the provider's hints(), settled by the pipeline).
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (usesEffort) {
    const effort = toOpenAIEffort(request.reasoning);
    if (effort) body.reasoning_effort = effort;
  }
  if (request.user !== undefined) body.user = request.user;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.verbosity !== undefined) body.verbosity = request.verbosity;
  for (const param of options.excludeParams ?? []) delete (body as unknown as Record<string, unknown>)[param];
  return body;
}

/**
 * Chat has no field for reasoning blocks of earlier turns: they are dropped. So are MCP tool
 * listings (the only MCP items a Chat upstream is given: see src/domain/generation/capabilities.ts).
 */
export function toChatMessages(messages: readonly CanonicalMessage[]): ChatWireMessage[] {
  const wire: ChatWireMessage[] = [];
  for (const message of messages) if (message.role !== 'mcp') wire.push(toChatMessage(message));
  return wire;
}

function toChatMessage(message: Exclude<CanonicalMessage, { role: 'mcp' }>): ChatWireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call): ChatWireToolCall =>
          call.kind === 'custom'
            ? { id: call.id, type: 'custom', custom: { name: call.name, input: call.arguments } }
            : { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
        ),
      };
    case 'tool':
      // Chat has no error flag on tool results; the content carries the error text.
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toChatTool(tool: CanonicalTool): ChatWireTool | null {
  switch (tool.type) {
    case 'function':
      return {
        type: 'function',
        function: {
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          parameters: tool.parameters,
          ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
        },
      };
    case 'custom':
      return {
        type: 'custom',
        custom: {
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          ...(tool.format ? { format: tool.format } : {}),
        },
      };
    case 'mcp':
      return null;
  }
}

function toChatToolChoice(choice: CanonicalToolChoice, tools: readonly CanonicalTool[]): ChatWireToolChoice {
  if (typeof choice === 'string') return choice;
  const named = tools.find((tool) => tool.type !== 'mcp' && tool.name === choice.name);
  return named?.type === 'custom'
    ? { type: 'custom', custom: { name: choice.name } }
    : { type: 'function', function: { name: choice.name } };
}

export function toChatResponseFormat(format: CanonicalResponseFormat | undefined): ChatWireResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
      ...(format.description !== undefined ? { description: format.description } : {}),
    },
  };
}
