import type { AnswerCost } from '../billing/answer-cost';
import type { TokenUsage } from '../billing/pricing';
import type { UsageCounts } from '../billing/usage-counts';
import { withFields } from '../shared/objects';
import type { CanonicalEvent, CanonicalUsage } from './canonical';

/** A generation's usage as its answer shows it and as billing counts it (open-generation.ts). */

/**
 * When the vendor reports no reasoning count but bills output the answer does not show, the
 * reported reasoning count is billed output minus the visible answer (an estimate).
 */
export function withReasoningEstimate(usage: CanonicalUsage, visibleAnswerTokens: () => number): CanonicalUsage {
  if (usage.reasoningTokens !== null) return usage; // counted only when needed: tokenizing a long answer costs
  return withFields(usage, { reasoningTokens: Math.max(0, usage.outputTokens - visibleAnswerTokens()) });
}

/** Canonical usage as billing counts it (a missing reasoning count is 0: never billed on top). */
export const billedUsage = (usage: CanonicalUsage): TokenUsage & UsageCounts => ({
  inputTokens: usage.inputTokens,
  cachedInputTokens: usage.cachedInputTokens,
  cacheWrite5mInputTokens: usage.cacheWrite5mInputTokens ?? 0,
  cacheWrite1hInputTokens: usage.cacheWrite1hInputTokens ?? 0,
  outputTokens: usage.outputTokens,
  reasoningTokens: usage.reasoningTokens ?? 0,
});

/** The finish event as the client gets it: its usage with the answer's cost, when charged. */
export function finishedWith(
  event: Extract<CanonicalEvent, { type: 'finish' }>,
  usage: CanonicalUsage,
  cost: AnswerCost | null,
): CanonicalEvent {
  return withFields(event, { usage: cost ? withFields(usage, { cost }) : usage });
}
