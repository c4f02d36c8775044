import { Arg, Ctx, Field, Float, ID, InputType, Int, ObjectType, Query, Resolver, registerEnumType } from 'type-graphql';
import { USAGE_STATUSES, type UsageRecordView } from '../domain/billing/queries';
import { badRequest } from '../domain/shared/errors';
import type { SpendFigures, SpendGroup, SpendGrouping, SpendReport } from '../domain/usage/spend';
import { parseIsoTimestamp, requireSession, type GraphqlContext } from './context';
import { mapPage, orNull, pageOf, type PageShape } from './page';
import { pageSize } from '../domain/shared/pages';

/**
 * Usage of the signed-in account: spend over a period (added up by the server from daily
 * aggregates, exact at any volume) and the request log (one row per request). Money is a string
 * of micro-dollars; counts are exact integers (Float only because they can pass 2³¹); days UTC.
 */
export enum SpendGroupingEnum {
  day = 'day',
  model = 'model',
  key = 'key',
}
registerEnumType(SpendGroupingEnum, { name: 'SpendGrouping', description: 'day: every UTC day of the period, zero-filled; model; key' });

@ObjectType('UsageRecord', { description: 'One request of the request log' })
export class UsageRecordType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) keyId!: string | null;
  @Field(() => String, { nullable: true, description: "The key's current name" }) keyName!: string | null;
  @Field(() => String, { nullable: true, description: 'The x-request-id of the request' }) requestId!: string | null;
  @Field() model!: string;
  @Field(() => Int, { description: 'The whole prompt: cache reads and writes included' }) inputTokens!: number;
  @Field(() => Int, { description: "Read from the vendor's prompt cache" }) cachedInputTokens!: number;
  @Field(() => Int, { description: "Written to the vendor's prompt cache, entries that live 5 minutes" }) cacheWrite5mInputTokens!: number;
  @Field(() => Int, { description: "Written to the vendor's prompt cache, entries that live 1 hour" }) cacheWrite1hInputTokens!: number;
  @Field(() => Int, { description: 'Reasoning included' }) outputTokens!: number;
  @Field(() => Int) reasoningTokens!: number;
  @Field(() => Int) images!: number;
  @Field(() => Int) videoSeconds!: number;
  @Field({ description: "Charged, micro-dollars: the usage's cost, at most the request's hold" }) costMicro!: string;
  @Field({ description: 'What the vendor-reported usage cost beyond the hold, micro-dollars: charged to no one' }) overageMicro!: string;
  @Field({ description: 'ok, partial or failed' }) status!: string;
  @Field(() => Int) latencyMs!: number;
  @Field() createdAt!: string;
}

const UsageRecordPageType = pageOf(UsageRecordType, 'UsageRecordPage');

@InputType({ description: 'Which requests: every field optional; from inclusive, to exclusive (ISO-8601)' })
export class RequestLogFilter {
  @Field(() => ID, { nullable: true }) keyId?: string | null;
  @Field(() => String, { nullable: true, description: 'Service model id' }) model?: string | null;
  @Field(() => String, { nullable: true, description: 'ok, partial or failed' }) status?: string | null;
  @Field(() => String, { nullable: true }) from?: string | null;
  @Field(() => String, { nullable: true }) to?: string | null;
}

@ObjectType('SpendFigures')
export class SpendFiguresType {
  @Field({ description: 'Charged, micro-dollars' }) costMicro!: string;
  @Field({ description: 'Cost beyond holds, charged to no one, micro-dollars' }) overageMicro!: string;
  @Field(() => Float) requests!: number;
  @Field(() => Float) failedRequests!: number;
  @Field(() => Float) inputTokens!: number;
  @Field(() => Float) cachedInputTokens!: number;
  @Field(() => Float, { description: "Written to the vendor's prompt cache (both lifetimes)" }) cacheWriteInputTokens!: number;
  @Field(() => Float) outputTokens!: number;
  @Field(() => Float) reasoningTokens!: number;
  @Field(() => Float) images!: number;
  @Field(() => Float) videoSeconds!: number;
  @Field(() => Int) averageLatencyMs!: number;
}

@ObjectType('SpendGroup')
export class SpendGroupType extends SpendFiguresType {
  @Field(() => String, { nullable: true, description: 'UTC day YYYY-MM-DD (grouped by day)' }) day!: string | null;
  @Field(() => String, { nullable: true, description: 'Grouped by model' }) model!: string | null;
  @Field(() => ID, { nullable: true, description: 'Grouped by key; null for requests made without a key' }) keyId!: string | null;
  @Field(() => String, { nullable: true }) keyName!: string | null;
}

@ObjectType('SpendReport')
export class SpendReportType {
  @Field({ description: 'First day, YYYY-MM-DD, inclusive' }) from!: string;
  @Field({ description: 'Last day, YYYY-MM-DD, inclusive' }) to!: string;
  @Field({ description: 'Always UTC: days start at 00:00 UTC' }) timeZone!: string;
  @Field(() => SpendGroupingEnum) groupBy!: SpendGrouping;
  @Field(() => SpendFiguresType, { description: 'The whole period' }) total!: SpendFiguresType;
  @Field(() => [SpendGroupType], { description: 'By day: every day in order; by model or key: highest cost first' })
  groups!: SpendGroupType[];
}

