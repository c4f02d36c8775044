import type { VideoView } from '../shared/events';
import type { Video } from './entities';


const ms = (at: Date | null): number | null => (at === null ? null : at.getTime());

export function toVideoView(row: Video): VideoView {
  return {
    id: row.id,
    accountId: row.accountId,
    status: row.status,
    model: row.model,
    prompt: row.prompt,
    seconds: row.seconds,
    resolution: row.resolution,
    ratio: row.ratio,
    progress: row.progress,
    createdAt: ms(row.createdAt)!,
    completedAt: row.status === 'completed' || row.status === 'failed' ? ms(row.completedAt) : null,
    expiresAt: ms(row.expiresAt),
    error: row.errorCode === null ? null : { code: row.errorCode, message: row.errorMessage ?? '' },
  };
}
