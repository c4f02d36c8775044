import type { ImageModel } from '../catalog/types';
import type { Cancellation } from '../generation/cancellation';
import type { ImageFormat } from '../shared/image-bytes';

/**
 * The image vendor port: one call makes ONE image (the service runs n calls in parallel, so
 * that each image is charged only when it arrives). Adapters live in src/providers/images.
 */

export type ImageMode = 'generate' | 'edit';

export interface PixelSize {
  readonly width: number;
  readonly height: number;
}

/** An image: its bytes and the format they are in (known by the bytes, see image-bytes.ts). */
export interface ImageData {
  readonly data: Buffer;
  readonly format: ImageFormat;
}

/** Token counts a vendor reports for one image (OpenAI's gpt-image models do). */
export interface ImageTokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface GeneratedImage extends ImageData {
  readonly usage?: ImageTokenUsage;
  /** A routed model's image: the deployment that made it, and how many deployments were tried for it. */
  readonly servedBy?: { readonly deployment: string; readonly attempts: number };
}

export interface ImageProviderRequest {
  readonly model: ImageModel;
  readonly mode: ImageMode;
  readonly prompt: string;
  /** The size the client asked for; a vendor may answer another (the service fits it). */
  readonly size: PixelSize;
  /** Input images of an edit (empty when generating). */
  readonly images: readonly ImageData[];
  /** Which of the request's n images this call makes (0-based). */
  readonly index: number;
  /** Set when the client went away: the call should stop. */
  readonly signal: Cancellation;
}

export interface ImageProvider {
  /** One image; throws ProviderError when the vendor fails. */
  generateImage(request: ImageProviderRequest): Promise<GeneratedImage>;
  /** False when a routed model's every deployment is cooled (its fallback may serve); absent: always available. */
  available?(): boolean;
}

export interface ImageProviderRegistry {
  forModel(model: ImageModel): ImageProvider;
}
