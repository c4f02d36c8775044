import { BigIntType, Check, Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique, type Ref } from '@mikro-orm/core';
import { Account, User } from '../accounts/entities';
import { ApiKey } from '../keys/entities';

/**
 * The money tables follow the reservation scheme (docs/billing.md):
 * a Hold is taken with conditional UPDATEs on `accounts.reserved_micro`,
 * `key_month_spend.reserved_micro` and `plan_month_usage.reserved_micro` before a provider
 * is called, and settled once into a ledger row + usage record afterwards.
 */
export type HoldStatus = 'active' | 'settled' | 'released';
/** `lease`: an instance's budget lease (leases.ts), out of which request holds are carved in memory. */
export type HoldPurpose = 'text' | 'image' | 'video' | 'lease';

@Entity({ tableName: 'holds' })
@Check({ name: 'holds_amount_non_negative', expression: 'amount_micro >= 0' })
// Only active holds are indexed by expiry (migration ActiveHoldsIndex): no query reads closed ones by it.
@Index({
  name: 'holds_active_expires_at_index',
  expression: `create index "holds_active_expires_at_index" on "holds" ("expires_at") where "status" = 'active'`,
})
export class Hold {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade' })
  account!: Ref<Account>;

  @ManyToOne(() => ApiKey, { ref: true, nullable: true, deleteRule: 'set null' })
  key: Ref<ApiKey> | null = null;

  /** Set for plan-billed holds: the user whose allowance is reserved. */
  @ManyToOne(() => User, { ref: true, nullable: true, deleteRule: 'set null' })
  planUser: Ref<User> | null = null;

  /** UTC month (`2026-11`) whose counters this hold reserved against. */
  @Property({ type: 'text' })
  month!: string;

  @Property({ type: 'text' })
  purpose!: HoldPurpose;

  @Property({ type: 'text' })
  model!: string;

  @Property({ type: new BigIntType('bigint') })
  amountMicro!: bigint;

  @Property({ type: 'text' })
  status!: HoldStatus;

  @Property({ type: new BigIntType('bigint'), nullable: true })
  chargedMicro: bigint | null = null;

  /** A hold still active after this is presumed orphaned by a dead process and swept. */
  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  closedAt: Date | null = null;
}

/**
 * The account of a ledger entry or usage record, without a foreign key (migration
 * AppendOnlyAccountRefs). Both tables are append-only, and every writer takes the account id
 * from a row it has just locked or updated: a lease or hold (tollgate_apply_lease_ops,
 * tollgate_close_hold) or the account itself (creditAccount, which answers 404 first);
 * accounts are never deleted. The foreign-key checks proved nothing more, and were a sizeable
 * part of PostgreSQL's work per settlement (docs/billing.md has the figures).
 */
const ACCOUNT_REF_WITHOUT_FK = { ref: true, createForeignKeyConstraint: false } as const;

export type LedgerKind = 'top_up' | 'auto_top_up' | 'charge' | 'adjustment';

/** Every balance change; `accounts.balance_micro` equals the sum of these. */
@Entity({ tableName: 'ledger_entries' })
@Index({ properties: ['account', 'id'] })
export class LedgerEntry {
  @PrimaryKey({ type: 'text' })
  id!: string;

  /** No foreign key: see ACCOUNT_REF_WITHOUT_FK. */
  @ManyToOne(() => Account, ACCOUNT_REF_WITHOUT_FK)
  account!: Ref<Account>;

  @Property({ type: 'text' })
  kind!: LedgerKind;

  /** Signed: top-ups positive, charges negative. */
  @Property({ type: new BigIntType('bigint') })
  amountMicro!: bigint;

  /** Unique, so a hold can be charged at most once (idempotent settlement). */
  @Property({ type: 'text', nullable: true, unique: true })
  holdId: string | null = null;

  @Property({ type: 'text', nullable: true })
  keyId: string | null = null;

  @Property({ type: 'text', nullable: true })
  note: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}

/** Per key and UTC month: settled charges and holds in flight, checked against the key's limit. */
@Entity({ tableName: 'key_month_spend' })
@Check({ name: 'key_month_spend_non_negative', expression: 'reserved_micro >= 0 and settled_micro >= 0' })
export class KeyMonthSpend {
  [OptionalProps]?: 'settledMicro' | 'reservedMicro' | 'limitReachedAt';

  @ManyToOne(() => ApiKey, { primary: true, ref: true, deleteRule: 'cascade' })
  key!: Ref<ApiKey>;

  @PrimaryKey({ type: 'text' })
  month!: string;

  @Property({ type: new BigIntType('bigint'), default: 0 })
  settledMicro: bigint = 0n;

  @Property({ type: new BigIntType('bigint'), default: 0 })
  reservedMicro: bigint = 0n;

  /** Set by the first refusal of the month, so `spend_limit_reached` is written once. */
  @Property({ type: 'timestamptz', nullable: true })
  limitReachedAt: Date | null = null;
}

/** Per user and UTC month: plan allowance used and reserved. */
@Entity({ tableName: 'plan_month_usage' })
@Check({ name: 'plan_month_usage_non_negative', expression: 'reserved_micro >= 0 and used_micro >= 0' })
export class PlanMonthUsage {
  [OptionalProps]?: 'usedMicro' | 'reservedMicro';

