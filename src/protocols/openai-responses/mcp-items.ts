import type { CanonicalMcpItem } from '../../domain/generation/canonical';
import type { ResponseMcpApprovalRequest, ResponseMcpApprovalResponse, ResponseMcpCall, ResponseMcpListTools } from './types';

export type ResponseMcpItem = ResponseMcpListTools | ResponseMcpCall | ResponseMcpApprovalRequest | ResponseMcpApprovalResponse;

/**
 * A canonical MCP item as a Responses item: what a client is shown in `output`, and what
 * OpenAI is sent back in `input` (the same item its own client would echo, nulls included;
 * the ids are the vendor's, which it matches).
 */
export function responsesMcpItem(item: CanonicalMcpItem): ResponseMcpItem {
  switch (item.kind) {
    case 'list_tools':
      return {
        type: 'mcp_list_tools',
        id: item.id,
        server_label: item.serverLabel,
        tools: item.tools.map((tool) => ({ name: tool.name, input_schema: tool.inputSchema, description: tool.description ?? null, annotations: tool.annotations ?? null })),
        error: item.error ?? null,
      };
    case 'call':
      return {
        type: 'mcp_call',
        id: item.id,
        server_label: item.serverLabel,
        name: item.name,
        arguments: item.arguments,
        output: item.output ?? null,
        error: item.error ?? null,
        approval_request_id: item.approvalRequestId ?? null,
        status: item.error !== undefined ? 'failed' : 'completed',
      };
    case 'approval_request':
      return { type: 'mcp_approval_request', id: item.id, server_label: item.serverLabel, name: item.name, arguments: item.arguments };
    case 'approval_response':
      return { type: 'mcp_approval_response', id: item.id ?? null, approval_request_id: item.approvalRequestId, approve: item.approve, reason: item.reason ?? null };
  }
}
