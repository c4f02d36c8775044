import { tierFor, type Tier } from '../limits/tiers';
import { DEFAULT_LIMITS, type LimitsConfig } from '../limits/limits-config';
import type { Clock } from '../shared/clock';
import { badRequest, conflict, notFound } from '../shared/errors';
import type { EventBus } from '../shared/events';
import type { IdGenerator } from '../shared/ids';
import { TOPIC_ACCOUNT_CHANGED } from '../shared/events';
import { hashPassword } from '../shared/secrets';
import type { Account, User } from './entities';
import type { PlanDefinition } from './plans';
import type { AccountStore } from './store';

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

/** Operator provisioning and account reads. */
export class AccountService {
  constructor(
    private readonly store: AccountStore,
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
    const account = await this.store.findAccount(accountId);
    if (!account) throw notFound(`No account '${accountId}'.`);
    return toAccountView(account, this.limits.tiers);
  }

  async getUser(userId: string): Promise<UserView> {
    const user = await this.store.findUser(userId);
    if (!user) throw notFound(`No user '${userId}'.`);
    return toUserView(user);
  }

  async createAccount(name: string): Promise<AccountView> {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 200) throw badRequest('Account name must be 1 to 200 characters', { field: 'account.name' });
    const account = await this.store.insertAccount({ id: this.ids.next('acct'), name: trimmed, createdAt: this.clock.now() });
    return toAccountView(account, this.limits.tiers);
  }

  async createUser(input: { accountId: string; email: string; password: string; plan: string | null }): Promise<UserView> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) throw badRequest('Email must be an email address', { field: 'account.email' });
    if (input.password.length < 8 || input.password.length > 200)
      throw badRequest('Password must be 8 to 200 characters', { field: 'account.password' });
    const inserted = await this.store.insertUser({
      id: this.ids.next('usr'),
      accountId: input.accountId,
      email,
      passwordHash: await hashPassword(input.password),
      planName: input.plan,
      createdAt: this.clock.now(),
    });
    if (inserted.status === 'no_account') throw notFound(`No account '${input.accountId}'.`);
    if (inserted.status === 'no_plan') throw badRequest(`Plan '${input.plan}' does not exist`, { field: 'account.plan' });
    if (inserted.status === 'email_taken') throw conflict(`The email ${email} is already taken`, 'account.email');
    return toUserView(inserted.user);
  }

  async addFunds(accountId: string, amountMicro: bigint): Promise<AccountView> {
    if (amountMicro <= 0n || amountMicro > MAX_FUNDS_MICRO)
      throw badRequest('Amount must be more than $0 and at most $1,000,000', { field: 'funds.amount' });
    const credited = await this.store.credit({
      accountId,
      amountMicro,
      kind: 'top_up',
      note: 'operator top-up',
      ledgerId: this.ids.next('led'),
      at: this.clock.now(),
    });
    if (!credited) throw notFound(`No account '${accountId}'.`);
    this.publishAccountChanged(accountId);
    return this.getAccount(accountId);
  }

  async setAccountTier(accountId: string, tier: number | null): Promise<AccountView> {
    const tiers = this.limits.tiers;
    if (tier !== null && !tiers.some((t) => t.tier === tier)) {
      throw badRequest(`Tier must be one of ${tiers.map((t) => t.tier).join(', ')}`, { field: 'account.tier' });
    }
    if (!(await this.store.setTierOverride(accountId, tier))) throw notFound(`No account '${accountId}'.`);
    this.publishAccountChanged(accountId);
    return this.getAccount(accountId);
  }

  /** Every account, oldest first (operator listings). */
  async listAccounts(): Promise<AccountView[]> {
    const accounts = await this.store.listAccounts();
    return accounts.map((account) => toAccountView(account, this.limits.tiers));
  }

  /** The configured tiers, lowest first. */
  listTiers(): readonly Tier[] {
    return this.limits.tiers;
  }

  /** Every plan in the database (configured ones and any kept from earlier configurations), by name. */
  async listPlans(): Promise<PlanDefinition[]> {
    const plans = await this.store.listPlans();
    return plans.map((p) => ({
      name: p.name,
      models: p.models,
      monthlyAllowanceMicro: p.monthlyAllowanceMicro,
      requestsPerMinute: p.requestsPerMinute,
    }));
  }

  /**
   * Writes the configured plans (created, or updated to match by name). Plans no longer
   * configured stay, since users may still be on them.
   */
  async syncPlans(): Promise<void> {
    for (const plan of this.limits.plans) {
      await this.store.upsertPlan({ ...plan, id: this.ids.next('plan'), createdAt: this.clock.now() });
    }
  }
}
