import { ProviderError } from '../../domain/generation/errors';
import type { GeneratedImage, ImageProviderRequest } from '../../domain/images/ports';
import { IMAGE_MIME_TYPES } from '../../domain/shared/image-bytes';
import { decodeVendorImage, nearestAspectRatio } from '../image-answer';

/**
 * Gemini image output: `generateContent` with `responseModalities: ['IMAGE']` and an
 * `imageConfig.aspectRatio` (the nearest to the size asked); edits send their input images
 * as `inlineData` parts before the prompt. The image comes back as an `inlineData` part.
 */

export const GEMINI_IMAGE_ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;

type Part = { text: string } | { inlineData: { mimeType: string; data: string } };

export interface GeminiImageRequest {
  contents: { role: 'user'; parts: Part[] }[];
  generationConfig: { responseModalities: ['IMAGE']; imageConfig: { aspectRatio: string } };
}

interface GeminiImageAnswer {
  candidates?: { content?: { parts?: { text?: string; inlineData?: { mimeType?: string; data?: string } }[] }; finishReason?: string }[];
  promptFeedback?: { blockReason?: string };
}

export const generateContentPath = (vendorModelId: string) => `/v1beta/models/${encodeURIComponent(vendorModelId)}:generateContent`;

export function imageContentRequest(request: ImageProviderRequest): GeminiImageRequest {
  const images: Part[] = request.images.map((image) => ({ inlineData: { mimeType: IMAGE_MIME_TYPES[image.format], data: image.data.toString('base64') } }));
  return {
    contents: [{ role: 'user', parts: [...images, { text: request.prompt }] }],
    generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: nearestAspectRatio(request.size, GEMINI_IMAGE_ASPECT_RATIOS) } },
  };
}

/** The first image part of the answer; a blocked or text-only answer is the vendor's failure. */
export function imageFromContent(answer: unknown, vendor: string): GeneratedImage {
  const body = (answer ?? {}) as GeminiImageAnswer;
  const candidate = body.candidates?.[0];
  const part = candidate?.content?.parts?.find((p) => p.inlineData?.data);
  if (!part) {
    const reason = body.promptFeedback?.blockReason ?? candidate?.finishReason;
    const text = candidate?.content?.parts?.find((p) => p.text)?.text;
    throw new ProviderError(`${vendor} answered without an image${reason ? ` (${reason})` : ''}${text ? `: ${text.slice(0, 300)}` : '.'}`, vendor);
  }
  return decodeVendorImage(part.inlineData!.data, vendor);
}
