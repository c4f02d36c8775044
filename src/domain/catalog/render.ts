import { formatScaled } from '../shared/money';
import { ApiError, modelNotAvailable } from '../shared/errors';
import { usableImageModels, usableTextModels, usableVideoModels } from './access';
import { resolveModelId } from './resolve';
import type { Catalog, ImageMode, ImageModel, ModelAccess, TextModel, VideoMode, VideoModel } from './types';

/**
 * Model list bodies for `GET /models`, `/images/models` and `/videos/models`, as plain JSON.
 * Prices are exact decimal strings of USD (per token, per image, per second), and appear
 * only for prepaid keys: plan keys are not billed per token (docs/api.md, Billing facts the API shows).
 */

export interface ModelList<T> {
  object: 'list';
  data: T[];
}

export interface TextModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  context_length: number;
  top_provider: { context_length: number; max_completion_tokens: number };
  pricing?: { prompt: string; completion: string; input_cache_read: string; input_cache_write_5m: string; input_cache_write_1h: string };
}

export interface ImageModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  modes: ImageMode[];
  sizes: string[];
  max_input_images: number;
  pricing?: { per_image: string };
}

export interface VideoModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  modes: VideoMode[];
  resolutions: string[];
  ratios: string[];
  durations: number[];
  max_input_images: number;
  pricing?: { per_second: string };
}

/** Micro-dollars per million tokens → USD per token: 150000n → "0.00000015". */
export const usdPerToken = (perMTokMicro: bigint): string => formatScaled(perMTokMicro, 12);
/** Micro-dollars → USD: 42000n → "0.042". */
export const usdFromMicro = (micro: bigint): string => formatScaled(micro, 6);

export function textModelEntry(model: TextModel, priced: boolean): TextModelEntry {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.namespace,
    context_length: model.contextLength,
    top_provider: { context_length: model.contextLength, max_completion_tokens: model.maxOutputTokens },
    ...(priced && model.pricing
      ? {
          pricing: {
            prompt: usdPerToken(model.pricing.inputPerMTokMicro),
            completion: usdPerToken(model.pricing.outputPerMTokMicro),
            input_cache_read: usdPerToken(model.pricing.cachedInputPerMTokMicro),
            input_cache_write_5m: usdPerToken(model.pricing.cacheWrite5mPerMTokMicro),
            input_cache_write_1h: usdPerToken(model.pricing.cacheWrite1hPerMTokMicro),
          },
        }
      : {}),
  };
}

export function imageModelEntry(model: ImageModel, priced: boolean): ImageModelEntry {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.namespace,
    modes: [...model.modes],
    sizes: [...model.sizes],
    max_input_images: model.maxInputImages,
    ...(priced && model.pricing ? { pricing: { per_image: usdFromMicro(model.pricing.perImageMicro) } } : {}),
  };
}

export function videoModelEntry(model: VideoModel, priced: boolean): VideoModelEntry {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.namespace,
    modes: [...model.modes],
    resolutions: [...model.resolutions],
    ratios: [...model.ratios],
    durations: [...model.durations],
    max_input_images: model.maxInputImages,
    ...(priced && model.pricing ? { pricing: { per_second: usdFromMicro(model.pricing.perSecondMicro) } } : {}),
  };
}

export function renderTextModelList(catalog: Catalog, access: ModelAccess): ModelList<TextModelEntry> {
  return { object: 'list', data: usableTextModels(catalog, access).map((model) => textModelEntry(model, access.keyKind === 'prepaid')) };
}

export function renderImageModelList(catalog: Catalog, access: ModelAccess): ModelList<ImageModelEntry> {
  return { object: 'list', data: usableImageModels(catalog, access).map((model) => imageModelEntry(model, access.keyKind === 'prepaid')) };
}

export function renderVideoModelList(catalog: Catalog, access: ModelAccess): ModelList<VideoModelEntry> {
  return { object: 'list', data: usableVideoModels(catalog, access).map((model) => videoModelEntry(model, access.keyKind === 'prepaid')) };
}

/**
 * `GET /models/{id}`: the model an id names for this key, as its list shows it, whatever its
 * kind (text, then image, then video); 404 `model_not_available` as for any request naming it
 * (docs/api.md, Model ids).
 */
export function renderModel(
  catalog: Catalog,
  sentId: string,
  access: ModelAccess,
): { entry: TextModelEntry | ImageModelEntry | VideoModelEntry; routedFrom: string | null } {
  const priced = access.keyKind === 'prepaid';
  for (const kind of ['text', 'image', 'video'] as const) {
    let resolved;
    try {
      resolved = resolveModelId(catalog, sentId, kind, access);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) continue; // not a model of this kind for this key
      throw error;
    }
    const { model, routedFrom } = resolved;
    const entry =
      model.kind === 'text'
        ? textModelEntry(model, priced)
        : model.kind === 'image'
          ? imageModelEntry(model, priced)
          : videoModelEntry(model, priced);
    return { entry, routedFrom };
  }
  throw modelNotAvailable(sentId);
}
