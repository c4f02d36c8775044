/**
 * OpenAI's own videos API as Tollgate calls it upstream (`POST /videos`, `GET /videos/{id}`,
 * `GET /videos/{id}/content`): `seconds` is a string (`"4"`, `"8"`, `"12"`) and the frame is
 * a `size` of pixels (`1280x720`), unlike our client-facing `seconds`/`resolution`/`ratio`.
 */
export interface OpenAIVideoJob {
  id: string;
  object?: 'video';
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  error?: { code?: string; message?: string } | null;
}

export interface OpenAIVideoCreateFields {
  model: string;
  prompt: string;
  seconds: string;
  size: string;
}

export function isOpenAIVideoJob(value: unknown): value is OpenAIVideoJob {
  const job = value as OpenAIVideoJob;
  return typeof job === 'object' && job !== null && typeof job.id === 'string' && ['queued', 'in_progress', 'completed', 'failed'].includes(job.status);
}
