import { badRequest, notFound } from '../shared/errors';
import type { Hold, HoldPurpose, HoldStatus, UsageRecord } from './entities';
import type { UsageCounts } from './usage-counts';

/**
 * Read side of billing: holds in flight, key month spend, usage records, the money audit. The
 * views and the BillingReads port here; the SQL in src/infra/pg-billing-reads.ts.
 */
export interface HoldView {
  id: string;
  accountId: string;
  keyId: string | null;
  /** Set for plan-billed holds. */
  planUserId: string | null;
  month: string;
  purpose: HoldPurpose;
  model: string;
  amountMicro: bigint;
  status: HoldStatus;
  chargedMicro: bigint | null;
  expiresAt: Date;
  createdAt: Date;
  closedAt: Date | null;
}

export interface KeyMonthSpendView {
  keyId: string;
  month: string;
  limitMicro: bigint | null;
  settledMicro: bigint;
  reservedMicro: bigint;
  /** settled + in flight: what the limit is checked against. */
  spentMicro: bigint;
  /** limit − spent (never negative); null without a limit. */
  remainingMicro: bigint | null;
  limitReachedAt: Date | null;
  resetsAt: Date;
}

export interface UsageRecordView extends Required<UsageCounts> {
  id: string;
  keyId: string | null;
  /** The key's current name (null without a key). */
  keyName: string | null;
  holdId: string;
  requestId: string | null;
  model: string;
  /** Charged: the usage's cost, at most the request's hold. */
  costMicro: bigint;
  /** What the usage cost beyond the hold: charged to no one (docs/billing.md, Overage). */
  overageMicro: bigint;
  status: string;
  latencyMs: number;
  createdAt: Date;
}

