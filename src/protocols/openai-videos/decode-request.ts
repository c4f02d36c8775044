import { badRequest } from '../../domain/shared/errors';
import { IMAGE_MIME_TYPES, sniffImageFormat } from '../../domain/shared/image-bytes';
import { VIDEO_INPUT_ROLES, type VideoInputImage, type VideoInputRole } from '../../domain/videos/ports';
import type { VideoRequestInput } from '../../domain/videos/rules';
import { Fields, refuseUnknownFields } from '../decode-fields';

/**
 * Decodes `POST /v1/videos` of the OpenAI Videos API (a JSON body or a multipart form with image
 * parts) into the domain's VideoRequestInput: the wire names, types and OpenAI's `WxH` size here;
 * the model's rules (durations, resolutions, ratios, modes) in domain/videos/rules.ts.
 */

/** The create body's fields; the API document is built from this list. */
export const VIDEO_CREATE_FIELDS = ['model', 'prompt', 'seconds', 'resolution', 'ratio', 'size'] as const;

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The multipart form as the reader hands it over. */
export interface VideoCreateForm {
  fields: readonly { name: string; value: string }[];
  files: readonly { field: string; data: Buffer }[];
}

/** The JSON body (an object; `bodyObject` refused anything else). */
export function decodeVideoCreateBody(body: Record<string, unknown>): VideoRequestInput {
  refuseUnknownFields(Object.keys(body), VIDEO_CREATE_FIELDS);
  return decodeFields(body, []);
}

/** The multipart form: the JSON body's fields as text, each once, plus image files checked by their bytes. */
export function decodeVideoCreateForm(form: VideoCreateForm): VideoRequestInput {
  const fields = Fields.form(form.fields, VIDEO_CREATE_FIELDS).value;
  const inputs: VideoInputImage[] = [];
  for (const file of form.files) {
    const role = roleOf(file.field);
    if (!role)
      throw badRequest(`${file.field} is not a known file field (expected ${VIDEO_INPUT_ROLES.join(', ')})`, { field: file.field });
    if (role !== 'reference' && inputs.some((input) => input.role === role)) throw badRequest(`${role} must be sent once`, { field: role });
    const format = sniffImageFormat(file.data);
    if (!format) throw badRequest(`${file.field} must be a PNG, JPEG or WebP image (checked by its bytes)`, { field: file.field });
    inputs.push({ role, mediaType: IMAGE_MIME_TYPES[format], bytes: file.data });
  }
  return decodeFields(fields, inputs);
}

/** `Idempotency-Key`: 1 to 255 visible ASCII characters, or absent. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  const key = Array.isArray(value) ? value[0]! : value;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw badRequest(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`, { field: 'Idempotency-Key' });
  }
  return key;
}

function roleOf(field: string): VideoInputRole | null {
  const name = field.endsWith('[]') ? field.slice(0, -2) : field;
  return (VIDEO_INPUT_ROLES as readonly string[]).includes(name) ? (name as VideoInputRole) : null;
}

function decodeFields(fields: Record<string, unknown>, inputs: VideoInputImage[]): VideoRequestInput {
  const model = fields.model;
  if (typeof model !== 'string' || model.trim() === '')
    throw badRequest('model is required: a video model id from GET /v1/videos/models', { field: 'model' });
  const size = optionalString(fields.size, 'size');
  return {
    modelId: model,
    prompt: optionalString(fields.prompt, 'prompt'),
    seconds: parseSeconds(fields.seconds),
    resolution: optionalString(fields.resolution, 'resolution'),
    ratio: optionalString(fields.ratio, 'ratio'),
    size: size === undefined ? undefined : parseSize(size),
    inputs,
  };
}

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

/** OpenAI's `WxH` (`1280x720`). */
function parseSize(size: string): { width: number; height: number } {
  const match = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  if (!match) throw badRequest("size must be '<width>x<height>', e.g. '1280x720'", { field: 'size' });
  return { width: Number(match[1]), height: Number(match[2]) };
}
