import type {
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
  McpApprovalRule,
  McpToolFilter,
} from '../../domain/generation/canonical';
import { Fields, checkToolCount, compact, emptyParameters, fieldPath, nameAt, refuseField } from '../decode-fields';
import type {
  ResponseCustomTool,
  ResponseCustomToolFormat,
  ResponseFunctionTool,
  ResponseMcpTool,
  ResponseTool,
  ResponseToolChoice,
} from './types';

/**
 * The `tools`, `tool_choice` and `text.format` of a Responses request → canonical, each with what
 * the `response` object echoes of it.
 */

const HOSTED_TOOLS = [
  'file_search',
  'computer',
  'computer_use',
  'computer_use_preview',
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'code_interpreter',
  'image_generation',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
];

/** How to turn a hosted tool off in the clients known to send one by default. */
const CODEX_WEB_SEARCH_OFF = 'Codex: web_search = "disabled" in config.toml, or -c web_search=\'"disabled"\'';
const HOSTED_TOOL_SWITCHES: Readonly<Record<string, string>> = {
  web_search: CODEX_WEB_SEARCH_OFF,
  web_search_preview: CODEX_WEB_SEARCH_OFF,
};

/** Separates a namespace from its tool's name in the name vendors are given (names allow only letters, digits, `_`, `-`). */
export const NAMESPACE_SEPARATOR = '__';

/** A tool of a namespace: its own name and its namespace's. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

interface DecodedTool {
  canonical: CanonicalTool;
  echo: ResponseTool;
}

export interface DecodedTools {
  canonical: CanonicalTool[];
  /** As declared (namespaces as namespaces), without MCP credentials. */
  echo: ResponseTool[];
  /** Namespaced tools by the name vendors are given (`<namespace>__<name>`). */
  namespaces: Map<string, NamespacedName>;
}

/**
 * Function, custom and MCP tools; a namespace's tools are served as the tools they group,
 * each named `<namespace>__<name>` for the vendor (calls are shown with their own name and
 * `namespace` again). Hosted tools are refused, saying how to turn them off.
 */
export function decodeTools(req: Fields): DecodedTools {
  const list = req.array('tools') ?? [];
  const tools: DecodedTools = { canonical: [], echo: [], namespaces: new Map() };
  list.forEach((raw, i) => {
    const tool = Fields.at(raw, fieldPath('tools', i));
    const type = tool.requiredString('type');
    if (type === 'namespace') return decodeNamespace(tool, tools);
    const decoded = decodeTool(tool, type, ['function', 'custom', 'mcp', 'namespace']);
    tools.canonical.push(decoded.canonical);
    tools.echo.push(decoded.echo);
  });
  checkToolCount(tools.canonical, 'tools');
  const names = new Set<string>();
  tools.canonical.forEach((tool) => {
    if (tool.type === 'mcp') return;
    if (names.has(tool.name))
      refuseField(
        'tools',
        `declare '${tool.name}' twice${tools.namespaces.has(tool.name) ? ' (a namespaced tool is served under that name)' : ''}; tool names must be unique`,
      );
    names.add(tool.name);
  });
  return tools;
}

function decodeTool(tool: Fields, type: string, allowed: readonly string[]): DecodedTool {
  switch (type) {
    case 'function':
      return decodeFunctionTool(tool);
    case 'custom':
      return decodeCustomTool(tool);
    case 'mcp':
      if (allowed.includes('mcp')) return decodeMcpTool(tool);
  }
  if (HOSTED_TOOLS.includes(type)) {
    const off = HOSTED_TOOL_SWITCHES[type];
    refuseField(
      tool.field('type'),
      `'${type}' is not supported: hosted tools are not available; remove it and declare function, custom or mcp tools${off ? ` (${off})` : ''}`,
    );
  }
  return refuseField(
    tool.field('type'),
    `must be ${allowed
      .map((t) => `'${t}'`)
      .join(', ')
      .replace(/, ([^,]*)$/, ' or $1')}`,
  );
}

/** `{type: 'namespace', name, description, tools}`: its function and custom tools, under names that carry the namespace. */
function decodeNamespace(tool: Fields, into: DecodedTools): void {
  tool.allowOnly(['type', 'name', 'description', 'tools']);
  const namespace = nameAt(tool, 'name');
  const description = tool.string('description');
  const members = (tool.objects('tools') ?? []).map((member) => {
    const decoded = decodeTool(member, member.requiredString('type'), ['function', 'custom']);
    const own = decoded.canonical as Exclude<CanonicalTool, { type: 'mcp' }>;
    const served = `${namespace}${NAMESPACE_SEPARATOR}${own.name}`;
    if (served.length > 64) refuseField(member.field('name'), `with its namespace must fit in 64 characters (it is served as '${served}')`);
    into.namespaces.set(served, { namespace, name: own.name });
    const context = description
      ? `${own.description ? `${own.description}\n\n` : ''}(Part of ${namespace}: ${description})`
      : own.description;
    into.canonical.push(compact<CanonicalTool>({ ...own, name: served, description: context }));
    return decoded.echo as ResponseFunctionTool | ResponseCustomTool;
  });
  into.echo.push({ type: 'namespace', name: namespace, description: description ?? '', tools: members });
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
  tool.allowOnly([
    'type',
    'server_label',
    'server_url',
    'server_description',
    'allowed_tools',
    'headers',
    'authorization',
    'require_approval',
    'connector_id',
    'defer_loading',
  ]);
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
    echo: {
      type: 'mcp',
      server_label: serverLabel,
      server_url: serverUrl,
      allowed_tools: allowedTools ?? null,
      require_approval: (tool.raw('require_approval') as ResponseMcpTool['require_approval']) ?? null,
    },
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

export function decodeToolChoice(
  req: Fields,
  tools: DecodedTools,
): { canonical: CanonicalToolChoice; echo: ResponseToolChoice } | undefined {
  const value = req.raw('tool_choice');
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    const choice = req.oneOf('tool_choice', ['none', 'auto', 'required'])!;
    return { canonical: choice, echo: choice };
  }
  const named = req.requiredObject('tool_choice');
  const type = named.requiredString('type');
  if (type !== 'function' && type !== 'custom') {
    refuseField(
      named.field('type'),
      `'${type}' is not supported; tool_choice may be 'none', 'auto', 'required', or a function or custom tool by name`,
    );
  }
  named.allowOnly(['type', 'name']);
  const name = named.requiredString('name');
  const served = servedNameOf(name, tools);
  return { canonical: type === 'custom' ? { name: served, kind: 'custom' } : { name: served }, echo: { type, name } };
}

/** A tool choice may name a namespaced tool by its own name when no other tool has it. */
function servedNameOf(name: string, tools: DecodedTools): string {
  if (tools.canonical.some((tool) => tool.type !== 'mcp' && tool.name === name)) return name;
  const matches = [...tools.namespaces].filter(([, own]) => own.name === name);
  return matches.length === 1 ? matches[0]![0] : name;
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
