import type { LedgerKind } from '../billing/entities';
import type { Account, Plan, User } from './entities';
import type { PlanDefinition } from './plans';

/**
 * Where accounts, users and plans are kept: the port the account service asks, with one runtime
 * shape per table (the entities). The PostgreSQL adapter is src/infra/pg-account-store.ts.
 */
export interface AccountStore {
  findAccount(accountId: string): Promise<Account | null>;
  /** The user with its plan loaded. */
  findUser(userId: string): Promise<User | null>;
  listAccounts(): Promise<Account[]>;
  insertAccount(account: NewAccount): Promise<Account>;
  /** Creates the user, or says why not (checked in this order: account, plan, email). */
  insertUser(user: NewUser): Promise<UserInsert>;
  /** Adds money with its ledger row, in one transaction; false when there is no such account. */
  credit(credit: AccountCredit): Promise<boolean>;
  /** False when there is no such account. */
  setTierOverride(accountId: string, tier: number | null): Promise<boolean>;
  /** By name. */
  listPlans(): Promise<Plan[]>;
  /** Creates the plan, or updates the one of that name to match (its id and creation time stay). */
  upsertPlan(plan: PlanDefinition & { id: string; createdAt: Date }): Promise<void>;
}

export type NewAccount = Pick<Account, 'id' | 'name' | 'createdAt'>;

export interface NewUser {
  id: string;
  accountId: string;
  /** Already lower-cased. */
  email: string;
  passwordHash: string;
  planName: string | null;
  createdAt: Date;
}

export type UserInsert = { status: 'created'; user: User } | { status: 'no_account' } | { status: 'no_plan' } | { status: 'email_taken' };

export interface AccountCredit {
  accountId: string;
  amountMicro: bigint;
  kind: LedgerKind;
  note: string | null;
  ledgerId: string;
  at: Date;
}
