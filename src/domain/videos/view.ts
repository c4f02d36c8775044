import type { VideoView } from '../shared/events';
import type { Video } from './entities';

const ms = (at: Date | null): number | null => (at === null ? null : at.getTime());

/** `chargedMicro`: what the job's hold charged, once settled (read with the job by get and list). */
export function toVideoView(row: Video, chargedMicro: string | null = null): VideoView {
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
    chargedMicro: row.status === 'completed' ? chargedMicro : null,
  };
}
