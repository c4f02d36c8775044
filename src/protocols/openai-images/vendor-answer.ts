import { ProviderError } from '../../domain/generation/errors';
import type { GeneratedImage } from '../../domain/images/ports';
import { decodeVendorImage } from '../image-answer';
import { imagesVendorAnswer } from './vendor-types';

/** The one image of an Images API answer, with its token usage when reported. */
export function imageFromAnswer(answer: unknown, vendor: string): GeneratedImage {
  const parsed = imagesVendorAnswer.safeParse(answer);
  if (!parsed.success) throw new ProviderError(`${vendor} answered without an image.`, vendor, null, undefined, 'invalid_answer');
  const image = decodeVendorImage(parsed.data.data[0]!.b64_json, vendor);
  const usage = parsed.data.usage;
  return usage ? { ...image, usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } } : image;
}
