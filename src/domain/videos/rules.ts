import { createHash } from 'node:crypto';
import type { VideoModel } from '../catalog/types';
import { badRequest } from '../shared/errors';
import type { VideoInputImage } from './ports';

/** Files kept after completion, and idempotency keys after first use. */
export const VIDEO_RETENTION_MS = 7 * 24 * 3600_000;
export const IDEMPOTENCY_KEY_TTL_MS = 7 * 24 * 3600_000;
export const MAX_VIDEO_PROMPT_BYTES = 4_000;

/** A create request as a protocol decoder hands it over: types checked, the model's rules not yet. */
export interface VideoRequestInput {
  /** The model id exactly as sent. */
  modelId: string;
  prompt?: string;
  seconds?: number;
  resolution?: string;
  ratio?: string;
  /** A frame size in pixels, read as a resolution and a ratio when those are not given. */
  size?: { width: number; height: number };
  inputs: readonly VideoInputImage[];
}

export interface ValidVideoRequest {
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
}

const listed = (values: readonly (string | number)[]) => values.join(', ');

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** 1280×720 → `720p` and `16:9`. */
function fromSize(size: { width: number; height: number }): { resolution: string; ratio: string } {
  const d = gcd(size.width, size.height);
  return { resolution: `${Math.min(size.width, size.height)}p`, ratio: `${size.width / d}:${size.height / d}` };
}

/**
 * Checks the request against the model's own lists (the authoritative allowed values);
 * omitted fields take the model's first listed value. Every refusal names its field.
 */
export function validateVideoRequest(
  model: VideoModel,
  input: Omit<VideoRequestInput, 'modelId' | 'inputs'>,
  inputs: readonly Pick<VideoInputImage, 'role'>[],
): ValidVideoRequest {
  const prompt = input.prompt;
  if (prompt === undefined || prompt.trim() === '') throw badRequest('A prompt is required', { field: 'video.prompt' });
  if (prompt.includes('\u0000')) throw badRequest('The prompt cannot contain NUL characters', { field: 'video.prompt' });
  if (Buffer.byteLength(prompt) > MAX_VIDEO_PROMPT_BYTES)
    throw badRequest(`The prompt must be at most ${MAX_VIDEO_PROMPT_BYTES} bytes`, { field: 'video.prompt' });

  const seconds = input.seconds ?? model.durations[0]!;
  if (!model.durations.includes(seconds))
    throw badRequest(`Duration must be one of ${listed(model.durations)} seconds for ${model.id}`, {
      field: 'video.seconds',
      allowed: model.durations,
    });

  const fromSizeField = input.size === undefined ? undefined : fromSize(input.size);
  const resolution = input.resolution ?? fromSizeField?.resolution ?? model.resolutions[0]!;
  if (!/^\d+p$/.test(resolution)) throw badRequest("Resolution must be a label like '720p'", { field: 'video.resolution' });
  if (!model.resolutions.includes(resolution)) {
    const field = input.resolution === undefined && input.size !== undefined ? 'video.size' : 'video.resolution';
    throw badRequest(`Resolution must be one of ${listed(model.resolutions)} for ${model.id}`, { field, allowed: model.resolutions });
  }
  const ratio = input.ratio ?? fromSizeField?.ratio ?? model.ratios[0]!;
  if (!model.ratios.includes(ratio)) {
    const field = input.ratio === undefined && input.size !== undefined ? 'video.size' : 'video.ratio';
    throw badRequest(`Aspect ratio must be one of ${listed(model.ratios)} for ${model.id}`, { field, allowed: model.ratios });
  }

  // An input image's role is also the name it was sent under.
  if (inputs.length > 0) {
    const field = inputs[0]!.role;
    if (!model.modes.includes('image-to-video'))
      throw badRequest(`${model.id} does not take input images (no image-to-video mode)`, { field });
    if (inputs.length > model.maxInputImages) {
      throw badRequest(
        `${model.id} takes at most ${model.maxInputImages} input image${model.maxInputImages === 1 ? '' : 's'}, got ${inputs.length}`,
        { field, max_input_images: model.maxInputImages },
      );
    }
  } else if (!model.modes.includes('text-to-video')) {
    throw badRequest(`${model.id} needs an input image (no text-to-video mode)`, { field: 'input_reference' });
  }
  return { prompt, seconds, resolution, ratio };
}

/** What "the same body" means for an idempotency key: the model as sent, the valid fields and each file's digest. */
export function requestHash(sentModel: string, request: ValidVideoRequest, inputs: readonly VideoInputImage[]): string {
  const files = inputs.map((input) => [input.role, input.mediaType, createHash('sha256').update(input.bytes).digest('hex')]);
  return createHash('sha256')
    .update(JSON.stringify([sentModel, request.prompt, request.seconds, request.resolution, request.ratio, files]))
    .digest('hex');
}

const VIDEO_ID = /^vid_[0-9a-hjkmnp-tv-z]{26}$/;

/** Whether a path or cursor value has the shape of a video id; anything else names no video (and is never sent to the database). */
export const isVideoId = (value: string): boolean => VIDEO_ID.test(value);
