import { usageCostIfKnown } from '../cost';
import type { CanonicalMcpItem, CanonicalReasoningBlock, CanonicalToolCall, CanonicalUsage } from '../../domain/generation/canonical';
import type { ApiError } from '../../domain/shared/errors';
import { type AnswerMeta, type CollectedResult, randomWireId, reportedReasoningTokens } from '../collect';
import type { ResponseObject, ResponseStatus, ResponseUsage } from './types';
import type {
  ResponseCustomToolCall,
  ResponseFunctionToolCall,
  ResponseItemStatus,
  ResponseMcpApprovalResponse,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseReasoningItem,
} from './items';
import { responsesMcpItem } from './mcp-items';
import type { ResponseMcpItem } from './items';
import { REDACTED_REASONING_PREFIX } from './decode-input';
import type { ResponsesEcho } from './decode-request';

/**
 * Client side of Responses: the `response` object in any state (whole answer, stream lifecycle,
 * failure) and its output items, built from canonical answers.
 */

export interface ResponsesMeta extends AnswerMeta {
  echo: ResponsesEcho;
  /** Unix seconds now, for `completed_at` (tests fix it). */
  now?: () => number;
}

const unixNow = (): number => Math.floor(Date.now() / 1000);

/** Cached input in input_tokens_details; reasoning (or its estimate, docs/text.md) in output_tokens_details. */
export function responsesUsage(usage: CanonicalUsage): ResponseUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: reportedReasoningTokens(usage) },
    total_tokens: usage.inputTokens + usage.outputTokens,
    ...usageCostIfKnown(usage.cost),
  };
}

interface TerminalState {
  status: Extract<ResponseStatus, 'completed' | 'incomplete'>;
  incompleteDetails: ResponseObject['incomplete_details'];
}

/**
 * A limit-truncated answer is `incomplete` (max_output_tokens); a vendor content filter that
 * cut the answer is `incomplete` (content_filter). A model's own safety refusal is a complete
 * answer whose text is the refusal message (its text streamed before the refusal was known).
 */
export function terminalState(finish: CollectedResult['finish']): TerminalState {
  if (finish.reason === 'length') return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
  if (finish.reason === 'content_filter' && !finish.refusal)
    return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
  return { status: 'completed', incompleteDetails: null };
}

export const itemStatus = (state: TerminalState): ResponseItemStatus => (state.status === 'incomplete' ? 'incomplete' : 'completed');

export function outputTextPart(text: string): ResponseOutputText {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function messageItem(id: string, text: string, status: ResponseItemStatus): ResponseOutputMessage {
  return { id, type: 'message', status, content: status === 'in_progress' && text === '' ? [] : [outputTextPart(text)], role: 'assistant' };
}

export function reasoningItem(id: string, block: CanonicalReasoningBlock, includeEncrypted: boolean): ResponseReasoningItem {
  const encrypted = block.redactedData !== undefined ? REDACTED_REASONING_PREFIX + block.redactedData : block.signature;
  return {
    id,
    type: 'reasoning',
    summary: block.text === '' ? [] : [{ type: 'summary_text', text: block.text }],
    ...(includeEncrypted && encrypted !== undefined ? { encrypted_content: encrypted } : {}),
  };
}

/** An MCP item as the vendor's output shows it (approval responses are only ever input: null). */
export function mcpOutputItem(item: CanonicalMcpItem): Exclude<ResponseMcpItem, ResponseMcpApprovalResponse> | null {
  const shown = responsesMcpItem(item);
  return shown.type === 'mcp_approval_response' ? null : shown;
}

/** A tool call item; a namespaced tool's call shows its own name and its namespace. */
export function callItem(
  id: string,
  call: CanonicalToolCall,
  status: ResponseItemStatus,
  echo: ResponsesEcho,
): ResponseFunctionToolCall | ResponseCustomToolCall {
  const namespaced = echo.namespaces.get(call.name);
  const name = namespaced ? { name: namespaced.name, namespace: namespaced.namespace } : { name: call.name };
  return call.kind === 'custom'
    ? { id, type: 'custom_tool_call', call_id: call.id, ...name, input: call.arguments }
    : { id, type: 'function_call', status, arguments: call.arguments, call_id: call.id, ...name };
}

/** The `response` object in any state; the request's settings come from the echo. */
export function responseObject(
  meta: ResponsesMeta,
  id: string,
  status: ResponseStatus,
  output: ResponseOutputItem[],
  extra: { usage?: ResponseUsage; incompleteDetails?: ResponseObject['incomplete_details']; error?: ApiError } = {},
): ResponseObject {
  const { settings } = meta.echo;
  return {
    id,
    object: 'response',
    created_at: meta.created,
    completed_at: status === 'completed' ? (meta.now ?? unixNow)() : null,
    status,
    background: false,
    error: extra.error ? { code: extra.error.code, message: extra.error.message } : null,
    incomplete_details: extra.incompleteDetails ?? null,
    model: meta.model,
    output,
    previous_response_id: null,
    service_tier: 'default',
    store: false,
    truncation: 'disabled',
    usage: extra.usage ?? null,
    access_programs: null,
    ...settings,
    max_output_tokens: meta.clampedOutputLimit ?? settings.max_output_tokens,
  };
}

/** The non-streaming answer: MCP items, reasoning items, then the message, then the tool calls. */
export function encodeResponsesResponse(result: CollectedResult, meta: ResponsesMeta): ResponseObject {
  const newId = meta.newId ?? randomWireId;
  const state = terminalState(result.finish);
  const output: ResponseOutputItem[] = [
    ...result.mcpItems.flatMap((item) => mcpOutputItem(item) ?? []),
    ...result.reasoning.map((block) => reasoningItem(newId('rs_'), block, meta.echo.includeEncryptedReasoning)),
    ...(result.text !== '' ? [messageItem(newId('msg_'), result.text, itemStatus(state))] : []),
    ...result.toolCalls.map((call) => callItem(newId(call.kind === 'custom' ? 'ctc_' : 'fc_'), call, 'completed', meta.echo)),
  ];
  return responseObject(meta, meta.id ?? randomWireId('resp_'), state.status, output, {
    usage: responsesUsage(result.finish.usage),
    incompleteDetails: state.incompleteDetails,
  });
}
