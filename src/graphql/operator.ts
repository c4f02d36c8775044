import { Arg, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { KeyKind } from '../domain/shared/principal';
import { requireMicroString } from '../domain/shared/money';
import { parseKeyCreation, requireOperator, type GraphqlContext } from './context';
import { CreatedKeyType, KeyKindEnum, toApiKeyType } from './keys';
import { AccountType, toAccountType, toUserType, UserType } from './sessions';

/** The operator's operations (TOLLGATE_ADMIN_TOKEN): accounts, users, funds, tiers, plans and keys made for an account. */
@InputType()
export class CreateAccountInput {
  @Field() name!: string;
}

@InputType()
export class CreateUserInput {
  @Field(() => ID) accountId!: string;
  @Field() email!: string;
  @Field() password!: string;
  @Field(() => String, { nullable: true }) plan?: string | null;
}

@InputType()
export class AddFundsInput {
  @Field(() => ID) accountId!: string;
  @Field() amountMicro!: string;
}

@InputType()
export class SetAccountTierInput {
  @Field(() => ID) accountId!: string;
  @Field(() => Int, { nullable: true }) tier?: number | null;
}

@InputType()
export class CreateAccountKeyInput {
  @Field(() => ID) accountId!: string;
  @Field(() => ID, { nullable: true, description: 'Owner of the key; required for plan keys (they draw on this user plan)' }) userId?:
    string | null;
  @Field() name!: string;
  @Field(() => KeyKindEnum, { nullable: true }) kind?: KeyKind | null;
  @Field(() => String, { nullable: true }) monthlySpendLimitMicro?: string | null;
  @Field(() => String, { nullable: true, description: 'ISO-8601' }) expiresAt?: string | null;
}
@ObjectType('Plan')
export class PlanType {
  @Field() name!: string;
  @Field(() => [String], { description: 'Service model ids the plan includes' }) models!: string[];
  @Field({ description: 'Monthly allowance valued at API prices, micro-dollars' }) monthlyAllowanceMicro!: string;
  @Field(() => Int, { description: 'Per-user requests per rolling minute' }) requestsPerMinute!: number;
}

@ObjectType('Tier')
export class TierType {
  @Field(() => Int) tier!: number;
  @Field({ description: 'Lifetime top-ups from which the tier applies, micro-dollars' }) lifetimeTopUpsFromMicro!: string;
  @Field(() => Int) requestsPerSecond!: number;
  @Field(() => Int) requestsPerMinute!: number;
  @Field(() => Int) tokensPerMinute!: number;
  @Field(() => Int) concurrentRequests!: number;
}

@Resolver()
export class OperatorResolver {
  @Mutation(() => AccountType, { description: 'Operator: creates an account' })
  async createAccount(@Arg('input') input: CreateAccountInput, @Ctx() ctx: GraphqlContext): Promise<AccountType> {
    requireOperator(ctx);
    return toAccountType(await ctx.services.accounts.createAccount(input.name));
  }

  @Mutation(() => UserType, { description: 'Operator: creates a user of an account, optionally on a plan' })
  async createUser(@Arg('input') input: CreateUserInput, @Ctx() ctx: GraphqlContext): Promise<UserType> {
    requireOperator(ctx);
    return toUserType(
      await ctx.services.accounts.createUser({
        accountId: input.accountId,
        email: input.email,
        password: input.password,
        plan: input.plan ?? null,
      }),
    );
  }

  @Mutation(() => AccountType, { description: 'Operator: records a top-up (raises lifetime top-ups and so the tier)' })
  async addFunds(@Arg('input') input: AddFundsInput, @Ctx() ctx: GraphqlContext): Promise<AccountType> {
    requireOperator(ctx);
    const amount = requireMicroString(input.amountMicro, 'Amount', 'funds.amount');
    return toAccountType(await ctx.services.accounts.addFunds(input.accountId, amount));
  }

  @Mutation(() => AccountType, { description: 'Operator: pins the tier; tier null returns to automatic' })
  async setAccountTier(@Arg('input') input: SetAccountTierInput, @Ctx() ctx: GraphqlContext): Promise<AccountType> {
    requireOperator(ctx);
    return toAccountType(await ctx.services.accounts.setAccountTier(input.accountId, input.tier ?? null));
  }

  @Query(() => AccountType, { description: 'Operator: any account by id' })
  async accountById(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<AccountType> {
    requireOperator(ctx);
    return toAccountType(await ctx.services.accounts.getAccount(id));
  }
}

/** Operator: the configured plans and tiers, and keys created for an account without a session. */
@Resolver()
export class LimitsResolver {
  @Query(() => [PlanType], { description: 'Operator: every plan, by name' })
  async plans(@Ctx() ctx: GraphqlContext): Promise<PlanType[]> {
    requireOperator(ctx);
    return (await ctx.services.accounts.listPlans()).map((p) => ({
      name: p.name,
      models: p.models,
      monthlyAllowanceMicro: p.monthlyAllowanceMicro.toString(),
      requestsPerMinute: p.requestsPerMinute,
    }));
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

  @Mutation(() => CreatedKeyType, {
    description: 'Operator: creates a key for an account (optionally owned by one of its users); the secret is shown once',
  })
  async createAccountKey(@Arg('input') input: CreateAccountKeyInput, @Ctx() ctx: GraphqlContext): Promise<CreatedKeyType> {
    requireOperator(ctx);
    const created = await ctx.services.keys.createKeyAsOperator(
      { accountId: input.accountId, userId: input.userId ?? null },
      parseKeyCreation(input),
    );
    return { key: toApiKeyType(created.key), secret: created.secret };
  }
}
