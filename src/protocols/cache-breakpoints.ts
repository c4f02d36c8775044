import type { CacheBreakpoint, VendorOnlySettings } from '../domain/generation/canonical';
import { type Fields, compact, joinTextParts, refuseField } from './decode-fields';

/**
 * Prompt-cache breakpoints as clients mark them (Anthropic's `cache_control`, which LiteLLM and
 * OpenRouter also take on Chat Completions content parts and tools), read by the decoders of the
 * formats that carry them (docs/api.md, "Cache breakpoints").
 */

/** `cache_control` on a part: `{type: 'ephemeral', ttl?: '5m' | '1h'}`; null or absent: none. */
export function readCacheBreakpoint(part: Fields, key = 'cache_control'): CacheBreakpoint | undefined {
  const control = part.object(key);
  if (!control) return undefined;
  control.allowOnly(['type', 'ttl']).requiredOneOf('type', ['ephemeral']);
  return compact({ ttl: control.oneOf('ttl', ['5m', '1h']) });
}

/** A text part and the breakpoint marked on it. */
export interface MarkedText {
  text: string;
  cacheBreakpoint?: CacheBreakpoint;
}

/** A text part with the breakpoint read from it; an empty text cannot carry one (Anthropic refuses it too). */
export function markedText(part: Fields, text: string, cacheBreakpoint: CacheBreakpoint | undefined): MarkedText {
  if (cacheBreakpoint && text === '') refuseField(part.field('cache_control'), 'cannot mark an empty text block; mark a part with text');
  return compact({ text, cacheBreakpoint });
}

/**
 * A message's text parts, joined a line apart as joinTextParts does, except that a breakpoint
 * ends a run: each run carries its breakpoint at its end, so the vendor finds it after the same
 * text. Unmarked parts give one run, exactly as before; no parts give one empty run.
 */
export function textRuns(parts: readonly MarkedText[]): MarkedText[] {
  const runs: MarkedText[] = [];
  let pending: string[] = [];
  for (const part of parts) {
    pending.push(part.text);
    if (part.cacheBreakpoint) {
      runs.push({ text: joinTextParts(pending), cacheBreakpoint: part.cacheBreakpoint });
      pending = [];
    }
  }
  if (pending.length > 0 || runs.length === 0) runs.push({ text: joinTextParts(pending) });
  return runs;
}

/** `{cacheBreakpoint}` when marked, `{}` otherwise: spread into a canonical part. */
export const withBreakpoint = (breakpoint: CacheBreakpoint | undefined): { cacheBreakpoint?: CacheBreakpoint } =>
  breakpoint ? { cacheBreakpoint: breakpoint } : {};

/**
 * The breakpoints of one request as they are read, by where the client put them: Anthropic gets
 * them back on the same parts; for a vendor without breakpoints each is a hint, dropped and named
 * (`messages[0].content[1].cache_control`) like every hint (docs/api.md, the hint rule).
 */
export class BreakpointMarks {
  readonly fields: string[] = [];

  read(part: Fields): CacheBreakpoint | undefined {
    const breakpoint = readCacheBreakpoint(part);
    if (breakpoint) this.fields.push(part.field('cache_control'));
    return breakpoint;
  }

  /** For a format with nothing else only Anthropic takes (Chat Completions): the marks as Anthropic-only hints. */
  asVendorOnly(): VendorOnlySettings | undefined {
    if (this.fields.length === 0) return undefined;
    return { protocol: 'anthropic', body: {}, toolFields: {}, headers: {}, contextEdits: [], deferredTools: [], hints: this.fields };
  }
}
