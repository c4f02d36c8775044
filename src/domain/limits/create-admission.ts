import type { Clock } from '../shared/clock';
import type { EventBus } from '../shared/events';
import { AdmissionService, type AdmissionLogger } from './admission';
import type { LimitStore } from './store';
import { InMemoryLimitStore } from './store-memory';
import { TierLookup, type AccountTierSource } from './tier-lookup';
import type { Tier } from './tiers';

export interface AdmissionSetup {
  /** Where an account's tier inputs are read (cached by the tier lookup). */
  tierSource: AccountTierSource;
  clock: Clock;
  bus: EventBus;
  log: AdmissionLogger;
  /** The store every instance shares (Redis, see src/infra); null: in-process limits (one instance only). */
  sharedStore: LimitStore | null;
  tierCacheTtlMs?: number;
  slotTtlMs?: number;
  tiers?: readonly Tier[];
}

/**
 * Builds admission control: against the shared store when there is one (the limits are shared
 * by every instance, with in-process limits as the fallback while it fails), in-process otherwise.
 */
export function createAdmissionService(setup: AdmissionSetup): AdmissionService {
  const tiers = new TierLookup(setup.tierSource, setup.clock, { ttlMs: setup.tierCacheTtlMs, tiers: setup.tiers, bus: setup.bus });
  const common = { tiers, clock: setup.clock, log: setup.log, slotTtlMs: setup.slotTtlMs };
  if (!setup.sharedStore) return new AdmissionService({ ...common, store: new InMemoryLimitStore() });
  return new AdmissionService({ ...common, store: setup.sharedStore, fallbackStore: new InMemoryLimitStore() });
}
