import type { GeneratedImage } from '../../domain/images/ports';
import { ProviderError } from '../../domain/generation/errors';
import { decodeVendorImage } from '../image-answer';
import { imagenPredictAnswer } from './vendor-types';

/** The one image of a predict answer (the vendor's MIME type is not trusted: the bytes decide); a filtered or empty answer is the vendor's failure. */
export function imageFromPrediction(answer: unknown, vendor: string): GeneratedImage {
  const parsed = imagenPredictAnswer.safeParse(answer);
  const predictions = parsed.success ? (parsed.data.predictions ?? []) : [];
  const first = predictions.find((p) => p.bytesBase64Encoded);
  if (!first) {
    const filtered = predictions.find((p) => p.raiFilteredReason)?.raiFilteredReason;
    throw new ProviderError(
      filtered ? `${vendor} filtered the image: ${filtered}` : `${vendor} answered without an image (the prompt may have been filtered).`,
      vendor,
      null,
      undefined,
      'invalid_answer',
    );
  }
  return decodeVendorImage(first.bytesBase64Encoded, vendor);
}
