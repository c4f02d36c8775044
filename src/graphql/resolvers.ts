import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import { parseKeyName, parseSpendLimit } from '../domain/keys/rules';
import type { KeyEventView } from '../domain/shared/events';
import { badRequest, ApiError } from '../domain/shared/errors';
import { subscribeIterator, TOPIC_KEY_EVENTS } from '../domain/shared/events';
import { requireMicroString } from '../domain/shared/money';
import { pageSize } from '../domain/shared/pages';
import { parseKeyCreation, requireOperator, requireSession, sessionFeed, type GraphqlContext } from './context';
import { toAccountType, toApiKeyType, toKeyEventType, toUserType } from './mappers';
import {
  AccountType, AddFundsInput, ApiKeyType, CreateAccountInput, CreatedKeyType, CreateKeyInput, CreateUserInput,
  KeyEventPageType, KeyEventType, SessionType, SetAccountTierInput, UpdateKeyInput, UserType,
} from './types';

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

@Resolver()
export class KeyResolver {
  @Query(() => [ApiKeyType])
  async keys(@Ctx() ctx: GraphqlContext): Promise<ApiKeyType[]> {
    const session = requireSession(ctx);
    return (await ctx.services.keys.listKeys(session.accountId)).map(toApiKeyType);
  }

  @Query(() => ApiKeyType, { nullable: true, description: 'null when the key does not exist in this account' })
  async key(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<ApiKeyType | null> {
    const session = requireSession(ctx);
    try {
      return toApiKeyType(await ctx.services.keys.getKey(session.accountId, id));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return null;
      throw error;
    }
  }

  @Query(() => KeyEventPageType, { description: 'Newest first; after is an event id' })
  async keyEvents(
    @Arg('keyId', () => ID) keyId: string,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<KeyEventPageType> {
    const session = requireSession(ctx);
    const page = await ctx.services.keys.listEvents(session.accountId, keyId, { limit: pageSize(first), after: after ?? null });
    return { data: page.data.map(toKeyEventType), firstId: page.firstId, lastId: page.lastId, hasMore: page.hasMore };
  }

  @Mutation(() => CreatedKeyType)
  async createKey(@Arg('input') input: CreateKeyInput, @Ctx() ctx: GraphqlContext): Promise<CreatedKeyType> {
    const session = requireSession(ctx);
    const created = await ctx.services.keys.createKey(session, parseKeyCreation(input));
    return { key: toApiKeyType(created.key), secret: created.secret };
  }

  @Mutation(() => ApiKeyType)
  async updateKey(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateKeyInput, @Ctx() ctx: GraphqlContext): Promise<ApiKeyType> {
    const session = requireSession(ctx);
    if (input.name === null) throw badRequest('Key name cannot be null', { field: 'key.name' });
    const updated = await ctx.services.keys.updateKey(session, id, {
      name: input.name === undefined ? undefined : parseKeyName(input.name),
      monthlySpendLimitMicro: input.monthlySpendLimitMicro === undefined ? undefined : parseSpendLimit(input.monthlySpendLimitMicro),
    });
    return toApiKeyType(updated);
  }

  @Mutation(() => ApiKeyType)
  async revokeKey(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<ApiKeyType> {
    const session = requireSession(ctx);
    return toApiKeyType(await ctx.services.keys.revokeKey(session, id));
  }
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
      await ctx.services.accounts.createUser({ accountId: input.accountId, email: input.email, password: input.password, plan: input.plan ?? null }),
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

/** Subscriptions live apart so their field names can match the queries'. */
@Resolver()
export class KeySubscriptionResolver {
  @Subscription(() => KeyEventType, {
    description: 'Live key events of one key of the signed-in account',
    subscribe: async ({ args, context }: SubscribeResolverData<unknown, { keyId: string }, GraphqlContext>) => {
      const session = requireSession(context);
      await context.services.keys.assertOwnKey(session.accountId, args.keyId);
      return sessionFeed(context, session, subscribeIterator(context.services.bus, TOPIC_KEY_EVENTS, (e) => e.keyId === args.keyId && e.accountId === session.accountId));
    },
  })
  keyEvents(@Root() event: KeyEventView, @Arg('keyId', () => ID) _keyId: string): KeyEventType {
    return toKeyEventType(event);
  }
}
