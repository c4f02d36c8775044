import type { ImageProviderRequest } from '../../domain/images/ports';
import { nearestAspectRatio } from '../image-answer';
import type { ImagenPredictRequest } from './vendor-types';

/**
 * Google Imagen on the Gemini API: `POST /v1beta/models/{model}:predict` with
 * `instances[].prompt` and `parameters` (`sampleCount`, `aspectRatio`). Imagen takes aspect
 * ratios, not pixel sizes: the nearest one is asked for and the service crops to the exact size.
 */

export const IMAGEN_ASPECT_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'] as const;

export const predictPath = (vendorModelId: string) => `/v1beta/models/${encodeURIComponent(vendorModelId)}:predict`;

export function predictRequest(request: ImageProviderRequest): ImagenPredictRequest {
  return {
    instances: [{ prompt: request.prompt }],
    parameters: { sampleCount: 1, aspectRatio: nearestAspectRatio(request.size, IMAGEN_ASPECT_RATIOS) },
  };
}
