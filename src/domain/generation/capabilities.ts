import type { CanonicalMcpItem, CanonicalRequest, VendorCapabilities } from './canonical';
import { TextFieldRefusal, type TextFieldKey, type TextFieldNames } from './field-keys';

/** How a client sends each MCP item back: Responses item types (the only format with all four). */
const MCP_ITEM_TYPES = {
  list_tools: 'mcp_list_tools',
  call: 'mcp_call',
  approval_request: 'mcp_approval_request',
  approval_response: 'mcp_approval_response',
} as const;

/** A refusal naming `key` in the client's words, with the model in its details. */
function refuse(key: TextFieldKey, model: string, wording: (names: TextFieldNames) => string): never {
  throw new TextFieldRefusal(key, wording, () => ({ model }));
}

/**
 * Refuses tools and items the vendor cannot serve. MCP tool listings of earlier turns are
 * never refused: a vendor that does not read them back is not sent them.
 */
export function checkVendorCapabilities(request: CanonicalRequest, can: VendorCapabilities): void {
  const model = request.model.id;
  if (request.maxToolCalls !== undefined && !can.mcpCallLimit) {
    refuse('text.maxToolCalls', model, ({ fields: { 'text.maxToolCalls': field } }) => {
      return `${field} cannot be enforced for model '${model}': its vendor calls MCP servers without a limit; remove ${field}.`;
    });
  }
  // A vendor that serves everything refuses nothing (the common case: checked without allocating).
  if (can.customTools && can.mcpServers && can.mcpCalls && can.mcpApprovals) return;
  const servers = can.mcpServers ? [] : request.tools.flatMap((tool) => (tool.type === 'mcp' ? [`MCP server '${tool.serverLabel}'`] : []));
  if (servers.length > 0) {
    refuse(
      'text.mcpServers',
      model,
      (names) => `${names.fields['text.mcpServers']}: ${servers.join(', ')} cannot be used with model '${model}'.`,
    );
  }
  const custom = can.customTools ? [] : request.tools.flatMap((tool) => (tool.type === 'custom' ? [`custom tool '${tool.name}'`] : []));
  if (custom.length > 0) {
    refuse(
      'text.tools',
      model,
      (names) => `${names.fields['text.tools']}: ${custom.join(', ')} cannot be used with model '${model}'; use function tools instead.`,
    );
  }
  if (can.mcpApprovals) return;
  for (const tool of request.tools) {
    if (tool.type === 'mcp' && tool.requireApproval !== undefined && tool.requireApproval !== 'never') {
      refuse(
        'text.mcpServers',
        model,
        (names) =>
          `${names.fields['text.mcpServers']}: MCP server '${tool.serverLabel}' asks for approvals, which model '${model}' cannot ask for (its vendor calls MCP servers without asking); set ${names.fields['text.mcpApproval']} to 'never'.`,
      );
    }
  }
  const readable = (kind: CanonicalMcpItem['kind']) => kind === 'list_tools' || (kind === 'call' && can.mcpCalls);
  const item = request.messages.find((message) => message.role === 'mcp' && !readable(message.item.kind));
  if (item?.role === 'mcp') {
    // Calls also come from Messages clients (mcp_tool_use blocks): the text names both spellings.
    const what =
      item.item.kind === 'call'
        ? "MCP calls of an earlier turn ('mcp_call' items, or mcp_tool_use blocks in messages)"
        : `'${MCP_ITEM_TYPES[item.item.kind]}' items`;
    const which = item.item.kind === 'call' ? 'a vendor that runs MCP servers (OpenAI, Anthropic)' : 'a vendor with MCP approvals (OpenAI)';
    refuse(
      'text.prompt',
      model,
      (names) => `${names.fields['text.prompt']}: ${what} can be sent back only to ${which}; model '${model}' cannot read them.`,
    );
  }
}
