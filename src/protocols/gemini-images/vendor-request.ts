import type { ImageProviderRequest } from '../../domain/images/ports';
import { IMAGE_MIME_TYPES } from '../../domain/shared/image-bytes';
import { nearestAspectRatio } from '../image-answer';
import type { GeminiImagePart, GeminiImageRequest } from './vendor-types';

/**
 * Gemini image output: `generateContent` with `responseModalities: ['IMAGE']` and an
 * `imageConfig.aspectRatio` (the nearest to the size asked); edits send their input images
 * as `inlineData` parts before the prompt.
 */

export const GEMINI_IMAGE_ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;

export const generateContentPath = (vendorModelId: string) => `/v1beta/models/${encodeURIComponent(vendorModelId)}:generateContent`;

export function imageContentRequest(request: ImageProviderRequest): GeminiImageRequest {
  const images: GeminiImagePart[] = request.images.map((image) => ({
    inlineData: { mimeType: IMAGE_MIME_TYPES[image.format], data: image.data.toString('base64') },
  }));
  return {
    contents: [{ role: 'user', parts: [...images, { text: request.prompt }] }],
    generationConfig: {
      responseModalities: ['IMAGE'],
      imageConfig: { aspectRatio: nearestAspectRatio(request.size, GEMINI_IMAGE_ASPECT_RATIOS) },
    },
  };
}
