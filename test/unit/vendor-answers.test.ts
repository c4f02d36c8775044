import { ProviderError } from '../../src/domain/generation/errors';
import { imageFromContent } from '../../src/protocols/gemini-images/vendor-answer';
import { imageFromPrediction } from '../../src/protocols/imagen/vendor-answer';
import { imageFromAnswer } from '../../src/protocols/openai-images/vendor-answer';
import { videoJobFromAnswer, videoJobState } from '../../src/protocols/openai-videos/vendor-answer';
import { operationFromAnswer, operationState } from '../../src/protocols/veo/vendor-answer';
import { retryAfterMs } from '../../src/providers/transport/errors';

/** Media vendor answers are validated (zod) before they are read; a wrong one is the vendor's failure, never a crash. */

// A 1×1 PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
const b64 = PNG.toString('base64');

const providerError = (run: () => unknown): ProviderError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('expected a ProviderError');
};

describe('OpenAI Images answers', () => {
  test('the first image, with its token usage', () => {
    const image = imageFromAnswer(
      { created: 1, data: [{ b64_json: b64 }], usage: { input_tokens: 12, output_tokens: 4160, total_tokens: 4172 } },
      'openai',
    );
    expect(image.format).toBe('png');
    expect(image.data.equals(PNG)).toBe(true);
    expect(image.usage).toEqual({ inputTokens: 12, outputTokens: 4160 });
  });

  test('usage that is not two counts is left out; the image is still delivered', () => {
    expect(imageFromAnswer({ data: [{ b64_json: b64 }], usage: { input_tokens: '12', output_tokens: 4 } }, 'openai').usage).toBeUndefined();
    expect(imageFromAnswer({ data: [{ b64_json: b64 }], usage: { input_tokens: -1, output_tokens: 4 } }, 'openai').usage).toBeUndefined();
  });

  test.each([[null], ['text'], [{}], [{ data: [] }], [{ data: [{ url: 'https://x' }] }], [{ data: [{ b64_json: 42 }] }]])(
    '%j has no image',
    (answer) => {
      expect(providerError(() => imageFromAnswer(answer, 'openai'))).toMatchObject({
        message: 'openai answered without an image.',
        kind: 'invalid_answer',
        status: 502,
      });
    },
  );

  test('bytes that are not an image', () => {
    expect(providerError(() => imageFromAnswer({ data: [{ b64_json: Buffer.from('GIF89a').toString('base64') }] }, 'openai')).message).toBe(
      'openai answered with image bytes that are not PNG, JPEG or WebP.',
    );
  });
});

describe('Imagen and Gemini image answers', () => {
  test('a prediction, a filtered one, a malformed one', () => {
    expect(imageFromPrediction({ predictions: [{ bytesBase64Encoded: b64, mimeType: 'image/jpeg' }] }, 'gemini').format).toBe('png'); // the bytes decide
    expect(providerError(() => imageFromPrediction({ predictions: [{ raiFilteredReason: 'Unsafe.' }] }, 'gemini')).message).toBe(
      'gemini filtered the image: Unsafe.',
    );
    expect(providerError(() => imageFromPrediction({ predictions: 'none' }, 'gemini')).message).toBe(
      'gemini answered without an image (the prompt may have been filtered).',
    );
  });

  test('an inline image part, a block reason, a malformed answer', () => {
    expect(
      imageFromContent(
        { candidates: [{ content: { parts: [{ text: 'Here:' }, { inlineData: { mimeType: 'image/png', data: b64 } }] } }] },
        'gemini',
      ).format,
    ).toBe('png');
    expect(providerError(() => imageFromContent({ promptFeedback: { blockReason: 'SAFETY' } }, 'gemini')).message).toBe(
      'gemini answered without an image (SAFETY).',
    );
    expect(providerError(() => imageFromContent({ candidates: 'x' }, 'gemini')).message).toBe('gemini answered without an image.');
  });
});

describe('OpenAI video objects', () => {
  test('states: queued and in progress run, completed, failed with the vendor code', () => {
    expect(videoJobState(videoJobFromAnswer({ id: 'video_1', object: 'video', status: 'in_progress', progress: 40 }, 'openai'))).toEqual({
      status: 'running',
      progress: 40,
    });
    expect(videoJobState(videoJobFromAnswer({ id: 'video_1', status: 'queued', progress: 'soon' }, 'openai'))).toEqual({
      status: 'running',
      progress: 0,
    });
    expect(videoJobState(videoJobFromAnswer({ id: 'video_1', status: 'completed' }, 'openai'))).toEqual({ status: 'completed' });
    expect(
      videoJobState(
        videoJobFromAnswer({ id: 'video_1', status: 'failed', error: { code: 'moderation_blocked', message: 'Blocked.' } }, 'openai'),
      ),
    ).toEqual({ status: 'failed', code: 'moderation_blocked', message: 'Blocked.' });
  });

  test.each([[{ status: 'queued' }], [{ id: '', status: 'queued' }], [{ id: 'video_1', status: 'paused' }], [[]]])(
    '%j is not a video object',
    (answer) => {
      expect(providerError(() => videoJobFromAnswer(answer, 'openai'))).toMatchObject({
        message: 'openai answered a video object without an id or status.',
        kind: 'invalid_answer',
      });
    },
  );
});

describe('Veo operations', () => {
  const done = (response: unknown) =>
    operationState(operationFromAnswer({ name: 'models/veo/operations/1', done: true, response }, 'gemini'));

  test('running, failed, filtered, completed', () => {
    expect(operationState(operationFromAnswer({ name: 'models/veo/operations/1' }, 'gemini'))).toEqual({ status: 'running', progress: 0 });
    expect(operationState(operationFromAnswer({ name: 'op', done: true, error: { code: 3, message: 'Bad prompt.' } }, 'gemini'))).toEqual({
      status: 'failed',
      code: 'generation_failed',
      message: 'Bad prompt.',
    });
    expect(done({ generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['Filtered for safety.'] } })).toEqual({
      status: 'failed',
      code: 'content_filter',
      message: 'Filtered for safety.',
    });
    expect(done({ generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://example/files/1:download' } }] } })).toEqual({
      status: 'completed',
    });
  });

  test('an operation without a name, or with fields of the wrong type, is the vendor failing', () => {
    expect(providerError(() => operationFromAnswer({ done: true }, 'gemini')).message).toBe(
      'gemini answered a Veo operation without a name.',
    );
    expect(providerError(() => operationFromAnswer({ name: 'op', done: 'yes' }, 'gemini')).kind).toBe('invalid_answer');
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  test.each([
    [{ 'retry-after': '120' }, 120_000],
    [{ 'retry-after': '1.5' }, 1_500],
    [{ 'retry-after': 'Sun, 06 Dec 2026 12:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Sun, 06 Dec 2026 11:00:00 GMT' }, 0],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after': ['3', '9'] }, 3_000],
    [{ 'retry-after': '9999999' }, 24 * 3600_000],
    [{ 'retry-after': 'soon' }, null],
    [{}, null],
  ])('%j → %p ms', (headers, expected) => {
    expect(retryAfterMs(headers, now)).toBe(expected);
  });
});
