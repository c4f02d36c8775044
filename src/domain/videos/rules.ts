import { createHash } from 'node:crypto';
import type { VideoModel } from '../catalog/types';
import { badRequest } from '../shared/errors';
import type { VideoInputImage } from './ports';

/** Files kept after completion, and idempotency keys after first use. */
export const VIDEO_RETENTION_MS = 7 * 24 * 3600_000;
export const IDEMPOTENCY_KEY_TTL_MS = 7 * 24 * 3600_000;
export const MAX_VIDEO_PROMPT_BYTES = 4_000;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The create fields as the client sent them (JSON values, or strings from a multipart form). */
export interface VideoCreateFields {
  model?: unknown;
  prompt?: unknown;
  seconds?: unknown;
  resolution?: unknown;
  ratio?: unknown;
  /** OpenAI's `WxH` form (e.g. `1280x720`), read as a resolution and a ratio. */
  size?: unknown;
}

export interface ValidVideoRequest {
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
}

export const VIDEO_CREATE_FIELDS = ['model', 'prompt', 'seconds', 'resolution', 'ratio', 'size'] as const;

export function requireModelField(fields: VideoCreateFields): string {
  if (typeof fields.model !== 'string' || fields.model.trim() === '') throw badRequest('model is required: a video model id from GET /v1/videos/models', { field: 'model' });
  return fields.model;
}

const listed = (values: readonly (string | number)[]) => values.join(', ');

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`, { field });
  return value;
}

/** `seconds`: an integer (a JSON number, or digits in a form field / OpenAI's string form). */
function parseSeconds(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(n) || n <= 0) throw badRequest('seconds must be a positive integer', { field: 'seconds' });
  return n;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** `1280x720` → `720p` and `16:9`. */
function fromSize(size: string): { resolution: string; ratio: string } {
  const match = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  if (!match) throw badRequest("size must be '<width>x<height>', e.g. '1280x720'", { field: 'size' });
  const width = Number(match[1]);
  const height = Number(match[2]);
  const d = gcd(width, height);
  return { resolution: `${Math.min(width, height)}p`, ratio: `${width / d}:${height / d}` };
}

/**
 * Checks the request against the model's own lists (the authoritative allowed values);
 * omitted fields take the model's first listed value. Every refusal names its field.
 */
export function validateVideoRequest(model: VideoModel, fields: VideoCreateFields, inputs: readonly Pick<VideoInputImage, 'role'>[]): ValidVideoRequest {
  const prompt = optionalString(fields.prompt, 'prompt');
  if (prompt === undefined || prompt.trim() === '') throw badRequest('prompt is required', { field: 'prompt' });
  if (prompt.includes('\u0000')) throw badRequest('prompt cannot contain NUL characters', { field: 'prompt' });
  if (Buffer.byteLength(prompt) > MAX_VIDEO_PROMPT_BYTES) throw badRequest(`prompt must be at most ${MAX_VIDEO_PROMPT_BYTES} bytes`, { field: 'prompt' });

  const seconds = parseSeconds(fields.seconds) ?? model.durations[0]!;
  if (!model.durations.includes(seconds)) throw badRequest(`seconds must be one of ${listed(model.durations)} for ${model.id}`, { field: 'seconds', allowed: model.durations });

  const size = optionalString(fields.size, 'size');
  const fromSizeField = size === undefined ? undefined : fromSize(size);
  const resolution = optionalString(fields.resolution, 'resolution') ?? fromSizeField?.resolution ?? model.resolutions[0]!;
  if (!/^\d+p$/.test(resolution)) throw badRequest("resolution must be a label like '720p'", { field: 'resolution' });
  if (!model.resolutions.includes(resolution)) {
    const field = fields.resolution === undefined && size !== undefined ? 'size' : 'resolution';
    throw badRequest(`${field} must give one of the resolutions ${listed(model.resolutions)} for ${model.id}`, { field, allowed: model.resolutions });
  }
  const ratio = optionalString(fields.ratio, 'ratio') ?? fromSizeField?.ratio ?? model.ratios[0]!;
  if (!model.ratios.includes(ratio)) {
    const field = fields.ratio === undefined && size !== undefined ? 'size' : 'ratio';
    throw badRequest(`${field} must give one of the ratios ${listed(model.ratios)} for ${model.id}`, { field, allowed: model.ratios });
  }

  if (inputs.length > 0) {
    const field = inputs[0]!.role;
    if (!model.modes.includes('image-to-video')) throw badRequest(`${field}: ${model.id} does not take input images (no image-to-video mode)`, { field });
    if (inputs.length > model.maxInputImages) {
      throw badRequest(`${field}: ${model.id} takes at most ${model.maxInputImages} input image${model.maxInputImages === 1 ? '' : 's'}, got ${inputs.length}`, { field, max_input_images: model.maxInputImages });
    }
  } else if (!model.modes.includes('text-to-video')) {
    throw badRequest(`input_reference: ${model.id} needs an input image (no text-to-video mode)`, { field: 'input_reference' });
  }
  return { prompt, seconds, resolution, ratio };
}

export function parseIdempotencyKey(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  const key = Array.isArray(value) ? value[0]! : value;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw badRequest(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`, { field: 'Idempotency-Key' });
  }
  return key;
}

/** What "the same body" means for an idempotency key: the model as sent, the valid fields and each file's digest. */
export function requestHash(sentModel: string, request: ValidVideoRequest, inputs: readonly VideoInputImage[]): string {
  const files = inputs.map((input) => [input.role, input.mediaType, createHash('sha256').update(input.bytes).digest('hex')]);
  return createHash('sha256').update(JSON.stringify([sentModel, request.prompt, request.seconds, request.resolution, request.ratio, files])).digest('hex');
}

const VIDEO_ID = /^vid_[0-9a-hjkmnp-tv-z]{26}$/;

/** Whether a path or cursor value has the shape of a video id; anything else names no video (and is never sent to the database). */
export const isVideoId = (value: string): boolean => VIDEO_ID.test(value);
