import type { ImageProviderRequest } from '../../domain/images/ports';
import { IMAGE_MIME_TYPES } from '../../domain/shared/image-bytes';
import type { FormPart } from '../form-parts';
import type { ImagesGenerationVendorRequest } from './vendor-types';

/**
 * Tollgate speaking OpenAI's Images API upstream: one image per call (`n: 1`), the size as
 * asked; generations as JSON, edits as a multipart form.
 */

export const GENERATIONS_PATH = '/images/generations';
export const EDITS_PATH = '/images/edits';

/**
 * The catalog prices gpt-image models at their medium quality, so that is what is asked for:
 * left to `auto`, OpenAI may pick (and bill) high. Other models get no quality field. A routed
 * deployment (an Azure deployment name) says nothing of its model, so the catalog's id counts too.
 */
const isGptImage = (name: string): boolean => name.startsWith('gpt-image');
const upstreamQuality = (request: ImageProviderRequest): string | undefined =>
  isGptImage(request.model.vendorModelId) || isGptImage(request.model.id.slice(request.model.id.indexOf('/') + 1)) ? 'medium' : undefined;

export function generationBody(request: ImageProviderRequest): ImagesGenerationVendorRequest {
  const quality = upstreamQuality(request);
  return {
    model: request.model.vendorModelId,
    prompt: request.prompt,
    n: 1,
    size: `${request.size.width}x${request.size.height}`,
    ...(quality ? { quality } : {}),
  };
}

/** The edit request as form parts: text fields, then the images (`image`, or `image[]` for several). */
export function editForm(request: ImageProviderRequest): FormPart[] {
  const parts: FormPart[] = [
    { name: 'model', value: request.model.vendorModelId },
    { name: 'prompt', value: request.prompt },
    { name: 'n', value: '1' },
    { name: 'size', value: `${request.size.width}x${request.size.height}` },
  ];
  const quality = upstreamQuality(request);
  if (quality) parts.push({ name: 'quality', value: quality });
  request.images.forEach((image, i) =>
    parts.push({
      name: request.images.length === 1 ? 'image' : 'image[]',
      filename: `image-${i + 1}.${image.format === 'jpeg' ? 'jpg' : image.format}`,
      contentType: IMAGE_MIME_TYPES[image.format],
      data: image.data,
    }),
  );
  return parts;
}
