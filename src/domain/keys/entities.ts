import { BigIntType, Entity, Index, ManyToOne, PrimaryKey, Property, type Ref } from '@mikro-orm/core';
import { Account, User } from '../accounts/entities';
import type { KeyKind } from '../shared/principal';

export const KEY_KINDS: readonly KeyKind[] = ['prepaid', 'plan'];

@Entity({ tableName: 'api_keys' })
@Index({ properties: ['account', 'createdAt'] })
export class ApiKey {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade' })
  account!: Ref<Account>;

  /** The user who created it; a plan-billed key draws on this user's plan. */
  @ManyToOne(() => User, { ref: true, nullable: true, deleteRule: 'set null' })
  user: Ref<User> | null = null;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  kind!: KeyKind;

  /** First 12 characters of the secret, to recognise it. */
  @Property({ type: 'text' })
  prefix!: string;

  @Property({ type: 'text', unique: true, hidden: true })
  secretHash!: string;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;

  @Property({ type: new BigIntType('bigint'), nullable: true })
  monthlySpendLimitMicro: bigint | null = null;
}

export type KeyEventKind = 'created' | 'renamed' | 'spend_limit_changed' | 'spend_limit_reached' | 'revoked';

@Entity({ tableName: 'key_events' })
@Index({ properties: ['key', 'id'] })
export class KeyEvent {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => ApiKey, { ref: true, deleteRule: 'cascade' })
  key!: Ref<ApiKey>;

  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade' })
  account!: Ref<Account>;

  @Property({ type: 'text' })
  kind!: KeyEventKind;

  /** null when the system wrote it (for example `spend_limit_reached`). */
  @Property({ type: 'text', nullable: true })
  actorUserId: string | null = null;

  @Property({ type: 'json' })
  data!: Record<string, unknown>;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}
