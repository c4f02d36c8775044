import { fakeImageBase64, mimeOf, startImageFake, type ImageFake } from './openai-images';

/**
 * A fake Gemini with image output: `POST /v1beta/models/{model}:generateContent` with
 * `generationConfig.responseModalities` including IMAGE and `imageConfig.aspectRatio`,
 * answered with a text part and an `inlineData` image part, as gemini-2.5-flash-image does.
 */
export const GEMINI_IMAGE_SIZES: Record<string, { width: number; height: number }> = {
  '1:1': { width: 1024, height: 1024 },
  '2:3': { width: 832, height: 1248 },
  '3:2': { width: 1248, height: 832 },
  '3:4': { width: 864, height: 1184 },
  '4:3': { width: 1184, height: 864 },
  '4:5': { width: 896, height: 1152 },
  '5:4': { width: 1152, height: 896 },
  '9:16': { width: 768, height: 1344 },
  '16:9': { width: 1344, height: 768 },
  '21:9': { width: 1536, height: 672 },
};

const GENERATE = /^\/v1beta\/models\/([^/:]+):generateContent$/;

export async function startFakeGeminiImages(options: { apiKey?: string } = {}): Promise<ImageFake> {
  const apiKey = options.apiKey ?? 'gemini-fake-key';
  return startImageFake({ apiKey, basePath: '' }, async ({ request, reply, json }) => {
    const error = (code: number, status: string, message: string) => json(code, { error: { code, message, status } });
    if (!GENERATE.test(request.path) || request.method !== 'POST')
      return error(404, 'NOT_FOUND', `Requested entity was not found: ${request.path}`);
    if (request.headers['x-goog-api-key'] !== apiKey)
      return error(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    if (reply.status)
      return error(reply.status, reply.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT', reply.errorMessage ?? 'The fake vendor failed.');
    const body = request.json ?? {};
    const parts = body.contents?.[0]?.parts;
    if (!Array.isArray(parts) || !parts.some((p: { text?: unknown }) => typeof p.text === 'string'))
      return error(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
    const modalities: unknown = body.generationConfig?.responseModalities;
    if (!Array.isArray(modalities) || !modalities.includes('IMAGE')) {
      return json(200, {
        candidates: [{ content: { role: 'model', parts: [{ text: 'I can only describe an image.' }] }, finishReason: 'STOP' }],
      });
    }
    const size = GEMINI_IMAGE_SIZES[body.generationConfig?.imageConfig?.aspectRatio ?? '1:1'] ?? GEMINI_IMAGE_SIZES['1:1']!;
    json(200, {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Here is your image.' }, { inlineData: { mimeType: mimeOf(reply), data: await fakeImageBase64(reply, size) } }],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 1290, totalTokenCount: 1302 },
      modelVersion: 'gemini-2.5-flash-image',
    });
  });
}
