import { withFields } from '../shared/objects';
import type { CanonicalHint, CanonicalRequest, TextProvider, VendorHints } from './canonical';
import { settleVendorOnly, type SettledRequest } from './vendor-only';

/**
 * The hint rule (docs/api.md, "Field policy"), for every format and every vendor. A hint is a
 * setting that changes neither what is billed nor whether the answer is a valid answer to the
 * request: sampling, answer length, whether tool calls may come several at once, and the
 * settings only one vendor's protocol carries (betas, streaming granularity, cache markers…).
 * A hint the serving vendor cannot take for the request is dropped, never refused, and named
 * on the answer (`x-service-dropped-hints`) as the client named it. Vendors only declare what
 * they take (`TextProvider.hints`); this module decides, once, and the vendor encoders send
 * whatever the settled request still carries.
 */

/** Every canonical hint, in the order the answer names them (a record, so that none can be left out). */
const EVERY_HINT: Readonly<Record<CanonicalHint, true>> = {
  temperature: true,
  topP: true,
  topK: true,
  frequencyPenalty: true,
  presencePenalty: true,
  seed: true,
  verbosity: true,
  parallelToolCalls: true,
};
export const CANONICAL_HINTS = Object.keys(EVERY_HINT) as readonly CanonicalHint[];

/** How the client's format names each hint (`verbosity` in Chat, `text.verbosity` in Responses). */
export type HintNames = Readonly<Record<CanonicalHint, string>>;

const NONE: readonly string[] = [];

/**
 * The request as the vendor is sent it: the settings of another vendor's protocol settled
 * (vendor-only.ts: context edits applied where exact, deferred tools, their hints dropped),
 * then every canonical hint the vendor does not take dropped. `inputTokenBound`: the hold's
 * bound of the prompt's input tokens (context edits compare it with their triggers).
 */
export function settleForVendor(
  request: CanonicalRequest,
  provider: Pick<TextProvider, 'hints'>,
  names: HintNames,
  inputTokenBound: (request: CanonicalRequest) => number,
): SettledRequest {
  const vendorOnly = settleVendorOnly(request, inputTokenBound);
  const canonical = dropHints(vendorOnly.request, provider.hints(vendorOnly.request), names);
  if (vendorOnly.droppedHints.length === 0) return canonical;
  return { request: canonical.request, droppedHints: inOrder([...vendorOnly.droppedHints, ...canonical.droppedHints]) };
}

/** Drops the canonical hints the vendor does not take (without allocating when there is none to drop). */
export function dropHints(request: CanonicalRequest, takes: VendorHints, names: HintNames): SettledRequest {
  let dropped: string[] | null = null;
  for (const hint of CANONICAL_HINTS) {
    if (request[hint] === undefined || takes.has(hint) || !applies(hint, request)) continue;
    (dropped ??= []).push(names[hint]);
  }
  if (dropped === null) return { request, droppedHints: NONE };
  const removed: Partial<Record<CanonicalHint, undefined>> = {};
  for (const hint of CANONICAL_HINTS) if (!takes.has(hint) && applies(hint, request)) removed[hint] = undefined;
  return { request: withFields(request, removed), droppedHints: inOrder(dropped) };
}

/** Whether tool calls may run in parallel says nothing without tools: no vendor acts on it then, so it is never named. */
const applies = (hint: CanonicalHint, request: CanonicalRequest): boolean => hint !== 'parallelToolCalls' || request.tools.length > 0;

/** Headers (`anthropic-beta=…`), then top-level fields, then nested ones (`text.verbosity`, `tools[0].…`); stable within each. */
function inOrder(names: string[]): string[] {
  const rank = (name: string) => (name.includes('=') ? 0 : /[.[]/.test(name) ? 2 : 1);
  return names.sort((a, b) => rank(a) - rank(b));
}
