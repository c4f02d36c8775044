import { builtinCatalog } from '../../src/domain/catalog/catalog';
import type { VideoModel } from '../../src/domain/catalog/types';
import { ApiError } from '../../src/domain/shared/errors';
import { parseIdempotencyKey, requestHash, validateVideoRequest } from '../../src/domain/videos/rules';

const catalog = builtinCatalog();
const sora = catalog.byId.get('openai/sora-2') as VideoModel;
const sandbox = catalog.byId.get('sandbox/video') as VideoModel;

const refusal = (run: () => unknown): { message: string; field: unknown } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { message: error.message, field: error.details.field };
    throw error;
  }
  throw new Error('expected a refusal');
};

test('omitted fields take the model first listed values; digit strings are accepted for seconds', () => {
  expect(validateVideoRequest(sandbox, { prompt: 'p' }, [])).toEqual({ prompt: 'p', seconds: 2, resolution: '480p', ratio: '16:9' });
  expect(validateVideoRequest(sora, { prompt: 'p', seconds: '12', ratio: '9:16' }, [])).toEqual({ prompt: 'p', seconds: 12, resolution: '720p', ratio: '9:16' });
});

test("OpenAI's size is read as a resolution and a ratio, and must land on listed values", () => {
  expect(validateVideoRequest(sora, { prompt: 'p', size: '720x1280' }, [])).toMatchObject({ resolution: '720p', ratio: '9:16' });
  expect(refusal(() => validateVideoRequest(sora, { prompt: 'p', size: '1920x1080' }, [])).field).toBe('size');
  expect(refusal(() => validateVideoRequest(sora, { prompt: 'p', size: 'big' }, [])).field).toBe('size');
});

test('image inputs need the image-to-video mode and fit max_input_images; the refusal names the file field', () => {
  expect(validateVideoRequest(sora, { prompt: 'p' }, [{ role: 'input_reference' }])).toMatchObject({ seconds: 4 });
  const tooMany = refusal(() => validateVideoRequest(sora, { prompt: 'p' }, [{ role: 'reference' }, { role: 'reference' }]));
  expect(tooMany.field).toBe('reference');
  expect(tooMany.message).toContain('at most 1');
  const textOnly: VideoModel = { ...sandbox, modes: ['text-to-video'] };
  expect(refusal(() => validateVideoRequest(textOnly, { prompt: 'p' }, [{ role: 'first_frame' }])).field).toBe('first_frame');
});

test.each([
  ['prompt', { prompt: 42 }],
  ['prompt', { prompt: '   ' }],
  ['seconds', { prompt: 'p', seconds: -4 }],
  ['seconds', { prompt: 'p', seconds: '4.0' }],
  ['resolution', { prompt: 'p', resolution: 720 }],
  ['ratio', { prompt: 'p', ratio: '21:9' }],
])('%s is named in the refusal of %j', (field, fields) => {
  expect(refusal(() => validateVideoRequest(sora, fields, [])).field).toBe(field);
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
