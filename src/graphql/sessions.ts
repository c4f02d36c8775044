import { Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver, Arg } from 'type-graphql';
import type { AccountView, UserView } from '../domain/accounts/service';
import { requireSession, type GraphqlContext } from './context';

/** Signing in and out, and who is signed in: the user and the account (its balance and tier). */
@ObjectType('TierLimits')
export class TierLimitsType {
  @Field(() => Int) tier!: number;
  @Field(() => Int) requestsPerSecond!: number;
  @Field(() => Int) requestsPerMinute!: number;
  @Field(() => Int) tokensPerMinute!: number;
  @Field(() => Int) concurrentRequests!: number;
}

@ObjectType('Account')
export class AccountType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field({ description: 'Settled balance, micro-dollars' }) balanceMicro!: string;
  @Field({ description: 'Held by requests in flight and by budget leases, micro-dollars' }) reservedMicro!: string;
  @Field({ description: 'balance − reserved, micro-dollars' }) availableMicro!: string;
  @Field() lifetimeTopUpsMicro!: string;
  @Field(() => Int) tier!: number;
  @Field(() => Int, { nullable: true, description: 'Tier pinned by the operator; null follows lifetime top-ups' }) tierOverride!:
    number | null;
  @Field(() => TierLimitsType) tierLimits!: TierLimitsType;
  @Field() createdAt!: string;
}

@ObjectType('User')
export class UserType {
  @Field(() => ID) id!: string;
  @Field(() => ID) accountId!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) plan!: string | null;
  @Field() createdAt!: string;
}

@ObjectType('Session')
export class SessionType {
  @Field() token!: string;
  @Field() expiresAt!: string;
}

export const toAccountType = (a: AccountView): AccountType => ({
  id: a.id,
  name: a.name,
  balanceMicro: a.balanceMicro.toString(),
  reservedMicro: a.reservedMicro.toString(),
  availableMicro: a.availableMicro.toString(),
  lifetimeTopUpsMicro: a.lifetimeTopUpsMicro.toString(),
  tier: a.tier.tier,
  tierOverride: a.tierOverride,
  tierLimits: {
    tier: a.tier.tier,
    requestsPerSecond: a.tier.requestsPerSecond,
    requestsPerMinute: a.tier.requestsPerMinute,
    tokensPerMinute: a.tier.tokensPerMinute,
    concurrentRequests: a.tier.concurrentRequests,
  },
  createdAt: a.createdAt.toISOString(),
});

export const toUserType = (u: UserView): UserType => ({ ...u, createdAt: u.createdAt.toISOString() });

@Resolver()
export class SessionResolver {
  @Mutation(() => SessionType, { description: 'Signs in with email and password; no credential needed' })
  async signIn(@Arg('email') email: string, @Arg('password') password: string, @Ctx() ctx: GraphqlContext): Promise<SessionType> {
    const session = await ctx.services.auth.signIn(email, password, ctx.clientAddress);
    return { token: session.token, expiresAt: session.expiresAt.toISOString() };
  }

  @Mutation(() => Boolean)
  async signOut(@Ctx() ctx: GraphqlContext): Promise<boolean> {
    const session = requireSession(ctx);
    await ctx.services.auth.signOut(session.sessionId);
    return true;
  }

  @Query(() => UserType)
  async me(@Ctx() ctx: GraphqlContext): Promise<UserType> {
    const session = requireSession(ctx);
    return toUserType(await ctx.services.accounts.getUser(session.userId));
  }

  @Query(() => AccountType)
  async account(@Ctx() ctx: GraphqlContext): Promise<AccountType> {
    const session = requireSession(ctx);
    return toAccountType(await ctx.services.accounts.getAccount(session.accountId));
  }
}
