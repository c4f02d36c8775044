import type { RefusalReason } from './hold-requests';

/*
 * What budget leases need of the database, as a port: take a lease, and apply a batch of
 * lease operations in one transaction. The PostgreSQL adapter (src/infra/pg-lease-store.ts)
 * knows the functions that do it and their wire format; the leases know neither.
 */

/** A lease to take: at least `minMicro`, up to `wantMicro`, under the same checks as a hold. */
export interface LeaseTake {
  id: string;
  accountId: string;
  keyId: string;
  planUserId: string | null;
  month: string;
  minMicro: bigint;
  wantMicro: bigint;
  expiresAt: Date;
  now: Date;
}

/** Granted (what the lease reserves), or why not even `minMicro` fits. */
export type LeaseTaken = { refusal: null; grantedMicro: bigint } | { refusal: RefusalReason };

/** Books one settled (or failed) request out of its lease: its charge, usage record and ledger row. */
export interface SettleOp {
  op: 'settle';
  leaseId: string;
  holdId: string;
  /** What the request's usage costs. */
  costMicro: bigint;
  /** The request's hold: the most it is charged (the lease reserves it); a cost beyond it is overage, charged to no one. */
  holdMicro: bigint;
  model: string;
  /** When it was settled (epoch ms): a number, not a Date, as it waits in the backlog. */
  atMs: number;
  ledgerId: string;
  usageId: string;
  usageStatus: string;
  requestId: string | null;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWrite5mInputTokens: number;
  cacheWrite1hInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  latencyMs: number;
  /** The deployment that served (routed models), else null. */
  deployment: string | null;
}

export type LeaseOp =
  | SettleOp
  /** Gives back part of a lease that still has requests open. */
  | { op: 'trim'; leaseId: string; byMicro: bigint }
  /** Gives a whole lease back. */
  | { op: 'release'; leaseId: string; at: Date }
  | { op: 'renew'; leaseId: string; expiresAt: Date };

export interface LeaseOpResult {
  /** False when the lease was no longer active (swept) or the settlement was already booked. */
  applied: boolean;
  accountId: string | null;
  planBilled: boolean | null;
  /** After a settlement: the balance and the automatic top-up threshold, to top up when below. */
  balanceMicro: bigint | null;
  thresholdMicro: bigint | null;
}

/** Both operations are run again by the adapter when the database aborts them as a deadlock victim. */
export interface LeaseStore {
  takeLease(take: LeaseTake): Promise<LeaseTaken>;
  /** One transaction for the whole batch; one result per operation, in order. */
  applyOps(ops: readonly LeaseOp[]): Promise<LeaseOpResult[]>;
}
