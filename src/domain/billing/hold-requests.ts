import type { KeyKind } from '../shared/principal';
import type { AutoTopUpOutcome } from './auto-top-up';
import type { HoldPurpose } from './entities';
import type { UsageCounts, UsageStatus } from './usage-counts';

/* What the hold operations of BillingService (and of budget leases) take and answer. */

/** Who a hold is for; `KeyPrincipal` (shared/principal.ts) fits as is. */
export interface BillingPrincipal {
  accountId: string;
  keyId: string;
  kind: KeyKind;
  /** The key's user; required for plan-billed keys (whose plan allowance is drawn on). */
  userId: string | null;
}

export interface HoldRequest {
  principal: BillingPrincipal;
  purpose: HoldPurpose;
  /** Service model id, recorded on the hold, ledger and usage record. */
  model: string;
  /** The largest the request can cost (pricing.ts: textHoldMicro, mediaCostMicro). */
  amountMicro: bigint;
  /** How long the hold lives without settlement before the sweeper releases it. */
  ttlMs?: number;
}

/**
 * Default hold lifetimes: longer than any request of the kind can run (a text stream, a
 * synchronous image batch, a video job); a video job may also `extendHold` while it runs.
 * A hold swept while its request still runs cannot be charged afterwards (settlement finds it
 * released): the TTL errs long.
 */
export const DEFAULT_HOLD_TTL_MS: Readonly<Record<HoldPurpose, number>> = {
  text: 10 * 60_000,
  image: 15 * 60_000,
  video: 60 * 60_000,
  /** Renewed every third of it while the instance lives (leases.ts). */
  lease: 60_000,
};

export interface SettleInput {
  /**
   * Exactly the provider-reported cost (pricing.ts: textChargeMicro, mediaCostMicro of what was
   * delivered). Charged up to the hold; any excess is recorded as overage, never charged.
   */
  costMicro: bigint;
  usage?: UsageCounts;
  /** `partial`: a cut stream, some of n images; charged for what was delivered. Default `ok`. */
  status?: Exclude<UsageStatus, 'failed'>;
  latencyMs?: number;
  requestId?: string | null;
  /** The deployment that served a routed model (docs/routing.md), for the usage record. */
  deployment?: string | null;
}

export interface ReleaseInput {
  /** Writes a usage record with status `failed` and cost 0 (for the usage report). */
  recordFailure?: boolean;
  usage?: UsageCounts;
  latencyMs?: number;
  requestId?: string | null;
  /** The deployment that served a routed model (docs/routing.md), for the usage record. */
  deployment?: string | null;
}

export interface HoldOutcome {
  holdId: string;
  /** false when the hold was already settled or released: nothing changed (idempotent). */
  applied: boolean;
  status: 'settled' | 'released';
  chargedMicro: bigint;
  /** Set when this settlement left the balance below the auto top-up threshold. */
  autoTopUp: AutoTopUpOutcome | null;
}

export type RefusalReason = 'balance' | 'key_limit' | 'plan_allowance';

/**
 * A settlement whose cost was above its hold: a vendor reported more usage than the request
 * could have had (docs/billing.md, Overage). The request was charged `chargedMicro` (its hold);
 * `overageMicro` was recorded on its usage record and charged to no one.
 */
export interface Overage {
  requestId: string | null;
  accountId: string;
  keyId: string | null;
  model: string;
  holdMicro: bigint;
  costMicro: bigint;
  chargedMicro: bigint;
  overageMicro: bigint;
}

/** Told of every overage, once, when its settlement is fixed (a warning line and a metric; see server.ts). */
export type OverageObserver = (overage: Overage) => void;
