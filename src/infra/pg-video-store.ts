import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Video, VideoIdempotencyKey } from '../domain/videos/entities';
import type { VendorJobHandle } from '../domain/videos/ports';
import type { NewVideo, VideoListQuery, VideoStore } from '../domain/videos/store';
import { sqlRows } from './sql';

/**
 * The VideoStore on PostgreSQL: the SQL of the videos tables. Status changes are conditional
 * UPDATEs on the status they move from, and RETURNING says whether this caller made the change.
 * Rows come back as the entities (MikroORM maps the columns), the one shape of each table.
 */
export class PgVideoStore implements VideoStore {
  constructor(private readonly orm: MikroORM) {}

  async insert(video: NewVideo): Promise<Video> {
    return (
      await this.videos(
        `insert into videos (id, account_id, key_id, model, prompt, seconds, resolution, ratio, status, progress, hold_id, inputs, created_at, deadline_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?::jsonb, ?, ?) returning *`,
        [
          video.id,
          video.accountId,
          video.keyId,
          video.model,
          video.prompt,
          video.seconds,
          video.resolution,
          video.ratio,
          video.holdId,
          JSON.stringify(video.inputs),
          video.createdAt.toISOString(),
          video.deadlineAt.toISOString(),
        ],
      )
    )[0]!;
  }

  async find(id: string): Promise<Video | null> {
    return (await this.videos('select * from videos where id = ?', [id]))[0] ?? null;
  }

