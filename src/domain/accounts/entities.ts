import { BigIntType, Check, Entity, ManyToOne, OptionalProps, PrimaryKey, Property, type Ref } from '@mikro-orm/core';

/** Owns the prepaid balance, the tier and the keys. */
@Entity({ tableName: 'accounts' })
@Check({ name: 'accounts_reserved_non_negative', expression: 'reserved_micro >= 0' })
export class Account {
  [OptionalProps]?:
    'balanceMicro' | 'reservedMicro' | 'lifetimeTopUpsMicro' | 'tierOverride' | 'autoTopUpThresholdMicro' | 'autoTopUpAmountMicro';

  @PrimaryKey({ type: 'text' })
  id!: string;

  @Property({ type: 'text' })
  name!: string;

  /** Settled money: the sum of the account's ledger. */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  balanceMicro: bigint = 0n;

  /** Sum of active holds; available = balance − reserved. */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  reservedMicro: bigint = 0n;

  /** Drives the automatic tier. */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  lifetimeTopUpsMicro: bigint = 0n;

  /** Tier pinned by the operator; null follows lifetime top-ups. */
  @Property({ type: 'smallint', nullable: true })
  tierOverride: number | null = null;

  @Property({ type: new BigIntType('bigint'), nullable: true })
  autoTopUpThresholdMicro: bigint | null = null;

  @Property({ type: new BigIntType('bigint'), nullable: true })
  autoTopUpAmountMicro: bigint | null = null;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}

/** A subscription plan: models it includes, monthly allowance at API prices, per-user RPM. */
@Entity({ tableName: 'plans' })
export class Plan {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @Property({ type: 'text', unique: true })
  name!: string;

  /** Service model ids the plan includes. */
  @Property({ type: 'json' })
  models!: string[];

  @Property({ type: new BigIntType('bigint') })
  monthlyAllowanceMicro!: bigint;

  @Property({ type: 'integer' })
  requestsPerMinute!: number;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}

@Entity({ tableName: 'users' })
export class User {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade' })
  account!: Ref<Account>;

  /** Stored lower-cased. */
  @Property({ type: 'text', unique: true })
  email!: string;

  @Property({ type: 'text', hidden: true })
  passwordHash!: string;

  @ManyToOne(() => Plan, { ref: true, nullable: true })
  plan: Ref<Plan> | null = null;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}

/** A signed-in session; only the token's hash is stored. */
@Entity({ tableName: 'sessions' })
export class Session {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => User, { ref: true, deleteRule: 'cascade' })
  user!: Ref<User>;

  @Property({ type: 'text', unique: true, hidden: true })
  tokenHash!: string;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;
}
