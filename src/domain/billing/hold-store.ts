import type { RefusalReason } from './hold-requests';
import type { UsageCounts } from './usage-counts';

/*
 * What exact holds need of the database, as a port: take a hold under every check at once, and
 * close one (settle or release) with its ledger row and usage record. The PostgreSQL adapter
 * (src/infra/pg-hold-store.ts) knows the functions that do it; the billing service does not.
 */

/** A hold to take: all of `amountMicro` or nothing. */
export interface HoldTake {
  id: string;
  accountId: string;
  keyId: string;
  planUserId: string | null;
  month: string;
  purpose: string;
  model: string;
  amountMicro: bigint;
  expiresAt: Date;
  createdAt: Date;
}

/** The usage record a closed hold writes. */
export interface HoldUsageRecord extends Required<UsageCounts> {
  id: string;
  status: string;
  requestId: string | null;
  latencyMs: number;
  /** The deployment that served a routed model; null otherwise. */
  deployment: string | null;
}

/** Settles (charging `costMicro`, up to the hold) or releases a hold; gives back what it reserved either way. */
export interface HoldClose {
  holdId: string;
  status: 'settled' | 'released';
  /** What the usage costs; the hold's amount caps the charge, the rest is the usage record's overage. */
  costMicro: bigint;
  at: Date;
  /** The ledger row's id, used when a prepaid charge is above zero. */
  ledgerId: string;
  /** Null: no usage record (a release that is not a failure to report). */
  usage: HoldUsageRecord | null;
}

export interface HoldClosed {
  /** False when the hold was already closed (by this call earlier, or by the sweeper). */
  applied: boolean;
  accountId: string | null;
  planBilled: boolean | null;
  /** After a settlement: the balance and the automatic top-up threshold, to top up when below. */
  balanceMicro: bigint | null;
  thresholdMicro: bigint | null;
  /** What was charged (at most the hold), and what the hold did not cover; 0 when not applied. */
  chargedMicro: bigint;
  overageMicro: bigint;
  /** The hold's amount, key and model (null when not applied). */
  holdMicro: bigint | null;
  keyId: string | null;
  model: string | null;
}

export interface HoldStore {
  /** Null when taken; otherwise why not (nothing was taken). */
  takeHold(take: HoldTake): Promise<RefusalReason | null>;
  closeHold(close: HoldClose): Promise<HoldClosed>;
  /** Pushes an active hold's expiry out (long jobs and streams); false when it is no longer active. */
  extendExpiry(holdId: string, expiresAt: Date): Promise<boolean>;
  /**
   * Releases up to `limit` holds whose expiry has passed, in one transaction (nothing charged,
   * their reservations given back); how many. Safe on several instances at once.
   */
  releaseExpired(now: Date, limit: number): Promise<number>;
}
