import { resolveModelId } from '../catalog/resolve';
import type { Catalog, ImageModel, ModelAccess } from '../catalog/types';
import { badRequest } from '../shared/errors';
import { sniffImageFormat } from '../shared/image-bytes';
import type { ImageData, ImageMode, PixelSize } from './ports';

/**
 * The rules of an image request, checked against the model before anything is reserved:
 * each refusal is a 400 naming its field, and nothing is ever changed silently.
 */

export const MAX_PROMPT_BYTES = 4000;
export const MAX_IMAGES_PER_REQUEST = 4;
/** Quality values clients send (OpenAI's, old and new); accepted and without effect, except on fixed-option models. */
const KNOWN_QUALITIES = ['auto', 'low', 'medium', 'high', 'standard', 'hd'];

/** An image request as a protocol decoder hands it over (types checked, rules not yet). */
export interface ImageRequestInput {
  mode: ImageMode;
  /** The model id exactly as sent. */
  modelId: string;
  prompt: string;
  n: number;
  /** Undefined or `auto`: the model's first listed size. */
  size?: string;
  quality?: string;
  /** Edit inputs as uploaded; their format is checked here, by their bytes. */
  images: readonly Buffer[];
  /** How many image parts were sent, when the upload kept fewer (more than the upload limit). */
  imageCount?: number;
}

/** A request that passed every rule: what the service reserves for and runs. */
export interface ValidImageRequest {
  mode: ImageMode;
  model: ImageModel;
  /** The id as sent when it differs from the model's (`x-service-model-routed-from`). */
  routedFrom: string | null;
  prompt: string;
  n: number;
  /** The size as listed (`1024x1024`) and in pixels. */
  sizeLabel: string;
  size: PixelSize;
  /** The quality answered back: the fixed option's, or what was sent (else `auto`). */
  quality: string;
  images: ImageData[];
  /** What the decoder handed over, for the model's fallback to take the request as sent. */
  source: ImageRequestInput;
}

export function validateImageRequest(input: ImageRequestInput, catalog: Catalog, access: ModelAccess): ValidImageRequest {
  const { model, routedFrom } = resolveModelId(catalog, input.modelId, 'image', access);
  if (!model.modes.includes(input.mode)) {
    const verb = input.mode === 'edit' ? 'edit images' : 'generate images';
    throw badRequest(`model: '${model.id}' cannot ${verb} (its modes: ${model.modes.join(', ')}).`, { field: 'model' });
  }
  if (input.prompt.length === 0) throw badRequest('prompt: a prompt is required.', { field: 'prompt' });
  const promptBytes = Buffer.byteLength(input.prompt, 'utf8');
  if (promptBytes > MAX_PROMPT_BYTES) {
    throw badRequest(`prompt: at most ${MAX_PROMPT_BYTES} bytes of UTF-8 are accepted, got ${promptBytes}.`, { field: 'prompt' });
  }
  if (!Number.isInteger(input.n) || input.n < 1 || input.n > MAX_IMAGES_PER_REQUEST) {
    throw badRequest(`n: must be an integer from 1 to ${MAX_IMAGES_PER_REQUEST}.`, { field: 'n' });
  }
  const sizeLabel = chooseSize(model, input.size);
  const quality = checkQuality(model, input.quality);
  const images = input.mode === 'edit' ? checkInputImages(model, input.images, input.imageCount ?? input.images.length) : [];
  const size = parseSize(sizeLabel);
  return { mode: input.mode, model, routedFrom, prompt: input.prompt, n: input.n, sizeLabel, size, quality, images, source: input };
}

/** The sizes a client may name: `WxH` entries, or the size part of a fixed option. */
const listedSizes = (model: ImageModel): string[] => (model.fixedOption ? [model.fixedOption.size] : [...model.sizes]);

function chooseSize(model: ImageModel, sent: string | undefined): string {
  const sizes = listedSizes(model);
  if (sent === undefined || sent === 'auto') return sizes[0]!;
  if (sizes.includes(sent)) return sent;
  if (model.fixedOption && sent === model.sizes[0]) return model.fixedOption.size; // the listed `<quality>:<size>` itself
  throw badRequest(`size: '${sent}' is not offered by '${model.id}'; use one of ${sizes.join(', ')} (or auto).`, { field: 'size', sizes });
}

function checkQuality(model: ImageModel, sent: string | undefined): string {
  if (model.fixedOption) {
    if (sent === undefined || sent === model.fixedOption.quality) return model.fixedOption.quality;
    throw badRequest(`quality: '${model.id}' only offers quality '${model.fixedOption.quality}', got '${sent}'.`, { field: 'quality' });
  }
  if (sent === undefined) return 'auto';
  if (KNOWN_QUALITIES.includes(sent)) return sent;
  throw badRequest(`quality: '${sent}' is not a quality; use one of ${KNOWN_QUALITIES.join(', ')}.`, { field: 'quality' });
}

function checkInputImages(model: ImageModel, uploads: readonly Buffer[], sent: number): ImageData[] {
  if (sent === 0) throw badRequest('image: an edit needs at least one image part.', { field: 'image' });
  if (sent > model.maxInputImages) {
    throw badRequest(
      `image: '${model.id}' accepts at most ${model.maxInputImages} input image${model.maxInputImages === 1 ? '' : 's'}, got ${sent}.`,
      { field: 'image', limit: 'max_input_images', limit_value: model.maxInputImages },
    );
  }
  return uploads.map((data, i) => {
    const format = sniffImageFormat(data);
    if (!format) throw badRequest(`image: input image ${i + 1} is not a PNG, JPEG or WebP image.`, { field: 'image' });
    return { data, format };
  });
}

export function parseSize(label: string): PixelSize {
  const match = /^(\d+)x(\d+)$/.exec(label);
  if (!match) throw new RangeError(`not a WxH size: ${label}`);
  return { width: Number(match[1]), height: Number(match[2]) };
}
