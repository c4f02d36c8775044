import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { LedgerEntry, type LedgerKind } from '../billing/entities';
import { tierFor, type Tier } from '../limits/tiers';
import { DEFAULT_LIMITS, type LimitsConfig } from '../limits/limits-config';
import type { Clock } from '../shared/clock';
import { badRequest, conflict, notFound } from '../shared/errors';
import type { EventBus } from '../shared/events';
import type { IdGenerator } from '../shared/ids';
import { TOPIC_ACCOUNT_CHANGED } from '../shared/events';
import { hashPassword } from '../shared/secrets';
import { Account, Plan, User } from './entities';
import type { PlanDefinition } from './plans';

export interface AccountView {
  id: string;
  name: string;
  balanceMicro: bigint;
  reservedMicro: bigint;
  availableMicro: bigint;
  lifetimeTopUpsMicro: bigint;
  tier: Tier;
  tierOverride: number | null;
  autoTopUpThresholdMicro: bigint | null;
  autoTopUpAmountMicro: bigint | null;
  createdAt: Date;
}

export interface UserView {
  id: string;
  accountId: string;
  email: string;
  plan: string | null;
  createdAt: Date;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MAX_FUNDS_MICRO = 1_000_000_000_000n; // $1,000,000 in one top-up

export function toAccountView(account: Account, tiers: readonly Tier[]): AccountView {
  return {
    id: account.id,
    name: account.name,
    balanceMicro: account.balanceMicro,
    reservedMicro: account.reservedMicro,
    availableMicro: account.balanceMicro - account.reservedMicro,
    lifetimeTopUpsMicro: account.lifetimeTopUpsMicro,
    tier: tierFor(account.lifetimeTopUpsMicro, account.tierOverride, tiers),
    tierOverride: account.tierOverride,
    autoTopUpThresholdMicro: account.autoTopUpThresholdMicro,
    autoTopUpAmountMicro: account.autoTopUpAmountMicro,
    createdAt: account.createdAt,
  };
}

const toUserView = (user: User): UserView => ({
  id: user.id,
  accountId: user.account.id,
  email: user.email,
  plan: user.plan?.isInitialized() ? user.plan.getEntity().name : user.plan ? user.plan.id : null,
  createdAt: user.createdAt,
});

/**
 * Adds money to an account inside the caller's transaction: one ledger row, the balance and
 * (for top-ups) the lifetime total that drives the tier, in one conditional UPDATE.
 */
export async function creditAccount(em: EntityManager, ids: IdGenerator, clock: Clock, accountId: string, amountMicro: bigint, kind: LedgerKind, note: string | null = null): Promise<void> {
  const lifetime = kind === 'top_up' || kind === 'auto_top_up' ? amountMicro : 0n;
  // em.execute runs inside the caller's transaction (em.getConnection().execute would not).
  const updated = await em.execute(
    'update accounts set balance_micro = balance_micro + ?, lifetime_top_ups_micro = lifetime_top_ups_micro + ? where id = ?',
    [amountMicro.toString(), lifetime.toString(), accountId],
    'run',
  );
  if ((updated as { affectedRows?: number }).affectedRows === 0) throw notFound(`No account '${accountId}'.`);
  em.create(LedgerEntry, { id: ids.next('led'), account: accountId, kind, amountMicro, note, createdAt: clock.now() });
  await em.flush();
}

/** Operator provisioning and account reads. */
export class AccountService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus?: EventBus,
    private readonly limits: LimitsConfig = DEFAULT_LIMITS,
  ) {}

  /** Tiers are cached by admission control; a change to what drives them drops the cache at once. */
  private publishAccountChanged(accountId: string): void {
    this.bus?.publish(TOPIC_ACCOUNT_CHANGED, { accountId });
  }

  async getAccount(accountId: string): Promise<AccountView> {
    const account = await this.orm.em.fork().findOne(Account, accountId);
    if (!account) throw notFound(`No account '${accountId}'.`);
    return toAccountView(account, this.limits.tiers);
  }

  async getUser(userId: string): Promise<UserView> {
    const user = await this.orm.em.fork().findOne(User, userId, { populate: ['plan'] });
    if (!user) throw notFound(`No user '${userId}'.`);
    return toUserView(user);
  }

  async createAccount(name: string): Promise<AccountView> {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 200) throw badRequest('Account name must be 1 to 200 characters', { field: 'account.name' });
    const em = this.orm.em.fork();
    const account = em.create(Account, { id: this.ids.next('acct'), name: trimmed, createdAt: this.clock.now() });
    await em.flush();
    return toAccountView(account, this.limits.tiers);
  }

  async createUser(input: { accountId: string; email: string; password: string; plan: string | null }): Promise<UserView> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) throw badRequest('Email must be an email address', { field: 'account.email' });
    if (input.password.length < 8 || input.password.length > 200) throw badRequest('Password must be 8 to 200 characters', { field: 'account.password' });
    const em = this.orm.em.fork();
    const account = await em.findOne(Account, input.accountId);
    if (!account) throw notFound(`No account '${input.accountId}'.`);
    const plan = input.plan === null ? null : await em.findOne(Plan, { name: input.plan });
    if (input.plan !== null && !plan) throw badRequest(`Plan '${input.plan}' does not exist`, { field: 'account.plan' });
    const user = em.create(User, {
      id: this.ids.next('usr'),
      account,
      email,
      passwordHash: await hashPassword(input.password),
      plan,
      createdAt: this.clock.now(),
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw conflict(`The email ${email} is already taken`, 'account.email');
      throw error;
    }
    return toUserView(user);
  }

  async addFunds(accountId: string, amountMicro: bigint): Promise<AccountView> {
    if (amountMicro <= 0n || amountMicro > MAX_FUNDS_MICRO) throw badRequest('Amount must be more than $0 and at most $1,000,000', { field: 'funds.amount' });
    await this.orm.em.fork().transactional((em) => creditAccount(em, this.ids, this.clock, accountId, amountMicro, 'top_up', 'operator top-up'));
    this.publishAccountChanged(accountId);
    return this.getAccount(accountId);
  }

  async setAccountTier(accountId: string, tier: number | null): Promise<AccountView> {
    const tiers = this.limits.tiers;
    if (tier !== null && !tiers.some((t) => t.tier === tier)) {
      throw badRequest(`Tier must be one of ${tiers.map((t) => t.tier).join(', ')}`, { field: 'account.tier' });
    }
    const em = this.orm.em.fork();
    const count = await em.nativeUpdate(Account, { id: accountId }, { tierOverride: tier });
    if (count === 0) throw notFound(`No account '${accountId}'.`);
    this.publishAccountChanged(accountId);
    return this.getAccount(accountId);
  }

  /** Every account, oldest first (operator listings). */
  async listAccounts(): Promise<AccountView[]> {
    const accounts = await this.orm.em.fork().find(Account, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return accounts.map((account) => toAccountView(account, this.limits.tiers));
  }

  /** The configured tiers, lowest first. */
  listTiers(): readonly Tier[] {
    return this.limits.tiers;
  }

  /** Every plan in the database (configured ones and any kept from earlier configurations), by name. */
  async listPlans(): Promise<PlanDefinition[]> {
    const plans = await this.orm.em.fork().find(Plan, {}, { orderBy: { name: 'asc' } });
    return plans.map((p) => ({ name: p.name, models: p.models, monthlyAllowanceMicro: p.monthlyAllowanceMicro, requestsPerMinute: p.requestsPerMinute }));
  }

  /**
   * Writes the configured plans (created, or updated to match by name). Plans no longer
   * configured stay, since users may still be on them.
   */
  async syncPlans(): Promise<void> {
    const em = this.orm.em.fork();
    for (const plan of this.limits.plans) {
      await em.getConnection().execute(
        `insert into plans (id, name, models, monthly_allowance_micro, requests_per_minute, created_at) values (?, ?, ?::jsonb, ?, ?, ?)
         on conflict (name) do update set models = excluded.models, monthly_allowance_micro = excluded.monthly_allowance_micro, requests_per_minute = excluded.requests_per_minute`,
        [this.ids.next('plan'), plan.name, JSON.stringify(plan.models), plan.monthlyAllowanceMicro.toString(), plan.requestsPerMinute, this.clock.now().toISOString()],
      );
    }
  }
}
