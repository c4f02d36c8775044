import { mediaAnswerCost } from '../../domain/billing/answer-cost';
import { usageCost } from '../cost';
import type { ImageResult } from '../../domain/images/service';
import type { ImagesResponseWire } from './types';

/** The OpenAI Images answer: every image as `b64_json`, plus size, quality, format, the cost, and token usage when known. */
export function encodeImagesResponse(result: ImageResult, meta: { created: number; size: string; quality: string }): ImagesResponseWire {
  return {
    created: meta.created,
    data: result.images.map((image) => ({ b64_json: image.data.toString('base64') })),
    size: meta.size,
    quality: meta.quality,
    output_format: result.images[0]?.format,
    usage: {
      ...(result.usage
        ? {
            input_tokens: result.usage.inputTokens,
            output_tokens: result.usage.outputTokens,
            total_tokens: result.usage.inputTokens + result.usage.outputTokens,
          }
        : {}),
      ...usageCost(mediaAnswerCost('images', result.chargedMicro)),
    },
  };
}
