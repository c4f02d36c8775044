import type { Video, VideoIdempotencyKey, VideoStatus } from './entities';
import type { VendorJobHandle } from './ports';

/**
 * Where video jobs and idempotency keys are kept: the port the video service, runner and sweeper
 * ask, with one runtime shape per table (the entities). Every status change moves forward only
 * from the status it names, so a stale or duplicate worker changes nothing and gets null.
 * The PostgreSQL adapter is src/infra/pg-video-store.ts.
 */
export interface VideoStore {
  insert(video: NewVideo): Promise<Video>;
  find(id: string): Promise<Video | null>;
  /** One more than `query.limit`, so the caller knows whether there is more; ids sort by creation. */
  list(accountId: string, query: VideoListQuery): Promise<Video[]>;
  markStarted(id: string, now: Date): Promise<Video | null>;
  /** Binds the job to its vendor job and the deployment that accepted it; false when it already has one (or is no longer running). */
  saveVendorJob(id: string, handle: VendorJobHandle, deployment: string | null): Promise<boolean>;
  /** Names the deployment on the usage record of this hold, if it names none yet. */
  nameUsageDeployment(holdId: string, deployment: string): Promise<void>;
  /** Progress only rises; null when nothing changed. */
  raiseProgress(id: string, progress: number): Promise<Video | null>;
  markCompleted(id: string, now: Date, expiresAt: Date, bytes: number): Promise<Video | null>;
  markFailed(id: string, now: Date, code: string, message: string): Promise<Video | null>;
  /** Completed jobs whose file is past retention and not yet deleted, oldest first. */
  expiredContent(now: Date, limit: number): Promise<Video[]>;
  markContentDeleted(id: string, now: Date): Promise<void>;
  /** Deletes a finished job of the account (its file already removed); null when it is not one, or was deleted before. */
  markDeleted(id: string, accountId: string, now: Date): Promise<Video | null>;
  /** Unfinished jobs past their deadline. */
  overdueIds(now: Date, limit: number): Promise<string[]>;
  /** What each of these holds charged, once settled (a decimal string of micro-dollars), by hold id. */
  charges(holdIds: string[]): Promise<Map<string, string>>;

  /** Inserts the key; true when this request won it (racers agree on one winner). */
  claimIdempotencyKey(claim: VideoIdempotencyKey): Promise<boolean>;
  findIdempotencyClaim(accountId: string, key: string): Promise<VideoIdempotencyKey | null>;
  /** Drops a claim, only if it still names that video (a failed creation, an expired or stale key). */
  dropIdempotencyClaim(claim: Pick<VideoIdempotencyKey, 'accountId' | 'idempotencyKey' | 'videoId'>): Promise<void>;
  purgeIdempotencyKeys(before: Date): Promise<number>;
}

export type NewVideo = Pick<
  Video,
  'id' | 'accountId' | 'keyId' | 'model' | 'prompt' | 'seconds' | 'resolution' | 'ratio' | 'holdId' | 'inputs' | 'createdAt' | 'deadlineAt'
>;

export interface VideoListQuery {
  limit: number;
  order: 'asc' | 'desc';
  /** A video id: the page starts after it in `order`. */
  after: string | null;
  status?: VideoStatus | null;
  /** Words the prompt contains (case-insensitive). */
  search?: string | null;
}
