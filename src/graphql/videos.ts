import {
  Arg,
  Ctx,
  Field,
  ID,
  Int,
  ObjectType,
  Query,
  Resolver,
  Root,
  Subscription,
  registerEnumType,
  type SubscribeResolverData,
} from 'type-graphql';
import { badRequest } from '../domain/shared/errors';
import { pageSize } from '../domain/shared/pages';
import { subscribeIterator, TOPIC_VIDEO_UPDATED, type VideoView } from '../domain/shared/events';
import { requireSession, sessionFeed, type GraphqlContext } from './context';
import { mapPage, orNull, pageOf, type PageShape } from './page';

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
  @Field(() => String, { nullable: true, description: 'Charged, micro-dollars, once completed' }) costMicro!: string | null;
}

const VideoPageType = pageOf(VideoType, 'VideoPage');

export enum VideoStatusEnum {
  queued = 'queued',
  in_progress = 'in_progress',
  completed = 'completed',
  failed = 'failed',
}
registerEnumType(VideoStatusEnum, { name: 'VideoStatus' });

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
    costMicro: video.chargedMicro,
  };
}

@Resolver()
export class VideoResolver {
  @Query(() => VideoPageType, {
    description: 'Videos of the signed-in account, newest first; after is a video id; search matches words of the prompt',
  })
  async videos(
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('status', () => VideoStatusEnum, { nullable: true }) status: VideoStatusEnum | null,
    @Arg('search', () => String, { nullable: true }) search: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PageShape<VideoType>> {
    const session = requireSession(ctx);
    const text = search?.trim() || null;
    if (text !== null && text.length > 200) throw badRequest('search must be at most 200 characters', { field: 'search' });
    const page = await ctx.services.videos.list(session.accountId, {
      limit: pageSize(first),
      order: 'desc',
      after: after ?? null,
      status: status ?? null,
      search: text,
    });
    return mapPage(page, toVideoType);
  }

  @Query(() => VideoType, { nullable: true, description: 'null when the video does not exist in this account' })
  async video(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<VideoType | null> {
    const session = requireSession(ctx);
    const video = await orNull(ctx.services.videos.get(session.accountId, id));
    return video && toVideoType(video);
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
      return sessionFeed(
        context,
        session,
        subscribeIterator(
          context.services.bus,
          TOPIC_VIDEO_UPDATED,
          (video) => video.accountId === session.accountId && (id === null || video.id === id),
        ),
      );
    },
  })
  videoUpdated(@Root() video: VideoView, @Arg('id', () => ID, { nullable: true }) _id: string | null): VideoType {
    return toVideoType(video);
  }
}
