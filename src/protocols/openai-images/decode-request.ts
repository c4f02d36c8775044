import type { ImageRequestInput } from '../../domain/images/request';
import { Fields, refuseField, refuseUnknownFields } from '../decode-fields';
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

/** `POST /images/generations`: the JSON body, read by the field reader every JSON decoder uses. */
export function decodeGenerationBody(body: unknown): ImageRequestInput {
  const fields = Fields.body(body).allowOnly(GENERATION_FIELDS);
  const stream = fields.raw('stream');
  checkWireOnly(fields.string('response_format'), stream === true || stream === 'true');
  const n = fields.raw('n');
  if (n !== undefined && typeof n !== 'number') refuseField('n', 'must be an integer from 1 to 4');
  return {
    mode: 'generate',
    modelId: requiredString(fields.string('model'), 'model'),
    prompt: requiredString(fields.string('prompt'), 'prompt'),
    n: n ?? 1,
    size: fields.string('size'),
    quality: fields.string('quality'),
    images: [],
  };
}

/** `POST /images/edits`: the multipart form's text fields, on the same reader as the JSON body, and its image files. */
export function decodeEditForm(form: EditFormInput): ImageRequestInput {
  const fileFields = form.files.map((file) => file.field);
  if (fileFields.includes('mask')) refuseField('mask', 'is not supported on image edits (no masks): send only image parts');
  refuseUnknownFields(fileFields, ['image', 'image[]']);
  const fields = Fields.form(form.fields, EDIT_FIELDS);
  checkWireOnly(fields.string('response_format'), fields.string('stream') === 'true');
  const nText = fields.string('n');
  const n = nText === undefined ? 1 : /^-?\d+$/.test(nText.trim()) ? Number(nText) : NaN;
  if (Number.isNaN(n)) refuseField('n', 'must be an integer from 1 to 4');
  return {
    mode: 'edit',
    modelId: requiredString(fields.string('model'), 'model'),
    prompt: requiredString(fields.string('prompt'), 'prompt'),
    n,
    size: fields.string('size'),
    quality: fields.string('quality'),
    images: form.files.map((file) => file.data),
  };
}

function requiredString(value: string | undefined, name: string): string {
  if (value === undefined || value === '') refuseField(name, 'is required');
  return value;
}

/** Images are answered whole and base64-encoded only: no URLs, no partial-image streams. */
function checkWireOnly(responseFormat: string | undefined, stream: boolean): void {
  if (responseFormat !== undefined && responseFormat !== 'b64_json') {
    refuseField('response_format', `must be 'b64_json' (images are answered base64-encoded), got '${responseFormat}'`);
  }
  if (stream) refuseField('stream', 'is not supported for images (answers are whole): omit stream');
}
