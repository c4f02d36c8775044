import { ProviderError } from '../../domain/generation/errors';
import type { VendorJobState } from '../../domain/videos/ports';
import { veoOperation, type VeoOperation } from './vendor-types';

/** An operation of Veo's answer, validated; one without a name is the vendor's failure. */
export function operationFromAnswer(answer: unknown, vendor: string): VeoOperation {
  const parsed = veoOperation.safeParse(answer);
  if (!parsed.success)
    throw new ProviderError(`${vendor} answered a Veo operation without a name.`, vendor, null, undefined, 'invalid_answer');
  return parsed.data;
}

export function operationVideoUri(operation: VeoOperation): string | null {
  return operation.response?.generateVideoResponse?.generatedSamples?.[0]?.video?.uri ?? null;
}

/** Running until done; done with an error, or with no video (filtered), is the vendor's verdict. */
export function operationState(operation: VeoOperation): VendorJobState {
  if (!operation.done) return { status: 'running', progress: operation.metadata?.progressPercent ?? 0 };
  if (operation.error)
    return { status: 'failed', code: 'generation_failed', message: operation.error.message ?? 'Veo reported the video generation failed.' };
  if (!operationVideoUri(operation)) {
    const reasons = operation.response?.generateVideoResponse?.raiMediaFilteredReasons ?? [];
    return { status: 'failed', code: 'content_filter', message: reasons[0] ?? 'Veo returned no video.' };
  }
  return { status: 'completed' };
}
