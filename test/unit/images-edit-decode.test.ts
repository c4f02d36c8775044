import { ApiError } from '../../src/domain/shared/errors';
import { decodeEditForm } from '../../src/protocols/openai-images/decode-request';

const png = Buffer.from('89504e470d0a1a0a', 'hex');
const form = (fields: [string, string][], files: string[] = ['image']) => ({
  fields: fields.map(([name, value]) => ({ name, value })),
  files: files.map((field) => ({ field, data: png })),
});

function refusal(run: () => unknown): { message: string; details: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { message: error.message, details: error.details };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the image edit form, read on the Fields reader', () => {
  test('decodes the text fields and keeps the image parts', () => {
    const decoded = decodeEditForm(
      form(
        [
          ['model', 'gpt-image-1'],
          ['prompt', 'add a hat'],
          ['n', '2'],
          ['size', '1024x1024'],
          ['user', 'u-1'],
        ],
        ['image[]', 'image[]'],
      ),
    );
    expect(decoded).toEqual({
      mode: 'edit',
      modelId: 'gpt-image-1',
      prompt: 'add a hat',
      n: 2,
      size: '1024x1024',
      quality: undefined,
      images: [png, png],
    });
  });

  test('refuses as the JSON decoders do: unknown fields, repeated fields, missing prompt, wire-only settings', () => {
    expect(
      refusal(() =>
        decodeEditForm(
          form([
            ['model', 'm'],
            ['prompt', 'p'],
            ['colour', 'red'],
          ]),
        ),
      ),
    ).toEqual({
      message: 'colour is not a known field',
      details: { field: 'colour', fields: ['colour'] },
    });
    expect(
      refusal(() =>
        decodeEditForm(
          form([
            ['model', 'm'],
            ['prompt', 'p'],
            ['prompt', 'q'],
          ]),
        ),
      ),
    ).toEqual({
      message: 'prompt must be sent once',
      details: { field: 'prompt' },
    });
    expect(refusal(() => decodeEditForm(form([['model', 'm']]))).details).toEqual({ field: 'prompt' });
    expect(
      refusal(() =>
        decodeEditForm(
          form([
            ['model', 'm'],
            ['prompt', 'p'],
            ['n', 'two'],
          ]),
        ),
      ).message,
    ).toBe('n must be an integer from 1 to 4');
    expect(
      refusal(() =>
        decodeEditForm(
          form([
            ['model', 'm'],
            ['prompt', 'p'],
            ['stream', 'true'],
          ]),
        ),
      ).details,
    ).toEqual({ field: 'stream' });
    expect(
      refusal(() =>
        decodeEditForm(
          form(
            [
              ['model', 'm'],
              ['prompt', 'p'],
            ],
            ['image', 'mask'],
          ),
        ),
      ).details,
    ).toEqual({ field: 'mask' });
  });
});
