import { ProviderError } from '../../domain/generation/errors';
import type { GeneratedImage, ImageProviderRequest } from '../../domain/images/ports';
import { decodeVendorImage, nearestAspectRatio } from '../image-answer';

/**
 * Google Imagen on the Gemini API: `POST /v1beta/models/{model}:predict` with
 * `instances[].prompt` and `parameters` (`sampleCount`, `aspectRatio`), answered with
 * `predictions[].bytesBase64Encoded` and `mimeType`. Imagen takes aspect ratios, not pixel
 * sizes: the nearest one is asked for and the service crops to the exact size.
 */

export const IMAGEN_ASPECT_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'] as const;

export interface ImagenPredictRequest {
  instances: { prompt: string }[];
  parameters: { sampleCount: number; aspectRatio: string };
}

export interface ImagenPredictResponse {
  predictions?: { bytesBase64Encoded?: string; mimeType?: string; raiFilteredReason?: string }[];
}

export const predictPath = (vendorModelId: string) => `/v1beta/models/${encodeURIComponent(vendorModelId)}:predict`;

export function predictRequest(request: ImageProviderRequest): ImagenPredictRequest {
  return { instances: [{ prompt: request.prompt }], parameters: { sampleCount: 1, aspectRatio: nearestAspectRatio(request.size, IMAGEN_ASPECT_RATIOS) } };
}

/** The one image of a predict answer; a filtered or empty answer is the vendor's failure. */
export function imageFromPrediction(answer: unknown, vendor: string): GeneratedImage {
  const predictions = (answer as ImagenPredictResponse | null)?.predictions;
  const first = Array.isArray(predictions) ? predictions.find((p) => p.bytesBase64Encoded) : undefined;
  if (!first) {
    const filtered = Array.isArray(predictions) ? predictions.find((p) => p.raiFilteredReason)?.raiFilteredReason : undefined;
    throw new ProviderError(filtered ? `${vendor} filtered the image: ${filtered}` : `${vendor} answered without an image (the prompt may have been filtered).`, vendor);
  }
  return decodeVendorImage(first.bytesBase64Encoded, vendor);
}
