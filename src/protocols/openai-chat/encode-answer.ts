import { usageCostIfKnown } from '../cost';
import type { CanonicalToolCall, CanonicalUsage } from '../../domain/generation/canonical';
import { type AnswerMeta, type CollectedResult, randomWireId, reportedReasoningTokens } from '../collect';
import type { ChatCompletion, ChatCompletionUsage, ChatFinishReason, ChatFunctionToolCall } from './types';

/**
 * Client side of Chat Completions: a collected canonical answer → the whole `chat.completion`
 * object, and the finish reason and usage that its stream shares.
 */

/** A model's safety refusal is `content_filter`, with its short message as the content. */
export function chatFinishReason(finish: CollectedResult['finish']): ChatFinishReason {
  return finish.refusal ? 'content_filter' : finish.reason;
}

/** Cached input in prompt_tokens_details; reasoning (or its estimate, docs/text.md) in completion_tokens_details. */
export function chatUsage(usage: CanonicalUsage): ChatCompletionUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    completion_tokens_details: { reasoning_tokens: reportedReasoningTokens(usage) },
    ...usageCostIfKnown(usage.cost),
  };
}

/** Chat ingress declares function tools only, so every call is sent as a function call. */
function wireToolCall(call: CanonicalToolCall): ChatFunctionToolCall {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** The non-streaming answer. Reasoning is not shown (Chat Completions has no field for it); it is counted in usage. */
export function encodeChatResponse(result: CollectedResult, meta: AnswerMeta): ChatCompletion {
  const toolCalls = result.toolCalls.map(wireToolCall);
  return {
    id: meta.id ?? randomWireId('chatcmpl-'),
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: result.text === '' && toolCalls.length > 0 ? null : result.text,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: chatFinishReason(result.finish),
      },
    ],
    usage: chatUsage(result.finish.usage),
  };
}
