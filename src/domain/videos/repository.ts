import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows } from '../shared/sql';
import type { VideoStatus } from './entities';
import type { VendorJobHandle } from './ports';

/**
 * SQL of the videos tables. Every status change is a conditional UPDATE on the status it moves
 * from (forward only), so a stale or duplicate worker changes nothing and learns it from the
 * empty RETURNING.
 */

export interface VideoRow {
  id: string;
  account_id: string;
  key_id: string;
  model: string;
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
  status: VideoStatus;
  progress: number;
  hold_id: string;
  inputs: StoredInput[];
  vendor_job: VendorJobHandle | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  deadline_at: Date;
  expires_at: Date | null;
  content_bytes: string | null;
  content_deleted_at: Date | null;
  deleted_at: Date | null;
  /** What the job was charged (its hold's charge), when read with it (findVideo, listVideoRows). */
  charged_micro?: string | null;
}

export interface StoredInput {
  role: string;
  mediaType: string;
  key: string;
}

export type NewVideoRow = Pick<VideoRow, 'id' | 'account_id' | 'key_id' | 'model' | 'prompt' | 'seconds' | 'resolution' | 'ratio' | 'hold_id' | 'inputs' | 'created_at' | 'deadline_at'>;

export async function insertVideo(em: EntityManager, row: NewVideoRow): Promise<VideoRow> {
  const [inserted] = await sqlRows<VideoRow>(
    em,
    `insert into videos (id, account_id, key_id, model, prompt, seconds, resolution, ratio, status, progress, hold_id, inputs, created_at, deadline_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?::jsonb, ?, ?) returning *`,
    [row.id, row.account_id, row.key_id, row.model, row.prompt, row.seconds, row.resolution, row.ratio, row.hold_id, JSON.stringify(row.inputs), row.created_at.toISOString(), row.deadline_at.toISOString()],
  );
  return inserted!;
}

/** A video row with its charge (the hold's, once settled). */
const WITH_CHARGE = 'v.*, h.charged_micro::text as charged_micro from videos v left join holds h on h.id = v.hold_id';

export async function findVideo(em: EntityManager, id: string): Promise<VideoRow | null> {
  const [row] = await sqlRows<VideoRow>(em, `select ${WITH_CHARGE} where v.id = ?`, [id]);
  return row ?? null;
}

export interface VideoListQuery {
  limit: number;
  order: 'asc' | 'desc';
  /** A video id: the page starts after it in `order`. */
  after: string | null;
  status?: VideoStatus | null;
  /** Words the prompt contains (case-insensitive). */
  search?: string | null;
}

