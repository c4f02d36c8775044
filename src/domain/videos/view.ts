import type { VideoView } from '../shared/events';
import type { VideoRow } from './repository';

export type { VideoView };

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
    chargedMicro: row.status === 'completed' ? (row.charged_micro ?? null) : null,
  };
}
