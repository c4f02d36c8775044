/** Rate-limit tiers (docs/limits.md); the tier follows lifetime top-ups unless pinned. */
export interface Tier {
  tier: number;
  /** Lifetime top-ups from which the tier applies. */
  fromMicro: bigint;
  requestsPerSecond: number;
  requestsPerMinute: number;
  tokensPerMinute: number;
  concurrentRequests: number;
}

export const DEFAULT_TIERS: readonly Tier[] = [
  { tier: 1, fromMicro: 0n, requestsPerSecond: 5, requestsPerMinute: 100, tokensPerMinute: 200_000, concurrentRequests: 5 },
  { tier: 2, fromMicro: 50_000_000n, requestsPerSecond: 20, requestsPerMinute: 500, tokensPerMinute: 1_000_000, concurrentRequests: 20 },
  { tier: 3, fromMicro: 500_000_000n, requestsPerSecond: 50, requestsPerMinute: 2_000, tokensPerMinute: 5_000_000, concurrentRequests: 50 },
  {
    tier: 4,
    fromMicro: 5_000_000_000n,
    requestsPerSecond: 200,
    requestsPerMinute: 10_000,
    tokensPerMinute: 20_000_000,
    concurrentRequests: 200,
  },
  {
    tier: 5,
    fromMicro: 50_000_000_000n,
    requestsPerSecond: 1_000,
    requestsPerMinute: 30_000,
    tokensPerMinute: 100_000_000,
    concurrentRequests: 1_000,
  },
];

export function tierFor(lifetimeTopUpsMicro: bigint, override: number | null, tiers: readonly Tier[] = DEFAULT_TIERS): Tier {
  if (override !== null) {
    const pinned = tiers.find((t) => t.tier === override);
    if (pinned) return pinned;
  }
  let current = tiers[0];
  for (const tier of tiers) if (lifetimeTopUpsMicro >= tier.fromMicro) current = tier;
  return current;
}
