import { builtinCatalog } from '../../src/domain/catalog/catalog';
import type { VideoModel } from '../../src/domain/catalog/types';
import { ApiError } from '../../src/domain/shared/errors';
import { requestHash, validateVideoRequest, type VideoRequestInput } from '../../src/domain/videos/rules';
import { decodeVideoCreateBody, decodeVideoCreateForm, parseIdempotencyKey } from '../../src/protocols/openai-videos/decode-request';
import { detailsForPlane } from '../../src/domain/shared/errors';
import { REST_FIELD_NAMES } from '../../src/rest/field-names';

const catalog = builtinCatalog();
const sora = catalog.byId.get('openai/sora-2') as VideoModel;
const sandbox = catalog.byId.get('sandbox/video') as VideoModel;

const refusal = (run: () => unknown): { message: string; field: unknown } => {
  try {
    run();
  } catch (error) {
    // The field as a REST caller sent it (domain rules carry their field key).
    if (error instanceof ApiError) return { message: error.message, field: detailsForPlane(error, REST_FIELD_NAMES).field };
    throw error;
  }
  throw new Error('expected a refusal');
};

/** What a JSON body decodes to, then the model's rules over it, as the service runs them. */
const validate = (model: VideoModel, body: Record<string, unknown>, inputs: VideoRequestInput['inputs'] = []) => {
  const input = decodeVideoCreateBody({ model: model.id, ...body });
  return validateVideoRequest(model, input, inputs.length > 0 ? inputs : input.inputs);
};
const image = (role: 'input_reference' | 'reference' | 'first_frame') => ({ role, mediaType: 'image/png', bytes: Buffer.alloc(0) });

test('omitted fields take the model first listed values; digit strings are accepted for seconds', () => {
  expect(validate(sandbox, { prompt: 'p' })).toEqual({ prompt: 'p', seconds: 2, resolution: '480p', ratio: '16:9' });
  expect(validate(sora, { prompt: 'p', seconds: '12', ratio: '9:16' })).toEqual({
    prompt: 'p',
    seconds: 12,
    resolution: '720p',
    ratio: '9:16',
  });
});

test("OpenAI's size is read as a resolution and a ratio, and must land on listed values", () => {
  expect(validate(sora, { prompt: 'p', size: '720x1280' })).toMatchObject({ resolution: '720p', ratio: '9:16' });
  expect(refusal(() => validate(sora, { prompt: 'p', size: '1920x1080' })).field).toBe('size');
  expect(refusal(() => validate(sora, { prompt: 'p', size: 'big' })).field).toBe('size');
});

test('image inputs need the image-to-video mode and fit max_input_images; the refusal names the file field', () => {
  expect(validate(sora, { prompt: 'p' }, [image('input_reference')])).toMatchObject({ seconds: 4 });
  const tooMany = refusal(() => validate(sora, { prompt: 'p' }, [image('reference'), image('reference')]));
  expect(tooMany.field).toBe('reference');
  expect(tooMany.message).toContain('at most 1');
  const textOnly: VideoModel = { ...sandbox, modes: ['text-to-video'] };
  expect(refusal(() => validate(textOnly, { prompt: 'p' }, [image('first_frame')])).field).toBe('first_frame');
});

test.each([
  ['prompt', { prompt: 42 }],
  ['prompt', { prompt: '   ' }],
  ['seconds', { prompt: 'p', seconds: -4 }],
  ['seconds', { prompt: 'p', seconds: '4.0' }],
  ['resolution', { prompt: 'p', resolution: 720 }],
  ['ratio', { prompt: 'p', ratio: '21:9' }],
  ['colour', { prompt: 'p', colour: 'red' }],
])('%s is named in the refusal of %j', (field, fields) => {
  expect(refusal(() => validate(sora, fields)).field).toBe(field);
});

test('a form names its model and each field once; image parts are checked by their bytes', () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const form = (fields: [string, string][], files: [string, Buffer][] = []) =>
    decodeVideoCreateForm({
      fields: fields.map(([name, value]) => ({ name, value })),
      files: files.map(([field, data]) => ({ field, data })),
    });
  expect(
    form(
      [
        ['model', 'sandbox/video'],
        ['prompt', 'p'],
      ],
      [['input_reference', png]],
    ),
  ).toMatchObject({ modelId: 'sandbox/video', inputs: [{ role: 'input_reference', mediaType: 'image/png' }] });
  expect(refusal(() => form([['prompt', 'p']])).field).toBe('model');
  expect(
    refusal(() =>
      form([
        ['model', 'm'],
        ['prompt', 'a'],
        ['prompt', 'b'],
      ]),
    ).field,
  ).toBe('prompt');
  expect(refusal(() => form([['model', 'm']], [['input_reference', Buffer.from('not an image')]])).field).toBe('input_reference');
  expect(refusal(() => form([['model', 'm']], [['mask', png]])).field).toBe('mask');
});

test('idempotency keys are visible ASCII up to 255 characters; the body hash ignores nothing that matters', () => {
  expect(parseIdempotencyKey(undefined)).toBeNull();
  expect(parseIdempotencyKey('abc-123_X')).toBe('abc-123_X');
  expect(refusal(() => parseIdempotencyKey('a b')).field).toBe('Idempotency-Key');
  expect(refusal(() => parseIdempotencyKey('x'.repeat(256))).field).toBe('Idempotency-Key');
  const request = { prompt: 'p', seconds: 4, resolution: '720p', ratio: '16:9' };
  const image = { role: 'input_reference' as const, mediaType: 'image/png', bytes: Buffer.from('one') };
  expect(requestHash('sora-2', request, [])).toBe(requestHash('sora-2', { ...request }, []));
  expect(requestHash('sora-2', request, [])).not.toBe(requestHash('openai/sora-2', request, []));
  expect(requestHash('sora-2', request, [image])).not.toBe(requestHash('sora-2', request, [{ ...image, bytes: Buffer.from('two') }]));
});
