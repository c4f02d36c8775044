import { Arg, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { AutoTopUpSettings } from '../domain/billing/auto-top-up';
import type { BillingService } from '../domain/billing/service';
import type { HoldView, KeyMonthSpendView } from '../domain/billing/queries';
import { LEDGER_KINDS, type LedgerEntryView } from '../domain/billing/ledger';
import type { LedgerKind } from '../domain/billing/entities';
import { mapPage, pageOf, type PageShape } from './page';
import { pageSize } from '../domain/shared/pages';
import { parseMonthKey } from '../domain/billing/queries';
import { badRequest } from '../domain/shared/errors';
import { requireMicroString } from '../domain/shared/money';
import { requireSession, type GraphqlContext } from './context';

/**
 * Billing for the signed-in session: holds in flight, key month spend, the ledger and the
 * automatic top-up setting. Money is a string of micro-dollars; time ISO-8601.
 */
export interface BillingGraphqlContext extends GraphqlContext {
  services: GraphqlContext['services'] & { billing: BillingService };
}

@ObjectType('Hold', { description: 'A reservation taken before a provider call, until it is settled or released' })
export class HoldType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) keyId!: string | null;
  @Field({ description: 'text, image, video, or lease (an instance budget lease out of which text requests are served)' }) purpose!: string;
  @Field() model!: string;
  @Field({ description: 'UTC month (YYYY-MM) whose counters the hold reserved against' }) month!: string;
  @Field({ description: 'Reserved, micro-dollars' }) amountMicro!: string;
  @Field({ description: 'true when it draws on the plan allowance, not the balance' }) planBilled!: boolean;
  @Field() createdAt!: string;
  @Field({ description: 'Released by the sweeper if still active then' }) expiresAt!: string;
}

@ObjectType('KeyMonthSpend')
export class KeyMonthSpendType {
  @Field(() => ID) keyId!: string;
  @Field({ description: 'UTC month, YYYY-MM' }) month!: string;
  @Field(() => String, { nullable: true }) limitMicro!: string | null;
  @Field({ description: 'Settled charges' }) settledMicro!: string;
  @Field({ description: 'Held by requests in flight and by budget leases (given back within about a second of the last request)' })
  reservedMicro!: string;
  @Field({ description: 'settled + in flight: what the limit is checked against' }) spentMicro!: string;
  @Field(() => String, { nullable: true, description: 'limit − spent; null without a limit' }) remainingMicro!: string | null;
  @Field(() => String, { nullable: true, description: 'First refusal by the limit this month' }) limitReachedAt!: string | null;
  @Field({ description: 'First instant of the next UTC month' }) resetsAt!: string;
}

@ObjectType('LedgerEntry', { description: 'A change of the balance' })
export class LedgerEntryType {
  @Field(() => ID) id!: string;
  @Field({ description: 'top_up, auto_top_up, charge or adjustment' }) kind!: string;
  @Field({ description: 'Signed micro-dollars: top-ups positive, charges negative' }) amountMicro!: string;
  @Field(() => ID, { nullable: true }) keyId!: string | null;
  @Field(() => String, { nullable: true, description: 'For a charge, the model charged' }) note!: string | null;
  @Field() createdAt!: string;
}

const LedgerEntryPageType = pageOf(LedgerEntryType, 'LedgerEntryPage');

const toLedgerEntryType = (e: LedgerEntryView): LedgerEntryType => ({
  ...e,
  amountMicro: e.amountMicro.toString(),
  createdAt: e.createdAt.toISOString(),
});

@ObjectType('AutoTopUp')
export class AutoTopUpType {
  @Field() enabled!: boolean;
  @Field(() => String, { nullable: true, description: 'Top up when a settlement leaves the balance below this' }) thresholdMicro!:
    string | null;
  @Field(() => String, { nullable: true }) amountMicro!: string | null;
}

@InputType()
export class AutoTopUpInput {
  @Field(() => String, {
    nullable: true,
    description: '0 to 100000000000 ($100,000); null with amountMicro null turns automatic top-up off',
  })
  thresholdMicro?: string | null;
  @Field(() => String, { nullable: true, description: '1000000 ($1) to 100000000000 ($100,000)' })
  amountMicro?: string | null;
}

const toHoldType = (h: HoldView): HoldType => ({
  id: h.id,
  keyId: h.keyId,
  purpose: h.purpose,
  model: h.model,
  month: h.month,
  amountMicro: h.amountMicro.toString(),
  planBilled: h.planUserId !== null,
  createdAt: h.createdAt.toISOString(),
  expiresAt: h.expiresAt.toISOString(),
});