  list(accountId: string, query: VideoListQuery): Promise<Video[]> {
    const direction = query.order === 'asc' ? 'asc' : 'desc';
    const where = ['account_id = ?', 'deleted_at is null'];
    const params: (string | number)[] = [accountId];
    if (query.after !== null) {
      where.push(direction === 'asc' ? 'id > ?' : 'id < ?');
      params.push(query.after);
    }
    if (query.status != null) {
      where.push('status = ?');
      params.push(query.status);
    }
    if (query.search != null) {
      where.push(`prompt ilike ? escape '\\'`);
      params.push(`%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    }
    params.push(query.limit + 1);
    return this.videos(`select * from videos where ${where.join(' and ')} order by id ${direction} limit ?`, params);
  }

  async charges(holdIds: string[]): Promise<Map<string, string>> {
    if (holdIds.length === 0) return new Map();
    const rows = await sqlRows<{ id: string; charged_micro: string }>(
      this.em(),
      `select id, charged_micro::text as charged_micro from holds where id in (${holdIds.map(() => '?').join(', ')}) and charged_micro is not null`,
      holdIds,
    );
    return new Map(rows.map((row) => [row.id, row.charged_micro]));
  }

  async markStarted(id: string, now: Date): Promise<Video | null> {
    return (
      (
        await this.videos(`update videos set status = 'in_progress', started_at = ? where id = ? and status = 'queued' returning *`, [
          now.toISOString(),
          id,
        ])
      )[0] ?? null
    );
  }

  async saveVendorJob(id: string, handle: VendorJobHandle, deployment: string | null): Promise<boolean> {
    const rows = await sqlRows(
      this.em(),
      `update videos set vendor_job = ?::jsonb, deployment = ? where id = ? and status = 'in_progress' and vendor_job is null returning id`,
      [JSON.stringify(handle), deployment, id],
    );
    return rows.length > 0;
  }

  async nameUsageDeployment(holdId: string, deployment: string): Promise<void> {
    await sqlRows(this.em(), 'update usage_records set deployment = ? where hold_id = ? and deployment is null returning id', [
      deployment,
      holdId,
    ]);
  }

  async raiseProgress(id: string, progress: number): Promise<Video | null> {
    return (
      (
        await this.videos(`update videos set progress = ? where id = ? and status = 'in_progress' and progress < ? returning *`, [
          progress,
          id,
          progress,
        ])
      )[0] ?? null
    );
  }

  async markCompleted(id: string, now: Date, expiresAt: Date, bytes: number): Promise<Video | null> {
    const rows = await this.videos(
      `update videos set status = 'completed', progress = 100, completed_at = ?, expires_at = ?, content_bytes = ? where id = ? and status = 'in_progress' returning *`,
      [now.toISOString(), expiresAt.toISOString(), bytes, id],
    );
    return rows[0] ?? null;
  }

  async markFailed(id: string, now: Date, code: string, message: string): Promise<Video | null> {
    const rows = await this.videos(
      `update videos set status = 'failed', completed_at = ?, error_code = ?, error_message = ? where id = ? and status in ('queued', 'in_progress') returning *`,
      [now.toISOString(), code, message, id],
    );
    return rows[0] ?? null;
  }

  expiredContent(now: Date, limit: number): Promise<Video[]> {
    return this.videos(
      `select * from videos where status = 'completed' and content_deleted_at is null and expires_at <= ? order by expires_at limit ?`,
      [now.toISOString(), limit],
    );
  }

  async markContentDeleted(id: string, now: Date): Promise<void> {
    await sqlRows(this.em(), 'update videos set content_deleted_at = ? where id = ? and content_deleted_at is null returning id', [
      now.toISOString(),
      id,
    ]);
  }

  async markDeleted(id: string, accountId: string, now: Date): Promise<Video | null> {
    const rows = await this.videos(
      `update videos set deleted_at = ?, content_deleted_at = coalesce(content_deleted_at, ?) where id = ? and account_id = ? and deleted_at is null and status in ('completed', 'failed') returning *`,
      [now.toISOString(), now.toISOString(), id, accountId],
    );
    return rows[0] ?? null;
  }

  async overdueIds(now: Date, limit: number): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(
      this.em(),
      `select id from videos where status in ('queued', 'in_progress') and deadline_at < ? order by deadline_at limit ?`,
      [now.toISOString(), limit],
    );
    return rows.map((r) => r.id);
  }

  async claimIdempotencyKey(claim: VideoIdempotencyKey): Promise<boolean> {
    const rows = await sqlRows(
      this.em(),
      'insert into video_idempotency_keys (account_id, idempotency_key, request_hash, video_id, created_at) values (?, ?, ?, ?, ?) on conflict do nothing returning video_id',
      [claim.accountId, claim.idempotencyKey, claim.requestHash, claim.videoId, claim.createdAt.toISOString()],
    );
    return rows.length > 0;
  }

  async findIdempotencyClaim(accountId: string, key: string): Promise<VideoIdempotencyKey | null> {
    const em = this.em();
    const [row] = await sqlRows<Record<string, unknown>>(
      em,
      'select * from video_idempotency_keys where account_id = ? and idempotency_key = ?',
      [accountId, key],
    );
    return row ? em.map(VideoIdempotencyKey, row) : null;
  }

  async dropIdempotencyClaim(claim: Pick<VideoIdempotencyKey, 'accountId' | 'idempotencyKey' | 'videoId'>): Promise<void> {
    await sqlRows(
      this.em(),
      'delete from video_idempotency_keys where account_id = ? and idempotency_key = ? and video_id = ? returning video_id',
      [claim.accountId, claim.idempotencyKey, claim.videoId],
    );
  }

  async purgeIdempotencyKeys(before: Date): Promise<number> {
    const rows = await sqlRows(this.em(), 'delete from video_idempotency_keys where created_at < ? returning video_id', [
      before.toISOString(),
    ]);
    return rows.length;
  }

  /** A fork per call: nothing is kept between calls (every write is one statement). */
  private em(): EntityManager {
    return this.orm.em.fork();
  }

  private async videos(sql: string, params: (string | number | null)[]): Promise<Video[]> {
    const em = this.em();
    const rows = await sqlRows<Record<string, unknown>>(em, sql, params);
    return rows.map((row) => em.map(Video, row));
  }
}
