import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { KeyKind } from '../domain/shared/principal';

/**
 * GraphQL object types, kept apart from the MikroORM entities so that no stray field (a key
 * hash, a password hash) can ever be exposed. Money is a string of micro-dollars; time ISO-8601.
 */
export enum KeyKindEnum {
  prepaid = 'prepaid',
  plan = 'plan',
}
registerEnumType(KeyKindEnum, { name: 'KeyKind', description: 'prepaid: billed from the balance; plan: draws on the user plan allowance' });

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
  @Field(() => Int, { nullable: true, description: 'Tier pinned by the operator; null follows lifetime top-ups' }) tierOverride!: number | null;
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

@ObjectType('KeyEventPage')
export class KeyEventPageType {
  @Field(() => [KeyEventType]) data!: KeyEventType[];
  @Field(() => String, { nullable: true }) firstId!: string | null;
  @Field(() => String, { nullable: true }) lastId!: string | null;
  @Field() hasMore!: boolean;
}

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

@InputType()
export class CreateAccountKeyInput {
  @Field(() => ID) accountId!: string;
  @Field(() => ID, { nullable: true, description: 'Owner of the key; required for plan keys (they draw on this user plan)' }) userId?: string | null;
  @Field() name!: string;
  @Field(() => KeyKindEnum, { nullable: true }) kind?: KeyKind | null;
  @Field(() => String, { nullable: true }) monthlySpendLimitMicro?: string | null;
  @Field(() => String, { nullable: true, description: 'ISO-8601' }) expiresAt?: string | null;
}
