import type { CacheBreakpoint, CanonicalContextEdit, VendorOnlySettings } from '../../domain/generation/canonical';
import { BreakpointMarks } from '../cache-breakpoints';
import { type Fields, refuseField } from '../decode-fields';

/**
 * The Messages settings only Anthropic's protocol carries (field policy: `passed-to-vendor`),
 * gathered while the body is decoded: kept as sent for Anthropic, with the context edits in
 * canonical form and the hints named, for the pipeline to settle when another vendor serves
 * (src/domain/generation/vendor-only.ts).
 */

/** The request headers a Messages client sends for Anthropic. */
export interface MessagesRequestHeaders {
  /** `anthropic-beta`: comma-separated beta names. */
  beta?: string;
  /** `anthropic-version`. */
  version?: string;
}

/** Anthropic needs this beta for `context_management`; clients that send the field usually send it too. */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

const DEFAULT_CLEAR_TOOL_USES_TRIGGER = 100_000;
const DEFAULT_CLEAR_TOOL_USES_KEEP = 3;
const DEFAULT_COMPACT_TRIGGER = 150_000;
const DEFAULT_THINKING_TURNS_KEPT = 1;

export class VendorOnlyCollector {
  private readonly body: Record<string, unknown> = {};
  private readonly toolFields: Record<string, Record<string, unknown>> = {};
  private readonly headers: Record<string, string> = {};
  private readonly hints: string[] = [];
  private readonly marks = new BreakpointMarks();
  private readonly deferredTools: string[] = [];
  private contextEdits: CanonicalContextEdit[] = [];

  constructor(headers: MessagesRequestHeaders) {
    const betas = (headers.beta ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    if (betas.length > 0) this.headers['anthropic-beta'] = betas.join(',');
    if (headers.version !== undefined && headers.version.trim() !== '') this.headers['anthropic-version'] = headers.version.trim();
    for (const name of betas) this.hints.push(`anthropic-beta=${name}`);
  }

  /** A top-level field, validated by `read`, passed to Anthropic as sent and a hint elsewhere. */
  pass(req: Fields, key: string, read: (req: Fields, key: string) => unknown): void {
    const value = read(req, key);
    if (value === undefined) return;
    this.body[key] = value;
    this.hints.push(key);
  }

  /** A nested field of a top-level object (`output_config.task_budget`). */
  passNested(parent: Fields, parentKey: string, key: string, value: unknown): void {
    if (value === undefined) return;
    const object = (this.body[parentKey] ??= {}) as Record<string, unknown>;
    object[key] = value;
    this.hints.push(parent.field(key));
  }

  /**
   * A part's `cache_control`: a canonical breakpoint (Anthropic puts it back on the same part), and
   * a hint, by its path, for the vendors that have no breakpoints.
   */
  cacheBreakpoint(part: Fields): CacheBreakpoint | undefined {
    return this.marks.read(part);
  }

  /** A tool's own field (`eager_input_streaming`…), by tool name. */
  passToolField(tool: Fields, name: string, key: string, value: unknown): void {
    if (value === undefined) return;
    (this.toolFields[name] ??= {})[key] = value;
    if (key === 'defer_loading') {
      if (value === true) this.deferredTools.push(name);
    } else this.hints.push(tool.field(key));
  }

  /** `context_management`: passed to Anthropic as sent; its edits in canonical form for the others. */
  contextManagement(req: Fields): void {
    const config = req.object('context_management');
    if (!config) return;
    config.allowOnly(['edits']);
    this.contextEdits = (config.objects('edits') ?? []).map(decodeContextEdit);
    this.body.context_management = config.value;
  }

  /** The settings, or undefined when the client sent none. */
  settings(): VendorOnlySettings | undefined {
    const hints = this.marks.fields.length === 0 ? this.hints : [...this.hints, ...this.marks.fields];
    const none =
      hints.length === 0 && this.contextEdits.length === 0 && this.deferredTools.length === 0 && Object.keys(this.headers).length === 0;
    if (none) return undefined;
    return {
      protocol: 'anthropic',
      body: this.body,
      toolFields: this.toolFields,
      headers: this.headers,
      contextEdits: this.contextEdits,
      deferredTools: this.deferredTools,
      hints,
    };
  }
}

/** One `context_management.edits[i]`; the edit types are dated (`clear_tool_uses_20250919`), any date is read alike. */
function decodeContextEdit(edit: Fields): CanonicalContextEdit {
  const type = edit.requiredString('type');
  const field = edit.path;
  if (type.startsWith('clear_thinking_')) {
    edit.allowOnly(['type', 'keep']);
    return { kind: 'clear_thinking', field, keepTurns: thinkingTurnsKept(edit) };
  }
  if (type.startsWith('clear_tool_uses_')) {
    edit.allowOnly(['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs']);
    const trigger = edit.object('trigger');
    const unit = trigger?.requiredOneOf('type', ['input_tokens', 'tool_uses']) ?? 'input_tokens';
    const keep = edit.object('keep');
    keep?.requiredOneOf('type', ['tool_uses']);
    edit.object('clear_at_least')?.allowOnly(['type', 'value']).requiredOneOf('type', ['input_tokens']);
    readClearToolInputs(edit);
    return {
      kind: 'clear_tool_uses',
      field,
      trigger: { unit, value: trigger ? requiredCount(trigger) : DEFAULT_CLEAR_TOOL_USES_TRIGGER },
      keep: keep ? requiredCount(keep.allowOnly(['type', 'value'])) : DEFAULT_CLEAR_TOOL_USES_KEEP,
      excludeTools: edit.strings('exclude_tools') ?? [],
    };
  }
  if (type.startsWith('compact_')) {
    edit.allowOnly(['type', 'trigger', 'instructions', 'pause_after_compaction']);
    edit.string('instructions');
    edit.boolean('pause_after_compaction');
    const trigger = edit.object('trigger');
    trigger?.allowOnly(['type', 'value']).requiredOneOf('type', ['input_tokens']);
    return { kind: 'compact', field, trigger: { unit: 'input_tokens', value: trigger ? requiredCount(trigger) : DEFAULT_COMPACT_TRIGGER } };
  }
  return refuseField(edit.field('type'), `'${type}' is not a context edit Tollgate knows (clear_tool_uses_*, clear_thinking_*, compact_*)`);
}

/** `keep`: `'all'`, `{type: 'all'}` or `{type: 'thinking_turns', value: n}` (default 1 turn). */
function thinkingTurnsKept(edit: Fields): number | 'all' {
  const keep = edit.raw('keep');
  if (keep === undefined) return DEFAULT_THINKING_TURNS_KEPT;
  if (keep === 'all') return 'all';
  const object = edit.object('keep');
  if (!object) return refuseField(edit.field('keep'), "must be 'all' or an object");
  const type = object.requiredOneOf('type', ['all', 'thinking_turns']);
  if (type === 'all') {
    object.allowOnly(['type']);
    return 'all';
  }
  return requiredCount(object.allowOnly(['type', 'value']), 1);
}

function readClearToolInputs(edit: Fields): void {
  const value = edit.raw('clear_tool_inputs');
  if (value === undefined || typeof value === 'boolean') return;
  if (!Array.isArray(value)) refuseField(edit.field('clear_tool_inputs'), 'must be a boolean or an array of tool names');
  edit.strings('clear_tool_inputs');
}

function requiredCount(object: Fields, min = 0): number {
  if (!object.isSet('value')) refuseField(object.field('value'), 'is required');
  return object.integer('value', { min })!;
}
