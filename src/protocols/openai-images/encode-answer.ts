import type { ImageResult } from '../../domain/images/service';
import type { ImagesResponseWire } from './types';

/** The OpenAI Images answer: every image as `b64_json`, plus size, quality, format and token usage when known. */
export function encodeImagesResponse(result: ImageResult, meta: { created: number; size: string; quality: string }): ImagesResponseWire {
  return {
    created: meta.created,
    data: result.images.map((image) => ({ b64_json: image.data.toString('base64') })),
    size: meta.size,
    quality: meta.quality,
    output_format: result.images[0]?.format,
    ...(result.usage
      ? { usage: { input_tokens: result.usage.inputTokens, output_tokens: result.usage.outputTokens, total_tokens: result.usage.inputTokens + result.usage.outputTokens } }
      : {}),
  };
}
