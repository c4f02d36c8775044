import { z } from 'zod';

/** Imagen's `:predict` request, and its answer as far as Tollgate reads it. */

export interface ImagenPredictRequest {
  instances: { prompt: string }[];
  parameters: { sampleCount: number; aspectRatio: string };
}

/** `predictions[]` carry the image (`bytesBase64Encoded`) or why it was filtered (`raiFilteredReason`). */
export const imagenPredictAnswer = z.object({
  predictions: z
    .array(
      z.object({ bytesBase64Encoded: z.string().optional(), mimeType: z.string().optional(), raiFilteredReason: z.string().optional() }),
    )
    .optional(),
});
