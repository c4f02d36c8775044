import { ProviderError } from '../../domain/generation/errors';
import type { GeneratedImage } from '../../domain/images/ports';
import { decodeVendorImage } from '../image-answer';
import { geminiImageAnswer } from './vendor-types';

/** The first image part of the answer; a blocked, text-only or malformed answer is the vendor's failure. */
export function imageFromContent(answer: unknown, vendor: string): GeneratedImage {
  const parsed = geminiImageAnswer.safeParse(answer);
  const body = parsed.success ? parsed.data : {};
  const candidate = body.candidates?.[0];
  const data = candidate?.content?.parts?.find((p) => p.inlineData?.data)?.inlineData?.data;
  if (!data) {
    const reason = body.promptFeedback?.blockReason ?? candidate?.finishReason;
    const text = candidate?.content?.parts?.find((p) => p.text)?.text;
    throw new ProviderError(
      `${vendor} answered without an image${reason ? ` (${reason})` : ''}${text ? `: ${text.slice(0, 300)}` : '.'}`,
      vendor,
      null,
      undefined,
      'invalid_answer',
    );
  }
  return decodeVendorImage(data, vendor);
}
