import { mediaAnswerCost } from '../../domain/billing/answer-cost';
import { usageCost, type UsageCostFields } from '../cost';
import type { VideoPage } from '../../domain/videos/service';
import type { VideoView } from '../../domain/shared/events';

/** The video object our clients see (OpenAI's shape; `seconds` an integer, `resolution` and `ratio` labels). */
export interface VideoObject {
  id: string;
  object: 'video';
  status: VideoView['status'];
  model: string;
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
  progress: number;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  error: { code: string; message: string } | null;
  /** What the job was charged, once completed (OpenRouter-style `usage.cost`). */
  usage?: UsageCostFields;
}

export interface VideoListObject {
  object: 'list';
  data: VideoObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

export function toVideoObject(video: VideoView): VideoObject {
  return {
    id: video.id,
    object: 'video',
    status: video.status,
    model: video.model,
    prompt: video.prompt,
    seconds: video.seconds,
    resolution: video.resolution,
    ratio: video.ratio,
    progress: video.progress,
    created_at: seconds(video.createdAt)!,
    completed_at: seconds(video.completedAt),
    expires_at: seconds(video.expiresAt),
    error: video.error,
    ...(video.chargedMicro !== null ? { usage: usageCost(mediaAnswerCost('videoSeconds', BigInt(video.chargedMicro))) } : {}),
  };
}

export function toVideoListObject(page: VideoPage): VideoListObject {
  return { object: 'list', data: page.data.map(toVideoObject), first_id: page.firstId, last_id: page.lastId, has_more: page.hasMore };
}

/** What OpenAI's `DELETE /videos/{id}` answers. */
export interface VideoDeletedObject {
  id: string;
  object: 'video.deleted';
  deleted: true;
}

export const toVideoDeletedObject = (video: VideoView): VideoDeletedObject => ({ id: video.id, object: 'video.deleted', deleted: true });
