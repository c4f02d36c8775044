import {
  Arg,
  Ctx,
  Field,
  ID,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
  Subscription,
  registerEnumType,
  type SubscribeResolverData,
} from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { KeyKind } from '../domain/shared/principal';
import { parseKeyName, parseSpendLimit } from '../domain/keys/rules';
import type { KeyView } from '../domain/keys/service';
import type { KeyEventView } from '../domain/shared/events';
import { badRequest } from '../domain/shared/errors';
import { subscribeIterator, TOPIC_KEY_EVENTS } from '../domain/shared/events';
import { parseKeyCreation, requireSession, sessionFeed, type GraphqlContext } from './context';
import { mapPage, orNull, pageOf, type PageShape } from './page';
import { pageSize } from '../domain/shared/pages';

/**
 * API keys of the signed-in account: list, page and search them, create, rename, limit and
 * revoke them, and their events (paged, and live). Money is a string of micro-dollars; time
 * ISO-8601. These types are not the entities, so no stray field can expose a key hash.
 */
export enum KeyKindEnum {
  prepaid = 'prepaid',
  plan = 'plan',
}
registerEnumType(KeyKindEnum, { name: 'KeyKind', description: 'prepaid: billed from the balance; plan: draws on the user plan allowance' });

export enum KeyStatusEnum {
  active = 'active',
  revoked = 'revoked',
}
registerEnumType(KeyStatusEnum, { name: 'KeyStatus' });

@ObjectType('ApiKey')
export class ApiKeyType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => KeyKindEnum) kind!: KeyKind;
  @Field() prefix!: string;
  @Field() createdAt!: string;
  @Field(() => String, { nullable: true }) lastUsedAt!: string | null;
  @Field(() => String, { nullable: true }) expiresAt!: string | null;
  @Field(() => String, { nullable: true }) revokedAt!: string | null;
  @Field(() => String, { nullable: true }) monthlySpendLimitMicro!: string | null;
  @Field({ description: 'Settled charges this UTC month, micro-dollars' }) monthSpentMicro!: string;
}

@ObjectType('CreatedKey')
export class CreatedKeyType {
  @Field(() => ApiKeyType) key!: ApiKeyType;
  @Field({ description: 'Shown once; only a hash is stored' }) secret!: string;
}

@ObjectType('KeyEvent')
export class KeyEventType {
  @Field(() => ID) id!: string;
  @Field(() => ID) keyId!: string;
  @Field() kind!: string;
  @Field() createdAt!: string;
  @Field(() => String, { nullable: true }) actorUserId!: string | null;
  @Field(() => GraphQLJSONObject) data!: Record<string, unknown>;
}

const ApiKeyPageType = pageOf(ApiKeyType, 'ApiKeyPage');
const KeyEventPageType = pageOf(KeyEventType, 'KeyEventPage');

@InputType()
export class CreateKeyInput {
  @Field() name!: string;
  @Field(() => KeyKindEnum, { nullable: true }) kind?: KeyKind | null;
  @Field(() => String, { nullable: true }) monthlySpendLimitMicro?: string | null;
  @Field(() => String, { nullable: true, description: 'ISO-8601' }) expiresAt?: string | null;
}

@InputType()
export class UpdateKeyInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'null removes the limit; omit to keep it' }) monthlySpendLimitMicro?: string | null;
}

const iso = (at: Date | null): string | null => at?.toISOString() ?? null;

export const toApiKeyType = (k: KeyView): ApiKeyType => ({
  id: k.id,
  name: k.name,
  kind: k.kind,
  prefix: k.prefix,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: iso(k.lastUsedAt),
  expiresAt: iso(k.expiresAt),
  revokedAt: iso(k.revokedAt),
  monthlySpendLimitMicro: k.monthlySpendLimitMicro?.toString() ?? null,
  monthSpentMicro: k.monthSpentMicro.toString(),
});

export const toKeyEventType = (e: KeyEventView): KeyEventType => ({
  id: e.id,
  keyId: e.keyId,
  kind: e.kind,
  createdAt: e.createdAt.toISOString(),
  actorUserId: e.actorUserId,
  data: e.data,
});

@Resolver()
export class KeyResolver {
  @Query(() => [ApiKeyType], { description: 'Every key of the account, newest first (keyPage pages and searches them)' })
  async keys(@Ctx() ctx: GraphqlContext): Promise<ApiKeyType[]> {
    const session = requireSession(ctx);
    return (await ctx.services.keys.listKeys(session.accountId)).map(toApiKeyType);
  }

  @Query(() => ApiKeyPageType, {
    description: "The account's keys, newest first; search matches the name or prefix (case-insensitive); after is a key id",
  })
  async keyPage(
    @Arg('first', () => Int, { nullable: true, description: '1 to 100, default 20' }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('search', () => String, { nullable: true }) search: string | null,
    @Arg('status', () => KeyStatusEnum, { nullable: true, description: 'active (not revoked) or revoked; all when omitted' })
    status: KeyStatusEnum | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PageShape<ApiKeyType>> {
    const session = requireSession(ctx);
    const text = search?.trim() || null;
    if (text !== null && text.length > 100) throw badRequest('search must be at most 100 characters', { field: 'search' });
    const page = await ctx.services.keys.listKeyPage(session.accountId, {
      limit: pageSize(first),
      after: after ?? null,
      search: text,
      status: status ?? null,
    });
    return mapPage(page, toApiKeyType);
  }

  @Query(() => ApiKeyType, { nullable: true, description: 'null when the key does not exist in this account' })
  async key(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<ApiKeyType | null> {
    const session = requireSession(ctx);
    const key = await orNull(ctx.services.keys.getKey(session.accountId, id));
    return key && toApiKeyType(key);
  }

  @Query(() => KeyEventPageType, { description: 'Newest first; after is an event id' })
  async keyEvents(
    @Arg('keyId', () => ID) keyId: string,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PageShape<KeyEventType>> {
    const session = requireSession(ctx);
    const page = await ctx.services.keys.listEvents(session.accountId, keyId, { limit: pageSize(first), after: after ?? null });
    return mapPage(page, toKeyEventType);
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

/** Subscriptions live apart so their field names can match the queries'. */
@Resolver()
export class KeySubscriptionResolver {
  @Subscription(() => KeyEventType, {
    description: 'Live key events of one key of the signed-in account',
    subscribe: async ({ args, context }: SubscribeResolverData<unknown, { keyId: string }, GraphqlContext>) => {
      const session = requireSession(context);
      await context.services.keys.assertOwnKey(session.accountId, args.keyId);
      return sessionFeed(
        context,
        session,
        subscribeIterator(context.services.bus, TOPIC_KEY_EVENTS, (e) => e.keyId === args.keyId && e.accountId === session.accountId),
      );
    },
  })
  keyEvents(@Root() event: KeyEventView, @Arg('keyId', () => ID) _keyId: string): KeyEventType {
    return toKeyEventType(event);
  }
}
