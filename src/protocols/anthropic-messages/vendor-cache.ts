import type { CacheBreakpoint } from '../../domain/generation/canonical';
import { badRequest } from '../../domain/shared/errors';
import type { AnthropicWireCacheControl, AnthropicWireRequest } from './vendor-types';

/**
 * Prompt-cache breakpoints on the vendor side of Anthropic Messages: a canonical breakpoint →
 * `cache_control` on the block that carries it, and Anthropic's two rules on breakpoints checked
 * before anything is reserved (Anthropic refuses the request otherwise, which Tollgate would
 * answer 502 after an admission and a hold for nothing): at most 4 per request, a top-level
 * `cache_control` (automatic caching) taking one, and 1-hour breakpoints before 5-minute ones
 * in the order Anthropic caches the prompt (tools, system, messages).
 */

export const MAX_CACHE_BREAKPOINTS = 4;

/** `{cache_control}` for a marked part, `{}` otherwise: spread into a wire block. */
export const cacheControlOf = (breakpoint: CacheBreakpoint | undefined): { cache_control?: AnthropicWireCacheControl } =>
  breakpoint ? { cache_control: { type: 'ephemeral', ...(breakpoint.ttl ? { ttl: breakpoint.ttl } : {}) } } : {};

/** The breakpoints of a request body, in the order Anthropic caches the prompt. */
function breakpointsOf(body: AnthropicWireRequest): AnthropicWireCacheControl[] {
  const system = Array.isArray(body.system) ? body.system : [];
  const parts = [...(body.tools ?? []), ...system, ...body.messages.flatMap((message) => message.content)];
  return parts.flatMap((part) => ('cache_control' in part && part.cache_control ? [part.cache_control] : []));
}

/** Throws the 400 Anthropic would answer for the body's breakpoints. */
export function checkCacheBreakpoints(body: AnthropicWireRequest): void {
  const explicit = breakpointsOf(body);
  const automatic = body.cache_control !== undefined && body.cache_control !== null ? 1 : 0;
  const count = explicit.length + automatic;
  if (count > MAX_CACHE_BREAKPOINTS) {
    const extra = automatic === 1 ? ' (the top-level cache_control takes one)' : '';
    throw badRequest(
      `cache_control: Anthropic takes at most ${MAX_CACHE_BREAKPOINTS} cache breakpoints per request${extra}, and this one marks ${count}; remove ${count - MAX_CACHE_BREAKPOINTS}.`,
      {
        field: 'cache_control',
        limit: MAX_CACHE_BREAKPOINTS,
        breakpoints: count,
      },
    );
  }
  const firstShort = explicit.findIndex((control) => control.ttl !== '1h');
  if (firstShort !== -1 && explicit.slice(firstShort).some((control) => control.ttl === '1h')) {
    throw badRequest(
      "cache_control: a 1-hour cache breakpoint comes after a 5-minute one; Anthropic caches the prompt in order (tools, system, messages) and takes longer-lived breakpoints first: mark the earlier ones '1h' or this one '5m'.",
      {
        field: 'cache_control',
      },
    );
  }
}
