import { z } from 'zod';

/**
 * OpenAI's own videos API as Tollgate calls it upstream (`POST /videos`, `GET /videos/{id}`,
 * `GET /videos/{id}/content`): `seconds` is a string (`"4"`, `"8"`, `"12"`) and the frame is
 * a `size` of pixels (`1280x720`), unlike our client-facing `seconds`/`resolution`/`ratio`.
 */

export interface OpenAIVideoCreateFields {
  model: string;
  prompt: string;
  seconds: string;
  size: string;
}

/** A video object, as far as Tollgate reads it: other fields are ignored. */
export const openAIVideoJob = z.object({
  id: z.string().min(1),
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']),
  progress: z.number().optional().catch(undefined),
  error: z.object({ code: z.string().optional(), message: z.string().optional() }).nullish().catch(undefined),
});

export type OpenAIVideoJob = z.infer<typeof openAIVideoJob>;
