import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { parseKeyCreation, requireOperator, type GraphqlContext } from './context';
import { toApiKeyType } from './mappers';
import { CreateAccountKeyInput, CreatedKeyType, PlanType, TierType } from './types';

/** Operator: the configured plans and tiers, and keys created for an account without a session. */
@Resolver()
export class LimitsResolver {
  @Query(() => [PlanType], { description: 'Operator: every plan, by name' })
  async plans(@Ctx() ctx: GraphqlContext): Promise<PlanType[]> {
    requireOperator(ctx);
    return (await ctx.services.accounts.listPlans()).map((p) => ({ name: p.name, models: p.models, monthlyAllowanceMicro: p.monthlyAllowanceMicro.toString(), requestsPerMinute: p.requestsPerMinute }));
  }

  @Query(() => [TierType], { description: 'Operator: the rate-limit tiers, lowest first' })
  async tiers(@Ctx() ctx: GraphqlContext): Promise<TierType[]> {
    requireOperator(ctx);
    return ctx.services.accounts.listTiers().map((t) => ({
      tier: t.tier,
      lifetimeTopUpsFromMicro: t.fromMicro.toString(),
      requestsPerSecond: t.requestsPerSecond,
      requestsPerMinute: t.requestsPerMinute,
      tokensPerMinute: t.tokensPerMinute,
      concurrentRequests: t.concurrentRequests,
    }));
  }

  @Mutation(() => CreatedKeyType, { description: 'Operator: creates a key for an account (optionally owned by one of its users); the secret is shown once' })
  async createAccountKey(@Arg('input') input: CreateAccountKeyInput, @Ctx() ctx: GraphqlContext): Promise<CreatedKeyType> {
    requireOperator(ctx);
    const created = await ctx.services.keys.createKeyAsOperator(
      { accountId: input.accountId, userId: input.userId ?? null },
      parseKeyCreation(input),
    );
    return { key: toApiKeyType(created.key), secret: created.secret };
  }
}
