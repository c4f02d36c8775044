import { randomBytes } from 'node:crypto';
import { ProviderError } from '../../domain/generation/errors';
import type { GeneratedImage, ImageData, ImageProviderRequest } from '../../domain/images/ports';
import { IMAGE_MIME_TYPES } from '../../domain/shared/image-bytes';
import { decodeVendorImage } from '../image-answer';

/**
 * Tollgate speaking OpenAI's Images API upstream: one image per call (`n: 1`), the size as
 * asked, answers read from `data[0].b64_json` and `usage`.
 */

export const GENERATIONS_PATH = '/images/generations';
export const EDITS_PATH = '/images/edits';

/**
 * The catalog prices gpt-image models at their medium quality, so that is what is asked for:
 * left to `auto`, OpenAI may pick (and bill) high. Other models get no quality field.
 */
const upstreamQuality = (request: ImageProviderRequest): string | undefined =>
  request.model.vendorModelId.startsWith('gpt-image') ? 'medium' : undefined;

export function generationBody(request: ImageProviderRequest): Record<string, unknown> {
  const quality = upstreamQuality(request);
  return { model: request.model.vendorModelId, prompt: request.prompt, n: 1, size: `${request.size.width}x${request.size.height}`, ...(quality ? { quality } : {}) };
}

/** The edit request as multipart chunks: text fields, then `image[]` parts (the images are not copied). */
export function editForm(request: ImageProviderRequest): { contentType: string; chunks: Buffer[] } {
  const boundary = `tollgate-${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  const field = (name: string, value: string) =>
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  const file = (name: string, filename: string, image: ImageData) => {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${IMAGE_MIME_TYPES[image.format]}\r\n\r\n`));
    chunks.push(image.data, Buffer.from('\r\n'));
  };
  field('model', request.model.vendorModelId);
  field('prompt', request.prompt);
  field('n', '1');
  field('size', `${request.size.width}x${request.size.height}`);
  const quality = upstreamQuality(request);
  if (quality) field('quality', quality);
  request.images.forEach((image, i) => file(request.images.length === 1 ? 'image' : 'image[]', `image-${i + 1}.${image.format === 'jpeg' ? 'jpg' : image.format}`, image));
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, chunks };
}

/** The one image of an Images API answer, with its token usage when reported. */
export function imageFromAnswer(answer: unknown, vendor: string): GeneratedImage {
  const body = (typeof answer === 'object' && answer !== null ? answer : {}) as { data?: { b64_json?: unknown }[]; usage?: { input_tokens?: unknown; output_tokens?: unknown } };
  const first = Array.isArray(body.data) ? body.data[0] : undefined;
  if (!first) throw new ProviderError(`${vendor} answered without an image.`, vendor);
  const image = decodeVendorImage(first.b64_json, vendor);
  const { input_tokens: inputTokens, output_tokens: outputTokens } = body.usage ?? {};
  const usage = typeof inputTokens === 'number' && typeof outputTokens === 'number' ? { inputTokens, outputTokens } : undefined;
  return usage ? { ...image, usage } : image;
}
