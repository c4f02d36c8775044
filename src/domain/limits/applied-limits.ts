import type { KeyPrincipal } from '../shared/principal';
import type { Tier } from './tiers';
import type { AppliedLimits } from './windows';

/**
 * Whom a request's limits count against (its subject) and which limits apply: an account's
 * tier for prepaid keys, the user's plan for plan-billed keys.
 */

/** Requests per minute for a plan key whose user lost its plan: the lowest plan's window. */
const FALLBACK_PLAN_REQUESTS_PER_MINUTE = 20;

export const subjectOfAccount = (accountId: string): string => `acct:${accountId}`;

export function subjectOf(principal: KeyPrincipal): string {
  if (principal.kind === 'prepaid') return subjectOfAccount(principal.accountId);
  return principal.userId ? `user:${principal.userId}` : `key:${principal.keyId}`;
}

/** One AppliedLimits per tier object (the tier lookup answers the same object while it is cached): not a new one per request. */
const limitsByTier = new WeakMap<Tier, AppliedLimits>();

export function limitsOfTier(tier: Tier): AppliedLimits {
  let limits = limitsByTier.get(tier);
  if (!limits) {
    limits = appliedLimitsOf(tier);
    limitsByTier.set(tier, limits);
  }
  return limits;
}

function appliedLimitsOf(tier: Tier): AppliedLimits {
  return {
    kind: 'prepaid',
    tier: tier.tier,
    requestsPerSecond: tier.requestsPerSecond,
    requestsPerMinute: tier.requestsPerMinute,
    tokensPerMinute: tier.tokensPerMinute,
    concurrentRequests: tier.concurrentRequests,
  };
}

export function limitsOfPlan(principal: KeyPrincipal): AppliedLimits {
  return {
    kind: 'plan',
    tier: null,
    requestsPerSecond: null,
    requestsPerMinute: principal.plan?.requestsPerMinute ?? FALLBACK_PLAN_REQUESTS_PER_MINUTE,
    tokensPerMinute: null,
    concurrentRequests: null,
  };
}
