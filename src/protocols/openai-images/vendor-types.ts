import { z } from 'zod';

/** OpenAI's Images API as Tollgate calls it upstream: the generation body, and the answer as far as Tollgate reads it. */

export interface ImagesGenerationVendorRequest {
  model: string;
  prompt: string;
  n: 1;
  size: string;
  quality?: string;
}

/**
 * `data[0].b64_json` is the image; `usage` (gpt-image models) its tokens, left out when it is
 * not two counts (the image is still delivered, priced per image). Other fields are ignored.
 */
export const imagesVendorAnswer = z.object({
  data: z.array(z.object({ b64_json: z.string() })).min(1),
  usage: z
    .object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() })
    .optional()
    .catch(undefined),
});
