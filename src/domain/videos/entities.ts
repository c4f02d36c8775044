import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import type { StoredInput, VendorJobHandle } from './ports';

/** Forward only: queued → in_progress → completed | failed, and queued → failed. */
export const VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/**
 * One video job. Its row outlives its file: after retention the file is deleted
 * (`content_deleted_at`) and the row answers `video_expired` for the content; a job its account
 * deleted (`deleted_at`) answers 404 like one that never existed. Status changes
 * are conditional UPDATEs (the VideoStore port), so a stale worker can never move a job backwards.
 */
@Entity({ tableName: 'videos' })
@Index({ properties: ['accountId', 'id'] })
@Index({
  name: 'videos_unfinished_deadline_index',
  expression: `create index "videos_unfinished_deadline_index" on "videos" ("deadline_at") where "status" in ('queued', 'in_progress')`,
})
@Index({
  name: 'videos_retained_expires_at_index',
  expression: `create index "videos_retained_expires_at_index" on "videos" ("expires_at") where "status" = 'completed' and "content_deleted_at" is null`,
})
export class Video {
  @PrimaryKey({ type: 'text' })
  id!: string;

  @Property({ type: 'text' })
  accountId!: string;

  @Property({ type: 'text' })
  keyId!: string;

  /** Service model id. */
  @Property({ type: 'text' })
  model!: string;

  @Property({ type: 'text' })
  prompt!: string;

  @Property({ type: 'integer' })
  seconds!: number;

  @Property({ type: 'text' })
  resolution!: string;

  @Property({ type: 'text' })
  ratio!: string;

  @Property({ type: 'text' })
  status!: VideoStatus;

  @Property({ type: 'integer' })
  progress!: number;

  /** The job's money: settled on completion, released on failure. */
  @Property({ type: 'text' })
  holdId!: string;

  /** Storage keys of the input images (role and media type), deleted when the job ends. */
  @Property({ type: 'jsonb' })
  inputs!: StoredInput[];

  /** The vendor's handle of the running generation (its job id), once started. */
  @Property({ type: 'jsonb', nullable: true })
  vendorJob: VendorJobHandle | null = null;

  /** The deployment that accepted the job, where its polls and download go (null: a model without deployments, or a row from before routing). */
  @Property({ type: 'text', nullable: true })
  deployment: string | null = null;

  @Property({ type: 'text', nullable: true })
  errorCode: string | null = null;

  @Property({ type: 'text', nullable: true })
  errorMessage: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  startedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  completedAt: Date | null = null;

  /** An unfinished job past this fails and releases its money and slot. */
  @Property({ type: 'timestamptz' })
  deadlineAt!: Date;

  /** completed_at + retention; null until completed. */
  @Property({ type: 'timestamptz', nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'bigint', nullable: true })
  contentBytes: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  contentDeletedAt: Date | null = null;

  /** Deleted by its account (`DELETE /v1/videos/{id}`): its file is gone and it answers 404; billing rows stay. */
  @Property({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null = null;
}

/**
 * An `Idempotency-Key` of an account: the hash of the body it was first sent with and the job it
 * created. The primary key makes racing requests agree on one winner.
 */
@Entity({ tableName: 'video_idempotency_keys' })
@Index({ properties: ['createdAt'] })
export class VideoIdempotencyKey {
  @PrimaryKey({ type: 'text' })
  accountId!: string;

  @PrimaryKey({ type: 'text' })
  idempotencyKey!: string;

  @Property({ type: 'text' })
  requestHash!: string;

  @Property({ type: 'text' })
  videoId!: string;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}
