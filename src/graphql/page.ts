import { Field, ObjectType, type ClassType } from 'type-graphql';
import { ApiError } from '../domain/shared/errors';

/** A page of a keyset-paginated list: pass lastId as `after` for the next one while hasMore. */
export interface PageShape<T> {
  data: T[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

/** The one page type: `pageOf(VideoType, 'VideoPage')` is the GraphQL type `VideoPage`. */
export function pageOf<T extends object>(item: ClassType<T>, name: string): ClassType<PageShape<T>> {
  @ObjectType(name, { description: `A page, newest first: pass lastId as after for the next one while hasMore` })
  class Page implements PageShape<T> {
    @Field(() => [item]) data!: T[];
    @Field(() => String, { nullable: true }) firstId!: string | null;
    @Field(() => String, { nullable: true }) lastId!: string | null;
    @Field() hasMore!: boolean;
  }
  return Page;
}

/** A domain page with its items mapped to their GraphQL type. */
export const mapPage = <V, T>(page: PageShape<V>, map: (item: V) => T): PageShape<T> => ({ ...page, data: page.data.map(map) });

/** A lookup by id whose "no such thing in this account" (404) answers null. */
export async function orNull<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'not_found') return null;
    throw error;
  }
}
