import type { VideoStatus } from './entities';
import type { VideoRow } from './repository';

/** A video job as both planes show it; plain JSON (it also crosses instances on the event bus). */
export interface VideoView {
  id: string;
  accountId: string;
  status: VideoStatus;
  model: string;
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
  progress: number;
  /** Epoch milliseconds. */
  createdAt: number;
  completedAt: number | null;
  expiresAt: number | null;
  error: { code: string; message: string } | null;
}

export const TOPIC_VIDEO_UPDATED = 'video-updated';

const ms = (at: Date | string | null): number | null => (at === null ? null : new Date(at).getTime());

export function toVideoView(row: VideoRow): VideoView {
  return {
    id: row.id,
    accountId: row.account_id,
    status: row.status,
    model: row.model,
    prompt: row.prompt,
    seconds: row.seconds,
    resolution: row.resolution,
    ratio: row.ratio,
    progress: row.progress,
    createdAt: ms(row.created_at)!,
    completedAt: row.status === 'completed' || row.status === 'failed' ? ms(row.completed_at) : null,
    expiresAt: ms(row.expires_at),
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
  };
}