export interface UsageRecordPage {
  data: UsageRecordView[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

export interface UsageFilter {
  limit: number;
  /** A usage record id of this account; the page starts after it (newest first). */
  after: string | null;
  keyId: string | null;
  /** A service model id. */
  model?: string | null;
  /** ok, partial or failed. */
  status?: string | null;
  /** Inclusive. */
  from: Date | null;
  /** Exclusive. */
  to: Date | null;
}

/** Both sums must hold at rest: balance = Σ ledger, reserved = Σ active holds (prepaid). */
export interface AccountAudit {
  balanceMicro: bigint;
  ledgerSumMicro: bigint;
  reservedMicro: bigint;
  activeHoldsMicro: bigint;
  consistent: boolean;
}

const MONTH_KEY = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** First instant of the UTC month after the month key `2026-11` (2026-12-01T00:00:00Z). */
export function monthResetsAt(month: string): Date {
  const match = MONTH_KEY.exec(month);
  if (!match) throw new RangeError(`not a month key: ${month}`);
  return new Date(Date.UTC(Number(match[1]), Number(match[2]), 1));
}

export function parseMonthKey(value: string): string {
  if (!MONTH_KEY.test(value)) throw badRequest('Month must be a UTC month written YYYY-MM', { field: 'usage.month' });
  return value;
}

/** What the read side asks of the database; answers are the entities, or sums. */
export interface BillingReads {
  findHold(holdId: string): Promise<Hold | null>;
  /** Newest first, at most `limit`. */
  listActiveHolds(accountId: string, limit: number): Promise<Hold[]>;
  /** Null when the key is not the account's. */
  keyMonthSpend(
    accountId: string,
    keyId: string,
    month: string,
  ): Promise<{ limitMicro: bigint | null; settledMicro: bigint; reservedMicro: bigint; limitReachedAt: Date | null } | null>;
  keyBelongsTo(accountId: string, keyId: string): Promise<boolean>;
  /** When the account's usage record was written; null when it is not one of the account's. */
  usageRecordCreatedAt(accountId: string, recordId: string): Promise<Date | null>;
  /**
   * Newest first (created_at, then id), `filter.limit + 1` of them; `after` positions the page
   * after that record (its creation time looked up by the caller), so pages stay stable.
   */
  usageRecords(accountId: string, filter: UsageFilter, after: { id: string; createdAt: Date } | null): Promise<UsageRecordView[]>;
  /** One usage record of the account, by its id or its request id; null when there is none. */
  findUsageRecord(accountId: string, by: { id: string } | { requestId: string }): Promise<UsageRecordView | null>;
  /** Null when there is no such account. */
  accountSums(accountId: string): Promise<Omit<AccountAudit, 'consistent'> | null>;
  /** Balance less holds in flight; null when there is no such account. */
  availableMicro(accountId: string): Promise<bigint | null>;
  /** The user's plan allowance (0 without a plan) and what the month used and holds of it. */
  planAllowanceUse(userId: string, month: string): Promise<{ allowanceMicro: bigint; usedMicro: bigint }>;
  /** The account's automatic top-up setting (both null: off); null when there is no such account. */
  autoTopUp(accountId: string): Promise<{ thresholdMicro: bigint | null; amountMicro: bigint | null } | null>;
}

export const toHoldView = (hold: Hold): HoldView => ({
  id: hold.id,
  accountId: hold.account.id,
  keyId: hold.key?.id ?? null,
  planUserId: hold.planUser?.id ?? null,
  month: hold.month,
  purpose: hold.purpose,
  model: hold.model,
  amountMicro: hold.amountMicro,
  status: hold.status,
  chargedMicro: hold.chargedMicro,
  expiresAt: hold.expiresAt,
  createdAt: hold.createdAt,
  closedAt: hold.closedAt,
});

/** A usage record as the request log shows it, with its key's current name. */
/** The fields of a usage record a view shows (an entity, or a row mapped without the identity map). */
export type UsageRecordFields = Omit<UsageRecord, 'account'>;

export const toUsageView = (record: UsageRecordFields, keyName: string | null): UsageRecordView => ({
  id: record.id,
  keyId: record.keyId,
  keyName,
  holdId: record.holdId,
  requestId: record.requestId,
  model: record.model,
  inputTokens: record.inputTokens,
  cachedInputTokens: record.cachedInputTokens,
  cacheWrite5mInputTokens: record.cacheWrite5mInputTokens,
  cacheWrite1hInputTokens: record.cacheWrite1hInputTokens,
  outputTokens: record.outputTokens,
  reasoningTokens: record.reasoningTokens,
  images: record.images,
  videoSeconds: record.videoSeconds,
  costMicro: record.costMicro,
  overageMicro: record.overageMicro,
  status: record.status,
  latencyMs: record.latencyMs,
  createdAt: record.createdAt,
});

/** The month's spend of a key as both planes show it (remaining never negative; null without a limit). */
export function keyMonthSpendView(
  keyId: string,
  month: string,
  spend: { limitMicro: bigint | null; settledMicro: bigint; reservedMicro: bigint; limitReachedAt: Date | null },
): KeyMonthSpendView {
  const spentMicro = spend.settledMicro + spend.reservedMicro;
  const { limitMicro } = spend;
  return {
    keyId,
    month,
    limitMicro,
    settledMicro: spend.settledMicro,
    reservedMicro: spend.reservedMicro,
    spentMicro,
    remainingMicro: limitMicro === null ? null : limitMicro > spentMicro ? limitMicro - spentMicro : 0n,
    limitReachedAt: spend.limitReachedAt,
    resetsAt: monthResetsAt(month),
  };
}

export const USAGE_STATUSES = ['ok', 'partial', 'failed'] as const;

/** The refusals of a usage-record query, before it runs: a key of another account, a foreign cursor. */
export async function checkUsageFilter(
  reads: BillingReads,
  accountId: string,
  filter: UsageFilter,
): Promise<{ id: string; createdAt: Date } | null> {
  if (filter.keyId !== null && !(await reads.keyBelongsTo(accountId, filter.keyId))) throw notFoundKey(filter.keyId);
  if (filter.after === null) return null;
  const createdAt = await reads.usageRecordCreatedAt(accountId, filter.after);
  if (!createdAt) throw badRequest('The page cursor must be the id of a usage record of this account', { field: 'page.after' });
  return { id: filter.after, createdAt };
}

/** A page of the request log: the filter checked, then one keyset read. */
export async function readUsagePage(reads: BillingReads, accountId: string, filter: UsageFilter): Promise<UsageRecordPage> {
  const after = await checkUsageFilter(reads, accountId, filter);
  const records = await reads.usageRecords(accountId, filter, after);
  const data = records.slice(0, filter.limit);
  return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: records.length > filter.limit };
}

const notFoundKey = (keyId: string) => notFound(`No key '${keyId}' in this account.`, { field: 'usage.keyId' });
