import { badRequest } from '../shared/errors';
import type { CanonicalMcpItem, CanonicalRequest, VendorCapabilities } from './canonical';

/** How a client sends each MCP item back: Responses item types (the only format with all four). */
const MCP_ITEM_TYPES = {
  list_tools: 'mcp_list_tools',
  call: 'mcp_call',
  approval_request: 'mcp_approval_request',
  approval_response: 'mcp_approval_response',
} as const;

/**
 * Refuses tools and items the vendor cannot serve. MCP tool listings of earlier turns are
 * never refused: a vendor that does not read them back is not sent them.
 */
export function checkVendorCapabilities(request: CanonicalRequest, can: VendorCapabilities): void {
  if (request.maxToolCalls !== undefined && !can.mcpCallLimit) {
    throw badRequest(
      `max_tool_calls cannot be enforced for model '${request.model.id}': its vendor calls MCP servers without a limit; remove max_tool_calls.`,
      {
        field: 'max_tool_calls',
        model: request.model.id,
      },
    );
  }
  // A vendor that serves everything refuses nothing (the common case: checked without allocating).
  if (can.customTools && can.mcpServers && can.mcpCalls && can.mcpApprovals) return;
  const model = request.model.id;
  const unsupported: string[] = [];
  for (const tool of request.tools) {
    if (tool.type === 'mcp' && !can.mcpServers) unsupported.push(`MCP server '${tool.serverLabel}'`);
    if (tool.type === 'custom' && !can.customTools) unsupported.push(`custom tool '${tool.name}'`);
  }
  if (unsupported.length > 0) {
    throw badRequest(`tools: ${unsupported.join(', ')} cannot be used with model '${model}'; use function tools instead.`, {
      field: 'tools',
      model,
    });
  }
  if (can.mcpApprovals) return;
  for (const tool of request.tools) {
    if (tool.type === 'mcp' && tool.requireApproval !== undefined && tool.requireApproval !== 'never') {
      throw badRequest(
        `tools: MCP server '${tool.serverLabel}' asks for approvals, which model '${model}' cannot ask for (its vendor calls MCP servers without asking); set require_approval to 'never'.`,
        {
          field: 'tools',
          model,
        },
      );
    }
  }
  const readable = (kind: CanonicalMcpItem['kind']) => kind === 'list_tools' || (kind === 'call' && can.mcpCalls);
  const item = request.messages.find((message) => message.role === 'mcp' && !readable(message.item.kind));
  if (item?.role === 'mcp') {
    // Calls also come from Messages clients (mcp_tool_use blocks); the Anthropic envelope has no param, the text names both.
    const what =
      item.item.kind === 'call'
        ? "MCP calls of an earlier turn ('mcp_call' items, or mcp_tool_use blocks in messages)"
        : `'${MCP_ITEM_TYPES[item.item.kind]}' items`;
    const which = item.item.kind === 'call' ? 'a vendor that runs MCP servers (OpenAI, Anthropic)' : 'a vendor with MCP approvals (OpenAI)';
    throw badRequest(`input: ${what} can be sent back only to ${which}; model '${model}' cannot read them.`, { field: 'input', model });
  }
}
