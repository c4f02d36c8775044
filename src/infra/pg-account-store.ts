import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { Account, Plan, User } from '../domain/accounts/entities';
import type { AccountCredit, AccountStore, NewAccount, NewUser, UserInsert } from '../domain/accounts/store';
import type { PlanDefinition } from '../domain/accounts/plans';
import type { AccountTierSource } from '../domain/limits/tier-lookup';
import { creditAccount } from './pg-auto-top-up-store';
import { retryDeadlocks } from './sql';

/** The AccountStore on PostgreSQL (through MikroORM; raw statements where one round trip does it). */
export class PgAccountStore implements AccountStore {
  constructor(private readonly orm: MikroORM) {}

  findAccount(accountId: string): Promise<Account | null> {
    return this.orm.em.fork().findOne(Account, accountId);
  }

  findUser(userId: string): Promise<User | null> {
    return this.orm.em.fork().findOne(User, userId, { populate: ['plan'] });
  }

  listAccounts(): Promise<Account[]> {
    return this.orm.em.fork().find(Account, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  async insertAccount(account: NewAccount): Promise<Account> {
    const em = this.orm.em.fork();
    const row = em.create(Account, account);
    await em.flush();
    return row;
  }

  async insertUser(input: NewUser): Promise<UserInsert> {
    const em = this.orm.em.fork();
    const account = await em.findOne(Account, input.accountId);
    if (!account) return { status: 'no_account' };
    const plan = input.planName === null ? null : await em.findOne(Plan, { name: input.planName });
    if (input.planName !== null && !plan) return { status: 'no_plan' };
    const user = em.create(User, {
      id: input.id,
      account,
      email: input.email,
      passwordHash: input.passwordHash,
      plan,
      createdAt: input.createdAt,
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) return { status: 'email_taken' };
      throw error;
    }
    return { status: 'created', user };
  }

  // A deadlock rolls the credit and its ledger row back together, so running it again is safe.
  credit(credit: AccountCredit): Promise<boolean> {
    return retryDeadlocks(() => this.orm.em.fork().transactional((tx) => creditAccount(tx, credit)));
  }

  async setTierOverride(accountId: string, tier: number | null): Promise<boolean> {
    return (await this.orm.em.fork().nativeUpdate(Account, { id: accountId }, { tierOverride: tier })) > 0;
  }

  listPlans(): Promise<Plan[]> {
    return this.orm.em.fork().find(Plan, {}, { orderBy: { name: 'asc' } });
  }

  async upsertPlan(plan: PlanDefinition & { id: string; createdAt: Date }): Promise<void> {
    await this.orm.em.getConnection().execute(
      `insert into plans (id, name, models, monthly_allowance_micro, requests_per_minute, created_at) values (?, ?, ?::jsonb, ?, ?, ?)
       on conflict (name) do update set models = excluded.models, monthly_allowance_micro = excluded.monthly_allowance_micro, requests_per_minute = excluded.requests_per_minute`,
      [
        plan.id,
        plan.name,
        JSON.stringify(plan.models),
        plan.monthlyAllowanceMicro.toString(),
        plan.requestsPerMinute,
        plan.createdAt.toISOString(),
      ],
    );
  }
}

/** What decides an account's tier, read for admission control's tier cache. */
export function pgAccountTierSource(orm: MikroORM): AccountTierSource {
  return async (accountId) => {
    const account = await orm.em.fork().findOne(Account, accountId, { fields: ['lifetimeTopUpsMicro', 'tierOverride'] });
    return account ? { lifetimeTopUpsMicro: account.lifetimeTopUpsMicro, tierOverride: account.tierOverride } : null;
  };
}
