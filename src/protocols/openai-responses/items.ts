/**
 * Client-side wire types of the Responses API's items: the content parts and the input and
 * output items a conversation is made of (`types.ts` has the request, tools and the `response`
 * object, and re-exports these). Names and nullability follow the real API.
 */

export type ResponseItemStatus = 'in_progress' | 'completed' | 'incomplete';

// ---------------------------------------------------------------------------------------------
// Content parts
// ---------------------------------------------------------------------------------------------

export interface ResponseInputText {
  type: 'input_text';
  text: string;
}

export interface ResponseInputImage {
  type: 'input_image';
  detail: 'low' | 'high' | 'auto' | 'original';
  file_id?: string | null;
  image_url?: string | null;
}

export interface ResponseInputFile {
  type: 'input_file';
  file_data?: string;
  file_id?: string | null;
  file_url?: string;
  filename?: string;
}

export interface ResponseInputAudio {
  type: 'input_audio';
  input_audio: { data: string; format: 'mp3' | 'wav' };
}

export type ResponseInputContent = ResponseInputText | ResponseInputImage | ResponseInputFile | ResponseInputAudio;

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  /** Citations; always `[]` from Tollgate (no hosted search or files). */
  annotations: unknown[];
  logprobs?: unknown[];
}

export interface ResponseOutputRefusal {
  type: 'refusal';
  refusal: string;
}

export interface ResponseSummaryText {
  type: 'summary_text';
  text: string;
}

export interface ResponseReasoningText {
  type: 'reasoning_text';
  text: string;
}

// ---------------------------------------------------------------------------------------------
// Items (input and output share most shapes)
// ---------------------------------------------------------------------------------------------

/** A message in `input`; `type` may be omitted. */
export interface ResponseEasyInputMessage {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<ResponseInputContent | ResponseOutputText | ResponseOutputRefusal>;
  id?: string;
  status?: ResponseItemStatus;
  phase?: 'commentary' | 'final_answer' | null;
}

export interface ResponseOutputMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ResponseItemStatus;
  content: Array<ResponseOutputText | ResponseOutputRefusal>;
  phase?: 'commentary' | 'final_answer' | null;
}

export interface ResponseFunctionToolCall {
  type: 'function_call';
  /** Item id (`fc_…`). */
  id?: string;
  /** The id the `function_call_output` refers to. */
  call_id: string;
  name: string;
  arguments: string;
  status?: ResponseItemStatus;
  namespace?: string;
}

export interface ResponseFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string | Array<ResponseInputText | ResponseInputImage | ResponseInputFile>;
  id?: string | null;
  status?: ResponseItemStatus | null;
  /** The tool that produced the output, and its namespace. */
  name?: string | null;
  namespace?: string | null;
}

export interface ResponseCustomToolCall {
  type: 'custom_tool_call';
  /** Item id (`ctc_…`). */
  id?: string;
  call_id: string;
  name: string;
  input: string;
  namespace?: string;
}

export interface ResponseCustomToolCallOutput {
  type: 'custom_tool_call_output';
  call_id: string;
  output: string | Array<ResponseInputText | ResponseInputImage | ResponseInputFile>;
  id?: string;
}

export interface ResponseReasoningItem {
  type: 'reasoning';
  /** Item id (`rs_…`). */
  id: string;
  summary: ResponseSummaryText[];
  content?: ResponseReasoningText[];
  /** Opaque state to send back on the next stateless turn (with `include: ['reasoning.encrypted_content']`). */
  encrypted_content?: string | null;
  status?: ResponseItemStatus;
}

/** The tools an MCP server offered, listed by the vendor before it calls any (`mcpl_…`). */
export interface ResponseMcpListTools {
  type: 'mcp_list_tools';
  id: string;
  server_label: string;
  tools: Array<{ name: string; input_schema: unknown; description?: string | null; annotations?: unknown }>;
  error?: string | null;
}

/** A call the vendor made to an MCP server, with its result (`mcp_…`). */
export interface ResponseMcpCall {
  type: 'mcp_call';
  id: string;
  server_label: string;
  name: string;
  arguments: string;
  output?: string | null;
  error?: string | null;
  approval_request_id?: string | null;
  status?: 'in_progress' | 'completed' | 'incomplete' | 'calling' | 'failed';
}

/** The vendor asks the client before calling an MCP server (`mcpr_…`). */
export interface ResponseMcpApprovalRequest {
  type: 'mcp_approval_request';
  id: string;
  server_label: string;
  name: string;
  arguments: string;
}

/** The client's answer to an approval request, sent in the next turn's input. */
export interface ResponseMcpApprovalResponse {
  type: 'mcp_approval_response';
  approval_request_id: string;
  approve: boolean;
  id?: string | null;
  reason?: string | null;
}

export type ResponseInputItem =
  | ResponseEasyInputMessage
  | ResponseOutputMessage
  | ResponseFunctionToolCall
  | ResponseFunctionCallOutput
  | ResponseCustomToolCall
  | ResponseCustomToolCallOutput
  | ResponseReasoningItem
  | ResponseMcpListTools
  | ResponseMcpCall
  | ResponseMcpApprovalRequest
  | ResponseMcpApprovalResponse;

export type ResponseOutputItem =
  | ResponseOutputMessage
  | ResponseFunctionToolCall
  | ResponseCustomToolCall
  | ResponseReasoningItem
  | ResponseMcpListTools
  | ResponseMcpCall
  | ResponseMcpApprovalRequest;

/** The four MCP items of the Responses format. */
export type ResponseMcpItem = ResponseMcpListTools | ResponseMcpCall | ResponseMcpApprovalRequest | ResponseMcpApprovalResponse;
