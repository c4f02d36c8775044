import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  McpApprovalRule,
  McpToolFilter,
} from '../../domain/generation/canonical';
import { responsesMcpItem } from './mcp-items';
import { toOpenAIEffort } from '../openai-effort';
import type {
  ResponsesWireInputItem,
  ResponsesWireRequest,
  ResponsesWireTool,
  ResponsesWireToolChoice,
  WireToolFilter,
} from './vendor-types';

/**
 * Vendor side of the OpenAI Responses API (its answer is read by `stream-decoder.ts`), stateless (`store: false`, the whole
 * conversation in `input` every time). Used for OpenAI reasoning models and whenever MCP
 * tools are present (only Responses lets OpenAI call an MCP server itself).
 *
 * Hints arrive only when OpenAI takes them here (the provider's hints(), settled by the pipeline:
 * no penalties or seed, which Responses lacks; no sampling for reasoning models). Not sent: stop
 * sequences (Responses has no such field). Reasoning items of
 * earlier turns are not sent back either (they are optional input; their encrypted content
 * would need `include` and an item id that the canonical form does not carry).
 */

export function toResponsesRequest(request: CanonicalRequest): ResponsesWireRequest {
  const usesEffort = request.model.effort === 'openai-effort';
  const body: ResponsesWireRequest = {
    model: request.model.vendorModelId,
    input: toResponsesInput(request.messages),
    // A client that reads the answer whole gets a non-streamed call: one JSON body (pushWhole).
    stream: request.stream !== false,
    store: false,
    max_output_tokens: request.maxOutputTokens,
  };
  if (request.verbosity !== undefined) body.text = { verbosity: request.verbosity };
  if (request.maxToolCalls !== undefined) body.max_tool_calls = request.maxToolCalls;
  if (request.tools.length > 0) {
    body.tools = request.tools.map(toResponsesTool);
    if (request.toolChoice !== undefined) body.tool_choice = toResponsesToolChoice(request.toolChoice, request.tools);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const format = request.responseFormat;
  if (format && format.type !== 'text') {
    body.text = {
      ...body.text,
      format:
        format.type === 'json_object'
          ? { type: 'json_object' }
          : {
              type: 'json_schema',
              name: format.name,
              schema: format.schema,
              ...(format.strict !== undefined ? { strict: format.strict } : {}),
              ...(format.description !== undefined ? { description: format.description } : {}),
            },
    };
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (usesEffort) {
    const effort = toOpenAIEffort(request.reasoning);
    if (effort) body.reasoning = { effort };
  }
  if (request.user !== undefined) body.user = request.user;
  return body;
}

export function toResponsesInput(messages: readonly CanonicalMessage[]): ResponsesWireInputItem[] {
  // Tool results name only the call id; the call's kind decides the output item type.
  const customCallIds = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls) if (call.kind === 'custom') customCallIds.add(call.id);
  }
  const items: ResponsesWireInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        items.push({ type: 'message', role: message.role, content: message.content });
        break;
      case 'assistant':
        if (message.content !== '') items.push({ type: 'message', role: 'assistant', content: message.content });
        for (const call of message.toolCalls) {
          items.push(
            call.kind === 'custom'
              ? { type: 'custom_tool_call', call_id: call.id, name: call.name, input: call.arguments }
              : { type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments },
          );
        }
        break;
      case 'tool':
        items.push({
          type: customCallIds.has(message.toolCallId) ? 'custom_tool_call_output' : 'function_call_output',
          call_id: message.toolCallId,
          output: message.content,
        });
        break;
      case 'mcp':
        items.push(responsesMcpItem(message.item));
        break;
    }
  }
  return items;
}

function toResponsesTool(tool: CanonicalTool): ResponsesWireTool {
  switch (tool.type) {
    case 'function':
      // Responses defaults `strict` to true, which refuses non-strict schemas: say it explicitly.
      return {
        type: 'function',
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters,
        strict: tool.strict ?? false,
      };
    case 'custom':
      return {
        type: 'custom',
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.format ? { format: tool.format } : {}),
      };
    case 'mcp':
      return {
        type: 'mcp',
        server_label: tool.serverLabel,
        server_url: tool.serverUrl,
        ...(tool.allowedTools ? { allowed_tools: tool.allowedTools } : {}),
        ...(tool.headers ? { headers: tool.headers } : {}),
        ...(tool.authorization ? { authorization: tool.authorization } : {}),
        // Absent: OpenAI's default (approval before every call), as the client expects of OpenAI.
        ...(tool.requireApproval !== undefined ? { require_approval: toWireApprovalRule(tool.requireApproval) } : {}),
      };
  }
}

function toWireApprovalRule(rule: McpApprovalRule): NonNullable<Extract<ResponsesWireTool, { type: 'mcp' }>['require_approval']> {
  if (typeof rule === 'string') return rule;
  const filter = (f: McpToolFilter | undefined): WireToolFilter | undefined =>
    f && { ...(f.toolNames ? { tool_names: f.toolNames } : {}), ...(f.readOnly !== undefined ? { read_only: f.readOnly } : {}) };
  return { ...(rule.always ? { always: filter(rule.always) } : {}), ...(rule.never ? { never: filter(rule.never) } : {}) };
}
function toResponsesToolChoice(choice: CanonicalToolChoice, tools: readonly CanonicalTool[]): ResponsesWireToolChoice {
  if (typeof choice === 'string') return choice;
  const named = tools.find((tool) => tool.type !== 'mcp' && tool.name === choice.name);
  return { type: named?.type === 'custom' ? 'custom' : 'function', name: choice.name };
}