/** One more row than asked, so the caller knows whether there is more. Ids sort by creation. */
export function listVideoRows(em: EntityManager, accountId: string, query: VideoListQuery): Promise<VideoRow[]> {
  const direction = query.order === 'asc' ? 'asc' : 'desc';
  const where = ['v.account_id = ?', 'v.deleted_at is null'];
  const params: (string | number)[] = [accountId];
  if (query.after !== null) {
    where.push(direction === 'asc' ? 'v.id > ?' : 'v.id < ?');
    params.push(query.after);
  }
  if (query.status != null) {
    where.push('v.status = ?');
    params.push(query.status);
  }
  if (query.search != null) {
    where.push(`v.prompt ilike ? escape '\\'`);
    params.push(`%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  }
  params.push(query.limit + 1);
  return sqlRows<VideoRow>(em, `select ${WITH_CHARGE} where ${where.join(' and ')} order by v.id ${direction} limit ?`, params);
}

export async function markStarted(em: EntityManager, id: string, now: Date): Promise<VideoRow | null> {
  const [row] = await sqlRows<VideoRow>(em, `update videos set status = 'in_progress', started_at = ? where id = ? and status = 'queued' returning *`, [now.toISOString(), id]);
  return row ?? null;
}

export async function saveVendorJob(em: EntityManager, id: string, handle: VendorJobHandle): Promise<boolean> {
  const rows = await sqlRows(em, `update videos set vendor_job = ?::jsonb where id = ? and status = 'in_progress' and vendor_job is null returning id`, [JSON.stringify(handle), id]);
  return rows.length > 0;
}

/** Progress only rises; null when nothing changed. */
export async function raiseProgress(em: EntityManager, id: string, progress: number): Promise<VideoRow | null> {
  const [row] = await sqlRows<VideoRow>(em, `update videos set progress = ? where id = ? and status = 'in_progress' and progress < ? returning *`, [progress, id, progress]);
  return row ?? null;
}

export async function markCompleted(em: EntityManager, id: string, now: Date, expiresAt: Date, bytes: number): Promise<VideoRow | null> {
  const [row] = await sqlRows<VideoRow>(
    em,
    `update videos set status = 'completed', progress = 100, completed_at = ?, expires_at = ?, content_bytes = ? where id = ? and status = 'in_progress' returning *`,
    [now.toISOString(), expiresAt.toISOString(), bytes, id],
  );
  return row ?? null;
}

export async function markFailed(em: EntityManager, id: string, now: Date, code: string, message: string): Promise<VideoRow | null> {
  const [row] = await sqlRows<VideoRow>(
    em,
    `update videos set status = 'failed', completed_at = ?, error_code = ?, error_message = ? where id = ? and status in ('queued', 'in_progress') returning *`,
    [now.toISOString(), code, message, id],
  );
  return row ?? null;
}

export async function expiredContent(em: EntityManager, now: Date, limit: number): Promise<VideoRow[]> {
  return sqlRows<VideoRow>(em, `select * from videos where status = 'completed' and content_deleted_at is null and expires_at <= ? order by expires_at limit ?`, [now.toISOString(), limit]);
}

export async function markContentDeleted(em: EntityManager, id: string, now: Date): Promise<void> {
  await sqlRows(em, 'update videos set content_deleted_at = ? where id = ? and content_deleted_at is null returning id', [now.toISOString(), id]);
}

/** Deletes a finished job of the account (its file already removed); null when it is not one, or was deleted before. */
export async function markDeleted(em: EntityManager, id: string, accountId: string, now: Date): Promise<VideoRow | null> {
  const [row] = await sqlRows<VideoRow>(
    em,
    `update videos set deleted_at = ?, content_deleted_at = coalesce(content_deleted_at, ?) where id = ? and account_id = ? and deleted_at is null and status in ('completed', 'failed') returning *`,
    [now.toISOString(), now.toISOString(), id, accountId],
  );
  return row ?? null;
}

export async function overdueVideoIds(em: EntityManager, now: Date, limit: number): Promise<string[]> {
  const rows = await sqlRows<{ id: string }>(em, `select id from videos where status in ('queued', 'in_progress') and deadline_at < ? order by deadline_at limit ?`, [now.toISOString(), limit]);
  return rows.map((r) => r.id);
}

// --- idempotency keys ------------------------------------------------------------------------

export interface IdempotencyClaim {
  account_id: string;
  idempotency_key: string;
  request_hash: string;
  video_id: string;
  created_at: Date;
}

/** Inserts the key; true when this request won it (the primary key decides between racers). */
export async function claimIdempotencyKey(em: EntityManager, claim: IdempotencyClaim): Promise<boolean> {
  const rows = await sqlRows(
    em,
    'insert into video_idempotency_keys (account_id, idempotency_key, request_hash, video_id, created_at) values (?, ?, ?, ?, ?) on conflict do nothing returning video_id',
    [claim.account_id, claim.idempotency_key, claim.request_hash, claim.video_id, claim.created_at.toISOString()],
  );
  return rows.length > 0;
}

export async function findIdempotencyClaim(em: EntityManager, accountId: string, key: string): Promise<IdempotencyClaim | null> {
  const [row] = await sqlRows<IdempotencyClaim>(em, 'select * from video_idempotency_keys where account_id = ? and idempotency_key = ?', [accountId, key]);
  return row ?? null;
}

/** Drops a claim, only if it still names that video (a failed creation, an expired or stale key). */
export async function dropIdempotencyClaim(em: EntityManager, accountId: string, key: string, videoId: string): Promise<void> {
  await sqlRows(em, 'delete from video_idempotency_keys where account_id = ? and idempotency_key = ? and video_id = ? returning video_id', [accountId, key, videoId]);
}

export async function purgeIdempotencyKeys(em: EntityManager, before: Date): Promise<number> {
  const rows = await sqlRows(em, 'delete from video_idempotency_keys where created_at < ? returning video_id', [before.toISOString()]);
  return rows.length;
}
