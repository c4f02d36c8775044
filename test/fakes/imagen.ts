import { fakeImageBase64, mimeOf, startImageFake, type ImageFake } from './openai-images';

/**
 * A fake Imagen on the Gemini API: `POST /v1beta/models/{model}:predict` with `x-goog-api-key`,
 * `instances[].prompt` and `parameters.sampleCount` / `aspectRatio`, answered with
 * `predictions[].bytesBase64Encoded` and `mimeType`. Imagen 4's 1K output sizes per ratio.
 */
export const IMAGEN_SIZES: Record<string, { width: number; height: number }> = {
  '1:1': { width: 1024, height: 1024 },
  '3:4': { width: 896, height: 1280 },
  '4:3': { width: 1280, height: 896 },
  '9:16': { width: 768, height: 1408 },
  '16:9': { width: 1408, height: 768 },
};

const PREDICT = /^\/v1beta\/models\/([^/:]+):predict$/;

export async function startFakeImagen(options: { apiKey?: string } = {}): Promise<ImageFake> {
  const apiKey = options.apiKey ?? 'gemini-fake-key';
  return startImageFake({ apiKey, basePath: '' }, async ({ request, reply, json }) => {
    const error = (code: number, status: string, message: string) => json(code, { error: { code, message, status } });
    if (!PREDICT.test(request.path) || request.method !== 'POST')
      return error(404, 'NOT_FOUND', `Requested entity was not found: ${request.path}`);
    if (request.headers['x-goog-api-key'] !== apiKey)
      return error(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    if (reply.status)
      return error(reply.status, reply.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT', reply.errorMessage ?? 'The fake vendor failed.');
    const body = request.json ?? {};
    if (!Array.isArray(body.instances) || typeof body.instances[0]?.prompt !== 'string')
      return error(400, 'INVALID_ARGUMENT', 'instances[0].prompt is required');
    const ratio = body.parameters?.aspectRatio ?? '1:1';
    const size = IMAGEN_SIZES[ratio];
    if (!size) return error(400, 'INVALID_ARGUMENT', `Unsupported aspect ratio: ${ratio}`);
    const count = body.parameters?.sampleCount ?? 4;
    const predictions = [];
    for (let i = 0; i < count; i++) predictions.push({ bytesBase64Encoded: await fakeImageBase64(reply, size), mimeType: mimeOf(reply) });
    json(200, { predictions });
  });
}
