import { usageCostIfKnown } from '../cost';
import type { CanonicalMcpCall, CanonicalReasoningBlock, CanonicalUsage } from '../../domain/generation/canonical';
import type { ApiError } from '../../domain/shared/errors';
import { type AnswerMeta, type CollectedResult, parseToolArguments, randomWireId, reportedReasoningTokens } from '../collect';
import type {
  ContentBlock,
  ContextManagementResponse,
  McpToolResultBlock,
  McpToolUseBlock,
  MessagesErrorBody,
  MessagesErrorType,
  MessagesMessage,
  MessagesStopReason,
  MessagesUsage,
} from './types';

/**
 * Client side of Messages: a collected canonical answer → the whole `message` object, and the stop
 * reason, usage and error types that its stream shares.
 */

/** A safety refusal (or a vendor content filter) is `refusal`; a matched stop sequence is `stop_sequence`. */
export function messagesStopReason(finish: CollectedResult['finish']): MessagesStopReason {
  if (finish.refusal || finish.reason === 'content_filter') return 'refusal';
  switch (finish.reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'stop':
      return finish.stopSequence !== undefined ? 'stop_sequence' : 'end_turn';
  }
}

/**
 * Anthropic counts `input_tokens` without cache reads and cache writes; the canonical
 * `inputTokens` includes both, so they are taken out here, and the writes are shown by entry
 * lifetime (`cache_creation`). Thinking tokens (or the pipeline's estimate, docs/text.md) go in
 * `output_tokens_details.thinking_tokens`.
 */
export function messagesUsage(usage: CanonicalUsage): MessagesUsage {
  const fiveMinutes = usage.cacheWrite5mInputTokens ?? 0;
  const oneHour = usage.cacheWrite1hInputTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens - fiveMinutes - oneHour),
    cache_creation_input_tokens: fiveMinutes + oneHour,
    cache_read_input_tokens: usage.cachedInputTokens,
    cache_creation: { ephemeral_5m_input_tokens: fiveMinutes, ephemeral_1h_input_tokens: oneHour },
    output_tokens: usage.outputTokens,
    output_tokens_details: { thinking_tokens: reportedReasoningTokens(usage) },
    ...usageCostIfKnown(usage.cost),
  };
}

/** ApiError status → Anthropic's error `type`, so the Anthropic SDK raises its matching class. */
export function messagesErrorType(status: number): MessagesErrorType {
  switch (status) {
    case 400:
    case 409:
    case 415:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
    case 410:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * An error in Anthropic's shape (docs/api.md, Errors): `type` and `message` where the Anthropic
 * SDK reads them, and Tollgate's `code` and `details` beside them, so a reader of Tollgate's
 * envelope finds `error.code`, `error.message` and `error.details` too. The JSON answer and the
 * stream's `event: error` alike.
 */
export function messagesErrorBody(error: ApiError, requestId?: string): MessagesErrorBody {
  return {
    type: 'error',
    error: { type: messagesErrorType(error.status), message: error.message, code: error.code, details: error.details },
    ...(requestId !== undefined ? { request_id: requestId } : {}),
  };
}

/** A reasoning block as Anthropic shows it (a block from a vendor without signatures gets an empty one). */
function reasoningContent(block: CanonicalReasoningBlock): ContentBlock {
  return block.redactedData !== undefined
    ? { type: 'redacted_thinking', data: block.redactedData }
    : { type: 'thinking', thinking: block.text, signature: block.signature ?? '' };
}

/** An MCP call as Anthropic's answer shows it: the use, then the server's result. */
export function mcpCallContent(call: CanonicalMcpCall): [McpToolUseBlock, McpToolResultBlock] {
  const failed = call.error !== undefined;
  return [
    { type: 'mcp_tool_use', id: call.id, name: call.name, server_name: call.serverLabel, input: parseToolArguments(call.arguments) },
    {
      type: 'mcp_tool_result',
      tool_use_id: call.id,
      is_error: failed,
      content: [{ type: 'text', text: (failed ? call.error : call.output) ?? '' }],
    },
  ];
}

/**
 * The non-streaming answer: thinking blocks, MCP calls, then the text, then the tool uses. With
 * `omitThinking` (thinking `display: 'omitted'`), thinking blocks keep their signature and lose their text.
 */
export function encodeMessagesResponse(result: CollectedResult, meta: AnswerMeta, omitThinking = false): MessagesMessage {
  const content: ContentBlock[] = [
    ...result.reasoning.map((block) => reasoningContent(omitThinking ? { ...block, text: '' } : block)),
    ...result.mcpItems.flatMap((item) => (item.kind === 'call' ? mcpCallContent(item) : [])),
    ...(result.text !== '' ? [{ type: 'text' as const, text: result.text }] : []),
    ...result.toolCalls.map((call): ContentBlock => ({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: parseToolArguments(call.arguments),
    })),
  ];
  return {
    id: meta.id ?? randomWireId('msg_'),
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content,
    stop_reason: messagesStopReason(result.finish),
    stop_sequence: result.finish.stopSequence ?? null,
    usage: messagesUsage(result.finish.usage),
    ...contextManagement(result.finish),
  };
}

/** `context_management`, as the vendor reported it, when it did (docs/api.md). */
export const contextManagement = (finish: CollectedResult['finish']): { context_management?: ContextManagementResponse } =>
  finish.appliedContextEdits ? { context_management: { applied_edits: [...finish.appliedContextEdits] } } : {};
