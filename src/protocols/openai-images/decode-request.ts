import type { ImageRequestInput } from '../../domain/images/request';
import { badRequest } from '../../domain/shared/errors';
import { refuseUnknownFields } from '../decode-fields';
import { EDIT_FIELDS, GENERATION_FIELDS } from './types';

/**
 * Decodes client requests of the OpenAI Images API into the domain's ImageRequestInput:
 * types and wire-only rules here (unknown fields, `response_format`, `stream`, `mask`); the
 * model-dependent rules (size, quality, n range, prompt bytes, input images) in the domain.
 */

/** A text field or a file part as the multipart reader hands them over. */
export interface EditFormInput {
  fields: readonly { name: string; value: string }[];
  files: readonly { field: string; data: Buffer }[];
}

/** `POST /images/generations`: the JSON body. */
export function decodeGenerationBody(body: unknown): ImageRequestInput {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.', { field: null });
  const fields = body as Record<string, unknown>;
  refuseUnknownFields(Object.keys(fields), GENERATION_FIELDS);
  const optionalString = (name: string): string | undefined => {
    const value = fields[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw badRequest(`${name}: must be a string.`, { field: name });
    return value;
  };
  checkWireOnly(optionalString('response_format'), fields.stream === true || fields.stream === 'true');
  const n = fields.n;
  if (n !== undefined && n !== null && typeof n !== 'number') throw badRequest('n: must be an integer from 1 to 4.', { field: 'n' });
  return {
    mode: 'generate',
    modelId: requiredString(optionalString('model'), 'model'),
    prompt: requiredString(optionalString('prompt'), 'prompt'),
    n: typeof n === 'number' ? n : 1,
    size: optionalString('size'),
    quality: optionalString('quality'),
    images: [],
  };
}

/** `POST /images/edits`: the multipart form's fields and files. */
export function decodeEditForm(form: EditFormInput): ImageRequestInput {
  const fileFields = form.files.map((file) => file.field);
  if (fileFields.includes('mask')) throw badRequest('mask: masks are not supported on image edits; send only image parts.', { field: 'mask' });
  refuseUnknownFields(fileFields, ['image', 'image[]']);
  refuseUnknownFields(form.fields.map((field) => field.name), EDIT_FIELDS);
  const single = (name: string): string | undefined => {
    const values = form.fields.filter((field) => field.name === name).map((field) => field.value);
    if (values.length > 1) throw badRequest(`${name}: sent more than once.`, { field: name });
    return values[0];
  };
  checkWireOnly(single('response_format'), single('stream') === 'true');
  const nText = single('n');
  const n = nText === undefined ? 1 : /^-?\d+$/.test(nText.trim()) ? Number(nText) : NaN;
  if (Number.isNaN(n)) throw badRequest('n: must be an integer from 1 to 4.', { field: 'n' });
  return {
    mode: 'edit',
    modelId: requiredString(single('model'), 'model'),
    prompt: requiredString(single('prompt'), 'prompt'),
    n,
    size: single('size'),
    quality: single('quality'),
    images: form.files.map((file) => file.data),
  };
}

function requiredString(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw badRequest(`${name}: is required.`, { field: name });
  return value;
}

/** Images are answered whole and base64-encoded only: no URLs, no partial-image streams. */
function checkWireOnly(responseFormat: string | undefined, stream: boolean): void {
  if (responseFormat !== undefined && responseFormat !== 'b64_json') {
    throw badRequest(`response_format: only 'b64_json' is supported, got '${responseFormat}'.`, { field: 'response_format' });
  }
  if (stream) throw badRequest('stream: streamed image answers are not supported; omit stream.', { field: 'stream' });
}