  @ManyToOne(() => User, { primary: true, ref: true, deleteRule: 'cascade' })
  user!: Ref<User>;

  @PrimaryKey({ type: 'text' })
  month!: string;

  @Property({ type: new BigIntType('bigint'), default: 0 })
  usedMicro: bigint = 0n;

  @Property({ type: new BigIntType('bigint'), default: 0 })
  reservedMicro: bigint = 0n;
}

/**
 * One row per settled (or failed) request: the request log. Partitioned by UTC month of
 * created_at (migration RequestLog), so every unique key holds created_at.
 */
@Entity({ tableName: 'usage_records' })
@Unique({ name: 'usage_records_hold_id_created_at_unique', properties: ['holdId', 'createdAt'] })
@Index({ name: 'usage_records_account_time_index', properties: ['account', 'createdAt', 'id'] })
@Index({ name: 'usage_records_key_time_index', properties: ['keyId', 'createdAt', 'id'] })
export class UsageRecord {
  [OptionalProps]?:
    | 'inputTokens'
    | 'cachedInputTokens'
    | 'cacheWrite5mInputTokens'
    | 'cacheWrite1hInputTokens'
    | 'outputTokens'
    | 'reasoningTokens'
    | 'images'
    | 'videoSeconds'
    | 'keyId'
    | 'requestId'
    | 'overageMicro';

  @PrimaryKey({ type: 'text' })
  id!: string;

  /** No foreign key: see ACCOUNT_REF_WITHOUT_FK. */
  @ManyToOne(() => Account, ACCOUNT_REF_WITHOUT_FK)
  account!: Ref<Account>;

  @Property({ type: 'text', nullable: true })
  keyId: string | null = null;

  /** Unique with created_at: a request's usage record is its settlement's claim (charged at most once). */
  @Property({ type: 'text' })
  holdId!: string;

  @Property({ type: 'text', nullable: true })
  requestId: string | null = null;

  @Property({ type: 'text' })
  model!: string;

  @Property({ type: 'integer', default: 0 })
  inputTokens: number = 0;

  @Property({ type: 'integer', default: 0 })
  cachedInputTokens: number = 0;

  /** Parts of inputTokens written to the vendor's prompt cache, by entry lifetime. */
  @Property({ type: 'integer', default: 0, fieldName: 'cache_write_5m_input_tokens' })
  cacheWrite5mInputTokens: number = 0;

  @Property({ type: 'integer', default: 0, fieldName: 'cache_write_1h_input_tokens' })
  cacheWrite1hInputTokens: number = 0;

  @Property({ type: 'integer', default: 0 })
  outputTokens: number = 0;

  @Property({ type: 'integer', default: 0 })
  reasoningTokens: number = 0;

  @Property({ type: 'integer', default: 0 })
  images: number = 0;

  @Property({ type: 'integer', default: 0 })
  videoSeconds: number = 0;

  /** What was charged: the usage's cost, at most the request's hold. */
  @Property({ type: new BigIntType('bigint') })
  costMicro!: bigint;

  /** What the usage cost beyond the hold (a vendor reporting more than the request could use): charged to no one, in no ledger row. */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  overageMicro: bigint = 0n;

  /** `ok`, `partial` (cut stream, some images), `failed`. */
  @Property({ type: 'text' })
  status!: string;

  @Property({ type: 'integer' })
  latencyMs!: number;

  @PrimaryKey({ type: 'timestamptz' })
  createdAt!: Date;

  /** The deployment that served a routed model (docs/routing.md); null otherwise. */
  @Property({ type: 'text', nullable: true })
  deployment?: string | null;
}

/** A fresh options object per column: MikroORM writes the field name into the one it is given. */
const counter = (fieldName?: string) => ({ type: new BigIntType('bigint'), default: 0, ...(fieldName ? { fieldName } : {}) });

/**
 * What the dashboard adds up, per account, UTC day, key ('' for none) and model: kept by a
 * trigger on usage_records (tollgate_usage_daily_add, one upsert per inserting statement), so
 * spend over any period reads a few rows per day instead of every request.
 */
@Entity({ tableName: 'usage_daily' })
export class UsageDaily {
  @PrimaryKey({ type: 'text' })
  accountId!: string;

  @PrimaryKey({ type: 'date' })
  day!: string;

  @PrimaryKey({ type: 'text' })
  keyId!: string;

  @PrimaryKey({ type: 'text' })
  model!: string;

  @Property(counter()) requests!: bigint;
  @Property(counter()) failedRequests!: bigint;
  @Property(counter()) costMicro!: bigint;
  @Property(counter()) overageMicro!: bigint;
  @Property(counter()) inputTokens!: bigint;
  @Property(counter()) cachedInputTokens!: bigint;
  @Property(counter('cache_write_5m_input_tokens')) cacheWrite5mInputTokens!: bigint;
  @Property(counter('cache_write_1h_input_tokens')) cacheWrite1hInputTokens!: bigint;
  @Property(counter()) outputTokens!: bigint;
  @Property(counter()) reasoningTokens!: bigint;
  @Property(counter()) images!: bigint;
  @Property(counter()) videoSeconds!: bigint;
  @Property(counter()) latencyMs!: bigint;
}
