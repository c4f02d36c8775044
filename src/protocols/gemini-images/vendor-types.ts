import { z } from 'zod';

/** Gemini's `generateContent` with image output: the request, and the answer as far as Tollgate reads it. */

export type GeminiImagePart = { text: string } | { inlineData: { mimeType: string; data: string } };

export interface GeminiImageRequest {
  contents: { role: 'user'; parts: GeminiImagePart[] }[];
  generationConfig: { responseModalities: ['IMAGE']; imageConfig: { aspectRatio: string } };
}

/** The image comes back as an `inlineData` part of the first candidate; a block reason or text explains its absence. */
export const geminiImageAnswer = z.object({
  candidates: z
    .array(
      z.object({
        content: z
          .object({
            parts: z
              .array(
                z.object({
                  text: z.string().optional(),
                  inlineData: z.object({ mimeType: z.string().optional(), data: z.string().optional() }).optional(),
                }),
              )
              .optional(),
          })
          .optional(),
        finishReason: z.string().optional(),
      }),
    )
    .optional(),
  promptFeedback: z.object({ blockReason: z.string().optional() }).optional(),
});