const toKeyMonthSpendType = (s: KeyMonthSpendView): KeyMonthSpendType => ({
  keyId: s.keyId,
  month: s.month,
  limitMicro: s.limitMicro?.toString() ?? null,
  settledMicro: s.settledMicro.toString(),
  reservedMicro: s.reservedMicro.toString(),
  spentMicro: s.spentMicro.toString(),
  remainingMicro: s.remainingMicro?.toString() ?? null,
  limitReachedAt: s.limitReachedAt?.toISOString() ?? null,
  resetsAt: s.resetsAt.toISOString(),
});

const toAutoTopUpType = (s: AutoTopUpSettings): AutoTopUpType => ({
  enabled: s.thresholdMicro !== null && s.amountMicro !== null,
  thresholdMicro: s.thresholdMicro?.toString() ?? null,
  amountMicro: s.amountMicro?.toString() ?? null,
});

/** Both set: on; both null (or no input): off; one of them alone is refused. */
function parseAutoTopUpInput(input: AutoTopUpInput | null): { thresholdMicro: bigint; amountMicro: bigint } | null {
  const threshold = input?.thresholdMicro ?? null;
  const amount = input?.amountMicro ?? null;
  if (threshold === null && amount === null) return null;
  if (threshold === null)
    throw badRequest('Top-up threshold is required with a top-up amount (neither turns automatic top-up off)', {
      field: 'autoTopUp.threshold',
    });
  if (amount === null)
    throw badRequest('Top-up amount is required with a top-up threshold (neither turns automatic top-up off)', {
      field: 'autoTopUp.amount',
    });
  return {
    thresholdMicro: requireMicroString(threshold, 'Top-up threshold', 'autoTopUp.threshold'),
    amountMicro: requireMicroString(amount, 'Top-up amount', 'autoTopUp.amount'),
  };
}

@Resolver()
export class BillingResolver {
  @Query(() => [HoldType], { description: 'Holds of the account in flight, newest first (at most 200)' })
  async holds(@Ctx() ctx: BillingGraphqlContext): Promise<HoldType[]> {
    const session = requireSession(ctx);
    return (await ctx.services.billing.listActiveHolds(session.accountId)).map(toHoldType);
  }

  @Query(() => KeyMonthSpendType, { description: 'Spend of one key in a UTC month (default: the current one)' })
  async keyMonthSpend(
    @Arg('keyId', () => ID) keyId: string,
    @Arg('month', () => String, { nullable: true, description: 'YYYY-MM' }) month: string | null,
    @Ctx() ctx: BillingGraphqlContext,
  ): Promise<KeyMonthSpendType> {
    const session = requireSession(ctx);
    const monthKey = month === null || month === undefined ? undefined : parseMonthKey(month);
    return toKeyMonthSpendType(await ctx.services.billing.getKeyMonthSpend(session.accountId, keyId, monthKey));
  }

  @Query(() => LedgerEntryPageType, {
    description: "The account's ledger (top-ups, charges, automatic top-ups), newest first; after is a ledger entry id",
  })
  async ledger(
    @Arg('first', () => Int, { nullable: true, description: '1 to 100, default 50' }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('kind', () => String, { nullable: true, description: 'top_up, auto_top_up, charge or adjustment' }) kind: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PageShape<LedgerEntryType>> {
    const session = requireSession(ctx);
    if (kind != null && !(LEDGER_KINDS as readonly string[]).includes(kind))
      throw badRequest(`kind must be one of ${LEDGER_KINDS.join(', ')}`, { field: 'kind' });
    const page = await ctx.services.usage.ledger(session.accountId, {
      limit: pageSize(first, 50),
      after: after ?? null,
      kind: (kind ?? null) as LedgerKind | null,
    });
    return mapPage(page, toLedgerEntryType);
  }

  @Query(() => AutoTopUpType, { description: 'Automatic top-up setting of the account' })
  async autoTopUp(@Ctx() ctx: BillingGraphqlContext): Promise<AutoTopUpType> {
    const session = requireSession(ctx);
    return toAutoTopUpType(await ctx.services.billing.getAutoTopUp(session.accountId));
  }

  @Mutation(() => AutoTopUpType, { description: 'Sets automatic top-up; input null (or both fields null) turns it off' })
  async setAutoTopUp(
    @Arg('input', () => AutoTopUpInput, { nullable: true }) input: AutoTopUpInput | null,
    @Ctx() ctx: BillingGraphqlContext,
  ): Promise<AutoTopUpType> {
    const session = requireSession(ctx);
    const settings = parseAutoTopUpInput(input ?? null);
    return toAutoTopUpType(await ctx.services.billing.setAutoTopUp(session.accountId, settings));
  }
}
