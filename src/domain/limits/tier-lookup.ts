import type { Clock } from '../shared/clock';
import { TOPIC_ACCOUNT_CHANGED, type EventBus } from '../shared/events';
import { DEFAULT_TIERS, tierFor, type Tier } from './tiers';

/**
 * Published (payload `{ accountId }`) when an account's tier inputs change: a top-up or an
 * operator pinning a tier. Tier caches on every instance sharing the bus drop the account.
 */

export interface AccountTierInputs {
  lifetimeTopUpsMicro: bigint;
  tierOverride: number | null;
}

/** Reads what decides an account's tier; null when the account does not exist (PostgreSQL: src/infra/pg-account-store.ts). */
export type AccountTierSource = (accountId: string) => Promise<AccountTierInputs | null>;

export interface TierLookupOptions {
  /** How long a looked-up tier is trusted; default 5 s. */
  ttlMs?: number;
  tiers?: readonly Tier[];
  /** Subscribed for TOPIC_ACCOUNT_CHANGED, which drops an account's entry at once. */
  bus?: EventBus;
  maxEntries?: number;
}

interface CachedTier {
  tier: Tier;
  loadedAt: number;
}

/**
 * An account's tier, cached in memory so the hot path does not read the database per
 * request: at most one read per account per TTL (concurrent misses share one read). When
 * the database fails and a stale entry exists, the stale tier is used: a tier a few
 * seconds old is better than refusing traffic.
 */
export class TierLookup {
  private readonly cache = new Map<string, CachedTier>();
  private readonly loading = new Map<string, Promise<Tier>>();
  /** Bumped by forget(), so a read that started before an invalidation cannot store a stale tier. */
  private readonly generation = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly tiers: readonly Tier[];
  private readonly maxEntries: number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: AccountTierSource,
    private readonly clock: Clock,
    options: TierLookupOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 5_000;
    this.tiers = options.tiers ?? DEFAULT_TIERS;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.unsubscribe = options.bus
      ? options.bus.subscribe(TOPIC_ACCOUNT_CHANGED, (event) => this.forget(event.accountId))
      : () => undefined;
  }

  async tierOf(accountId: string): Promise<Tier> {
    const fresh = this.cachedTierOf(accountId);
    if (fresh) return fresh;
    const cached = this.cache.get(accountId);
    let pending = this.loading.get(accountId);
    if (!pending) {
      pending = this.load(accountId, cached).finally(() => this.loading.delete(accountId));
      this.loading.set(accountId, pending);
    }
    return pending;
  }

  /** The account's tier while its cached entry is fresh, without waiting (undefined: ask tierOf). */
  cachedTierOf(accountId: string): Tier | undefined {
    const cached = this.cache.get(accountId);
    return cached && this.clock.nowMs() - cached.loadedAt < this.ttlMs ? cached.tier : undefined;
  }

  forget(accountId: string): void {
    this.cache.delete(accountId);
    this.loading.delete(accountId);
    this.generation.set(accountId, (this.generation.get(accountId) ?? 0) + 1);
  }

  close(): void {
    this.unsubscribe();
    this.cache.clear();
  }

  private async load(accountId: string, stale: CachedTier | undefined): Promise<Tier> {
    const generation = this.generation.get(accountId) ?? 0;
    let inputs: AccountTierInputs | null;
    try {
      inputs = await this.source(accountId);
    } catch (error) {
      if (stale) return stale.tier;
      throw error;
    }
    // An account that vanished (deleted) gets the lowest tier rather than an error.
    const tier = inputs ? tierFor(inputs.lifetimeTopUpsMicro, inputs.tierOverride, this.tiers) : this.tiers[0];
    if ((this.generation.get(accountId) ?? 0) === generation) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(accountId, { tier, loadedAt: this.clock.nowMs() });
    }
    return tier;
  }
}
