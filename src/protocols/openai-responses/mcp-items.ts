import type { CanonicalMcpItem, McpToolListing } from '../../domain/generation/canonical';
import { compact } from '../decode-fields';
import type { ResponseMcpItem } from './items';

import type { ResponsesWireItem } from './vendor-types';

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
        tools: item.tools.map((tool) => ({
          name: tool.name,
          input_schema: tool.inputSchema,
          description: tool.description ?? null,
          annotations: tool.annotations ?? null,
        })),
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
      return {
        type: 'mcp_approval_response',
        id: item.id ?? null,
        approval_request_id: item.approvalRequestId,
        approve: item.approve,
        reason: item.reason ?? null,
      };
  }
}

/**
 * A finished MCP item of OpenAI's output → canonical; null for anything else, or for an item
 * too malformed to send back (it would be refused on the next turn).
 */
export function fromWireMcpItem(item: ResponsesWireItem): CanonicalMcpItem | null {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const id = text(item.id);
  const serverLabel = text(item.server_label);
  if (id === undefined || serverLabel === undefined) return null;
  switch (item.type) {
    case 'mcp_list_tools':
      return compact<CanonicalMcpItem>({
        kind: 'list_tools',
        id,
        serverLabel,
        tools: (Array.isArray(item.tools) ? item.tools : []).flatMap((tool) =>
          typeof tool?.name === 'string'
            ? [
                compact<McpToolListing>({
                  name: tool.name,
                  description: text(tool.description),
                  inputSchema: tool.input_schema ?? {},
                  annotations: tool.annotations ?? undefined,
                }),
              ]
            : [],
        ),
        error: text(item.error),
      });
    case 'mcp_call':
      return compact<CanonicalMcpItem>({
        kind: 'call',
        id,
        serverLabel,
        name: text(item.name) ?? '',
        arguments: text(item.arguments) ?? '',
        output: text(item.output),
        error: text(item.error),
        approvalRequestId: text(item.approval_request_id),
      });
    case 'mcp_approval_request':
      return { kind: 'approval_request', id, serverLabel, name: text(item.name) ?? '', arguments: text(item.arguments) ?? '' };
    default:
      return null;
  }
}