export const toUsageRecordType = (u: UsageRecordView): UsageRecordType => ({
  id: u.id,
  keyId: u.keyId,
  keyName: u.keyName,
  requestId: u.requestId,
  model: u.model,
  inputTokens: u.inputTokens,
  cachedInputTokens: u.cachedInputTokens,
  cacheWrite5mInputTokens: u.cacheWrite5mInputTokens,
  cacheWrite1hInputTokens: u.cacheWrite1hInputTokens,
  outputTokens: u.outputTokens,
  reasoningTokens: u.reasoningTokens,
  images: u.images,
  videoSeconds: u.videoSeconds,
  costMicro: u.costMicro.toString(),
  overageMicro: u.overageMicro.toString(),
  status: u.status,
  latencyMs: u.latencyMs,
  createdAt: u.createdAt.toISOString(),
});

const toFiguresType = (f: SpendFigures): SpendFiguresType => ({
  ...f,
  costMicro: f.costMicro.toString(),
  overageMicro: f.overageMicro.toString(),
});
const toGroupType = (g: SpendGroup): SpendGroupType => ({
  ...toFiguresType(g),
  day: g.day,
  model: g.model,
  keyId: g.keyId,
  keyName: g.keyName,
});
const toSpendReportType = (r: SpendReport): SpendReportType => ({
  from: r.from,
  to: r.to,
  timeZone: 'UTC',
  groupBy: r.groupBy,
  total: toFiguresType(r.total),
  groups: r.groups.map(toGroupType),
});

/** A request log filter checked, with the GraphQL names of its fields. */
export function parseRequestLogFilter(filter: RequestLogFilter | null | undefined, prefix = 'filter.') {
  const status = filter?.status ?? null;
  if (status !== null && !(USAGE_STATUSES as readonly string[]).includes(status))
    throw badRequest(`${prefix}status must be one of ${USAGE_STATUSES.join(', ')}`, { field: `${prefix}status` });
  const from = parseIsoTimestamp(filter?.from, `${prefix}from`);
  const to = parseIsoTimestamp(filter?.to, `${prefix}to`);
  if (from && to && from > to) throw badRequest(`${prefix}from must not be after ${prefix}to`, { field: `${prefix}from` });
  return { keyId: filter?.keyId ?? null, model: filter?.model ?? null, status, from, to };
}

@Resolver()
export class UsageResolver {
  @Query(() => SpendReportType, {
    description:
      'Spend of the account over UTC days from..to (inclusive; default the 30 days ending today, at most 400), grouped by day, model or key; optionally of one key or model',
  })
  async spend(
    @Arg('groupBy', () => SpendGroupingEnum) groupBy: SpendGrouping,
    @Arg('from', () => String, { nullable: true, description: 'YYYY-MM-DD (UTC)' }) from: string | null,
    @Arg('to', () => String, { nullable: true, description: 'YYYY-MM-DD (UTC)' }) to: string | null,
    @Arg('keyId', () => ID, { nullable: true }) keyId: string | null,
    @Arg('model', () => String, { nullable: true }) model: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<SpendReportType> {
    const session = requireSession(ctx);
    return toSpendReportType(
      await ctx.services.usage.spend(session.accountId, {
        groupBy,
        from: from ?? null,
        to: to ?? null,
        keyId: keyId ?? null,
        model: model ?? null,
      }),
    );
  }

  @Query(() => UsageRecordPageType, { description: 'The request log: one row per request, newest first; after is a usage record id' })
  async requestLog(
    @Arg('first', () => Int, { nullable: true, description: '1 to 100, default 50' }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('filter', () => RequestLogFilter, { nullable: true }) filter: RequestLogFilter | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PageShape<UsageRecordType>> {
    const session = requireSession(ctx);
    const page = await ctx.services.usage.requestLog(session.accountId, {
      limit: pageSize(first, 50),
      after: after ?? null,
      ...parseRequestLogFilter(filter),
    });
    return mapPage(page, toUsageRecordType);
  }

  @Query(() => UsageRecordType, {
    nullable: true,
    description: 'One request of the log, by its usage record id or its request id (x-request-id); null when there is none',
  })
  async requestLogEntry(
    @Arg('id', () => ID, { nullable: true }) id: string | null,
    @Arg('requestId', () => String, { nullable: true }) requestId: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<UsageRecordType | null> {
    const session = requireSession(ctx);
    if ((id == null) === (requestId == null)) throw badRequest('Give exactly one of id and requestId', { field: 'id' });
    const found = await orNull(ctx.services.usage.requestLogEntry(session.accountId, id != null ? { id } : { requestId: requestId! }));
    return found && toUsageRecordType(found);
  }

  @Query(() => UsageRecordPageType, {
    description:
      'Usage records, newest first; after is a usage record id; from inclusive, to exclusive (requestLog with its filter supersedes it)',
  })
  async usageRecords(
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('keyId', () => ID, { nullable: true }) keyId: string | null,
    @Arg('from', () => String, { nullable: true, description: 'ISO-8601' }) from: string | null,
    @Arg('to', () => String, { nullable: true, description: 'ISO-8601' }) to: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PageShape<UsageRecordType>> {
    const session = requireSession(ctx);
    const checked = parseRequestLogFilter({ keyId, from, to }, '');
    const page = await ctx.services.usage.requestLog(session.accountId, { limit: pageSize(first), after: after ?? null, ...checked });
    return mapPage(page, toUsageRecordType);
  }
}
