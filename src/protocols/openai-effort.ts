import type { CanonicalReasoning } from '../domain/generation/canonical';

/** OpenAI's reasoning effort, shared by the Chat Completions and Responses vendor requests. */
export type OpenAIEffort = 'low' | 'medium' | 'high';

/**
 * Canonical reasoning → OpenAI effort. `extra_high` becomes `high`: `xhigh` exists only on a
 * few newest models and is refused by the others (o4-mini). `disabled` becomes `low`: o-series
 * models cannot stop reasoning. A bare thinking budget (Anthropic-style) picks the nearest
 * effort. `default`/`adaptive` without effort: omitted, the vendor's default applies.
 */
export function toOpenAIEffort(reasoning: CanonicalReasoning): OpenAIEffort | undefined {
  if (reasoning.mode === 'disabled') return 'low';
  if (reasoning.effort) return reasoning.effort === 'extra_high' ? 'high' : reasoning.effort;
  if (reasoning.mode === 'enabled' && reasoning.budgetTokens !== undefined) {
    if (reasoning.budgetTokens <= 2048) return 'low';
    if (reasoning.budgetTokens <= 8192) return 'medium';
    return 'high';
  }
  return undefined;
}
