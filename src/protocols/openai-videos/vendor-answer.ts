import { ProviderError } from '../../domain/generation/errors';
import type { VendorJobState } from '../../domain/videos/ports';
import { openAIVideoJob, type OpenAIVideoJob } from './vendor-types';

/** A video object of OpenAI's answer, validated; one without an id or a known status is the vendor's failure. */
export function videoJobFromAnswer(answer: unknown, vendor: string): OpenAIVideoJob {
  const parsed = openAIVideoJob.safeParse(answer);
  if (!parsed.success)
    throw new ProviderError(`${vendor} answered a video object without an id or status.`, vendor, null, undefined, 'invalid_answer');
  return parsed.data;
}

export function videoJobState(job: OpenAIVideoJob): VendorJobState {
  if (job.status === 'completed') return { status: 'completed' };
  if (job.status === 'failed')
    return {
      status: 'failed',
      code: job.error?.code ?? 'generation_failed',
      message: job.error?.message ?? 'OpenAI reported the video generation failed.',
    };
  return { status: 'running', progress: job.progress ?? 0 };
}
