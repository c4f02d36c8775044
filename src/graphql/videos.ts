import { Arg, Ctx, Field, ID, Int, ObjectType, Query, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import { ApiError } from '../domain/shared/errors';
import { pageSize } from '../domain/shared/pages';
import { subscribeIterator, TOPIC_VIDEO_UPDATED, type VideoView } from '../domain/shared/events';
import { requireSession, sessionFeed, type GraphqlContext } from './context';

@ObjectType('VideoError')
export class VideoErrorType {
  @Field() code!: string;
  @Field() message!: string;
}

@ObjectType('Video', { description: 'A video job of the account; times are ISO-8601' })
export class VideoType {
  @Field(() => ID) id!: string;
  @Field({ description: 'queued, in_progress, completed or failed (only forward)' }) status!: string;
  @Field() model!: string;
  @Field() prompt!: string;
  @Field(() => Int) seconds!: number;
  @Field() resolution!: string;
  @Field() ratio!: string;
  @Field(() => Int, { description: '0 to 100' }) progress!: number;
  @Field() createdAt!: string;
  @Field(() => String, { nullable: true }) completedAt!: string | null;
  @Field(() => String, { nullable: true, description: 'When the file is deleted: completion + 7 days' }) expiresAt!: string | null;
  @Field(() => VideoErrorType, { nullable: true }) error!: VideoErrorType | null;
}

@ObjectType('VideoPage')
export class VideoPageType {
  @Field(() => [VideoType]) data!: VideoType[];
  @Field(() => String, { nullable: true }) firstId!: string | null;
  @Field(() => String, { nullable: true }) lastId!: string | null;
  @Field() hasMore!: boolean;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function toVideoType(video: VideoView): VideoType {
  return {
    id: video.id,
    status: video.status,
    model: video.model,
    prompt: video.prompt,
    seconds: video.seconds,
    resolution: video.resolution,
    ratio: video.ratio,
    progress: video.progress,
    createdAt: iso(video.createdAt)!,
    completedAt: iso(video.completedAt),
    expiresAt: iso(video.expiresAt),
    error: video.error,
  };
}

@Resolver()
export class VideoResolver {
  @Query(() => VideoPageType, { description: 'Videos of the signed-in account, newest first; after is a video id' })
  async videos(
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<VideoPageType> {
    const session = requireSession(ctx);
    const page = await ctx.services.videos.list(session.accountId, { limit: pageSize(first), order: 'desc', after: after ?? null });
    return { ...page, data: page.data.map(toVideoType) };
  }

  @Query(() => VideoType, { nullable: true, description: 'null when the video does not exist in this account' })
  async video(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<VideoType | null> {
    const session = requireSession(ctx);
    try {
      return toVideoType(await ctx.services.videos.get(session.accountId, id));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return null;
      throw error;
    }
  }
}

/** Each status and progress change of the account's videos (from any instance, through the event bus). */
@Resolver()
export class VideoSubscriptionResolver {
  @Subscription(() => VideoType, {
    description: 'Status and progress changes of one video of the signed-in account, or of all of them when id is omitted',
    subscribe: async ({ args, context }: SubscribeResolverData<unknown, { id?: string | null }, GraphqlContext>) => {
      const session = requireSession(context);
      const id = args.id ?? null;
      if (id !== null) await context.services.videos.get(session.accountId, id);
      return sessionFeed(context, session, subscribeIterator(context.services.bus, TOPIC_VIDEO_UPDATED, (video) => video.accountId === session.accountId && (id === null || video.id === id)));
    },
  })
  videoUpdated(@Root() video: VideoView, @Arg('id', () => ID, { nullable: true }) _id: string | null): VideoType {
    return toVideoType(video);
  }
}
