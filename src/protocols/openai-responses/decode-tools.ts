import type { CanonicalResponseFormat, CanonicalTool, CanonicalToolChoice, McpApprovalRule, McpToolFilter } from '../../domain/generation/canonical';
import { Fields, checkToolCount, compact, emptyParameters, fieldPath, nameAt, refuseField } from '../decode-fields';
import type { ResponseCustomToolFormat, ResponseMcpTool, ResponseTool, ResponseToolChoice } from './types';

/**
 * The `tools`, `tool_choice` and `text.format` of a Responses request → canonical, each with what
 * the `response` object echoes of it.
 */

const HOSTED_TOOLS = [
  'file_search', 'computer', 'computer_use', 'computer_use_preview', 'web_search', 'web_search_2025_08_26',
  'web_search_preview', 'web_search_preview_2025_03_11', 'code_interpreter', 'image_generation', 'local_shell',
  'shell', 'apply_patch', 'namespace', 'tool_search',
];

interface DecodedTool {
  canonical: CanonicalTool;
  echo: ResponseTool;
}

export function decodeTools(req: Fields): DecodedTool[] {
  const list = req.array('tools') ?? [];
  checkToolCount(list, 'tools');
  return list.map((raw, i) => {
    const tool = Fields.at(raw, fieldPath('tools', i));
    const type = tool.requiredString('type');
    switch (type) {
      case 'function':
        return decodeFunctionTool(tool);
      case 'custom':
        return decodeCustomTool(tool);
      case 'mcp':
        return decodeMcpTool(tool);
      default:
        if (HOSTED_TOOLS.includes(type)) refuseField(tool.field('type'), `'${type}' is not supported: hosted tools are not available; declare function, custom or mcp tools`);
        return refuseField(tool.field('type'), "must be 'function', 'custom' or 'mcp'");
    }
  });
}

function decodeFunctionTool(tool: Fields): DecodedTool {
  tool.allowOnly(['type', 'name', 'description', 'parameters', 'strict', 'defer_loading']).refuseIfEnabled(['defer_loading']);
  const name = nameAt(tool, 'name');
  const description = tool.string('description');
  const parameters = tool.jsonObject('parameters') ?? emptyParameters();
  const strict = tool.boolean('strict');
  return {
    canonical: compact<CanonicalTool>({ type: 'function', name, description, parameters, strict }),
    echo: { type: 'function', name, description: description ?? null, parameters, strict: strict ?? null },
  };
}

function decodeCustomTool(tool: Fields): DecodedTool {
  tool.allowOnly(['type', 'name', 'description', 'format', 'defer_loading']).refuseIfEnabled(['defer_loading']);
  const name = nameAt(tool, 'name');
  const description = tool.string('description');
  const format = tool.object('format');
  if (format) {
    const formatType = format.requiredOneOf('type', ['text', 'grammar']);
    if (formatType === 'text') format.allowOnly(['type']);
    else {
      format.allowOnly(['type', 'syntax', 'definition']).requiredOneOf('syntax', ['lark', 'regex']);
      format.requiredString('definition');
    }
  }
  return {
    canonical: compact<CanonicalTool>({ type: 'custom', name, description, format: format?.value }),
    echo: compact<ResponseTool>({ type: 'custom', name, description, format: format?.value as ResponseCustomToolFormat | undefined }),
  };
}

function decodeMcpTool(tool: Fields): DecodedTool {
  tool.allowOnly(['type', 'server_label', 'server_url', 'server_description', 'allowed_tools', 'headers', 'authorization', 'require_approval', 'connector_id', 'defer_loading']);
  tool.refuseIfSet(['connector_id'], 'is not supported: connectors need OpenAI-managed sign-in; give server_url');
  tool.refuseIfEnabled(['defer_loading']);
  const serverLabel = tool.requiredString('server_label', { nonEmpty: true });
  const serverUrl = tool.requiredString('server_url', { nonEmpty: true });
  tool.string('server_description'); // accepted; no canonical field (the vendor lists the server's tools itself)
  const allowedTools = decodeAllowedTools(tool);
  const requireApproval = decodeRequireApproval(tool);
  return {
    canonical: compact<CanonicalTool>({
      type: 'mcp',
      serverLabel,
      serverUrl,
      allowedTools,
      headers: tool.stringMap('headers'),
      authorization: tool.string('authorization'),
      requireApproval,
    }),
    echo: { type: 'mcp', server_label: serverLabel, server_url: serverUrl, allowed_tools: allowedTools ?? null, require_approval: (tool.raw('require_approval') as ResponseMcpTool['require_approval']) ?? null },
  };
}

/** `allowed_tools`: a list of names, or a filter `{tool_names}` (`read_only` filtering is not offered). */
function decodeAllowedTools(tool: Fields): string[] | undefined {
  const value = tool.raw('allowed_tools');
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return tool.strings('allowed_tools');
  const filter = tool.requiredObject('allowed_tools').allowOnly(['tool_names', 'read_only']).refuseIfEnabled(['read_only']);
  return filter.strings('tool_names');
}

/** `require_approval`: 'always' | 'never', or per-tool filters `{always, never}` of tool names or read-only tools. */
function decodeRequireApproval(tool: Fields): McpApprovalRule | undefined {
  const value = tool.raw('require_approval');
  if (value === undefined) return undefined;
  if (typeof value === 'string') return tool.oneOf('require_approval', ['always', 'never']);
  const rule = tool.requiredObject('require_approval').allowOnly(['always', 'never']);
  const filter = (key: 'always' | 'never'): McpToolFilter | undefined => {
    const f = rule.object(key)?.allowOnly(['tool_names', 'read_only']);
    return f && compact<McpToolFilter>({ toolNames: f.strings('tool_names'), readOnly: f.boolean('read_only') });
  };
  return compact({ always: filter('always'), never: filter('never') });
}

export function decodeToolChoice(req: Fields): { canonical: CanonicalToolChoice; echo: ResponseToolChoice } | undefined {
  const value = req.raw('tool_choice');
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    const choice = req.oneOf('tool_choice', ['none', 'auto', 'required'])!;
    return { canonical: choice, echo: choice };
  }
  const named = req.requiredObject('tool_choice');
  const type = named.requiredString('type');
  if (type !== 'function' && type !== 'custom') {
    refuseField(named.field('type'), `'${type}' is not supported; tool_choice may be 'none', 'auto', 'required', or a function or custom tool by name`);
  }
  named.allowOnly(['type', 'name']);
  const name = named.requiredString('name');
  return { canonical: type === 'custom' ? { name, kind: 'custom' } : { name }, echo: { type, name } };
}

export function decodeTextFormat(format: Fields): CanonicalResponseFormat {
  const type = format.requiredOneOf('type', ['text', 'json_object', 'json_schema']);
  if (type !== 'json_schema') {
    format.allowOnly(['type']);
    return { type };
  }
  format.allowOnly(['type', 'name', 'schema', 'description', 'strict']);
  const schema = format.jsonObject('schema');
  if (!schema) refuseField(format.field('schema'), 'is required');
  return compact<CanonicalResponseFormat>({
    type: 'json_schema',
    name: nameAt(format, 'name'),
    schema,
    strict: format.boolean('strict'),
    description: format.string('description'),
  });
}
