import type { ResponseObject } from './types';
import type { ResponseOutputItem, ResponseOutputRefusal, ResponseOutputText, ResponseReasoningText, ResponseSummaryText } from './items';

/**
 * The Responses stream's events, as Tollgate writes them to clients (SSE: `event: <type>` and
 * `data: <json>`; every event has a `sequence_number`).
 */

interface Sequenced {
  sequence_number: number;
}

export interface ResponseLifecycleEvent extends Sequenced {
  type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed';
  response: ResponseObject;
}

export interface ResponseOutputItemEvent extends Sequenced {
  type: 'response.output_item.added' | 'response.output_item.done';
  output_index: number;
  item: ResponseOutputItem;
}

export interface ResponseContentPartEvent extends Sequenced {
  type: 'response.content_part.added' | 'response.content_part.done';
  item_id: string;
  output_index: number;
  content_index: number;
  part: ResponseOutputText | ResponseOutputRefusal | ResponseReasoningText;
}

export interface ResponseTextDeltaEvent extends Sequenced {
  type: 'response.output_text.delta';
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
  logprobs: unknown[];
}

export interface ResponseTextDoneEvent extends Sequenced {
  type: 'response.output_text.done';
  item_id: string;
  output_index: number;
  content_index: number;
  text: string;
  logprobs: unknown[];
}

export interface ResponseRefusalDeltaEvent extends Sequenced {
  type: 'response.refusal.delta';
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
}

export interface ResponseRefusalDoneEvent extends Sequenced {
  type: 'response.refusal.done';
  item_id: string;
  output_index: number;
  content_index: number;
  refusal: string;
}

export interface ResponseFunctionCallArgumentsDeltaEvent extends Sequenced {
  type: 'response.function_call_arguments.delta';
  item_id: string;
  output_index: number;
  delta: string;
}

export interface ResponseFunctionCallArgumentsDoneEvent extends Sequenced {
  type: 'response.function_call_arguments.done';
  item_id: string;
  output_index: number;
  name: string;
  arguments: string;
}

export interface ResponseCustomToolCallInputDeltaEvent extends Sequenced {
  type: 'response.custom_tool_call_input.delta';
  item_id: string;
  output_index: number;
  delta: string;
}

export interface ResponseCustomToolCallInputDoneEvent extends Sequenced {
  type: 'response.custom_tool_call_input.done';
  item_id: string;
  output_index: number;
  input: string;
}

export interface ResponseReasoningSummaryPartEvent extends Sequenced {
  type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
  item_id: string;
  output_index: number;
  summary_index: number;
  part: ResponseSummaryText;
}

export interface ResponseReasoningSummaryTextDeltaEvent extends Sequenced {
  type: 'response.reasoning_summary_text.delta';
  item_id: string;
  output_index: number;
  summary_index: number;
  delta: string;
}

export interface ResponseReasoningSummaryTextDoneEvent extends Sequenced {
  type: 'response.reasoning_summary_text.done';
  item_id: string;
  output_index: number;
  summary_index: number;
  text: string;
}

export interface ResponseReasoningTextDeltaEvent extends Sequenced {
  type: 'response.reasoning_text.delta';
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
}

export interface ResponseReasoningTextDoneEvent extends Sequenced {
  type: 'response.reasoning_text.done';
  item_id: string;
  output_index: number;
  content_index: number;
  text: string;
}

/**
 * A failure mid-stream; followed by `response.failed`. OpenAI's event has the error's fields at
 * the top, Open Responses' under `error` (which the OpenAI SDK reads first): both are sent.
 */
export interface ResponseErrorEvent extends Sequenced {
  type: 'error';
  code: string | null;
  message: string;
  param: string | null;
  error: { type: 'server_error' | 'invalid_request_error'; code: string | null; message: string; param: string | null };
}

export type ResponseStreamEvent =
  | ResponseLifecycleEvent
  | ResponseOutputItemEvent
  | ResponseContentPartEvent
  | ResponseTextDeltaEvent
  | ResponseTextDoneEvent
  | ResponseRefusalDeltaEvent
  | ResponseRefusalDoneEvent
  | ResponseFunctionCallArgumentsDeltaEvent
  | ResponseFunctionCallArgumentsDoneEvent
  | ResponseCustomToolCallInputDeltaEvent
  | ResponseCustomToolCallInputDoneEvent
  | ResponseReasoningSummaryPartEvent
  | ResponseReasoningSummaryTextDeltaEvent
  | ResponseReasoningSummaryTextDoneEvent
  | ResponseReasoningTextDeltaEvent
  | ResponseReasoningTextDoneEvent
  | ResponseErrorEvent;
