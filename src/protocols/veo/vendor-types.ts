import { z } from 'zod';

/**
 * Google's Gemini API for Veo: `POST /v1beta/models/{model}:predictLongRunning` starts a
 * long-running operation, `GET /v1beta/{operation name}` polls it, and the finished operation
 * names the file to download (with the API key) in
 * `response.generateVideoResponse.generatedSamples[].video.uri`.
 */
export interface VeoImage {
  bytesBase64Encoded: string;
  mimeType: string;
}

export interface VeoInstance {
  prompt: string;
  image?: VeoImage;
  lastFrame?: VeoImage;
  referenceImages?: { image: VeoImage; referenceType: 'asset' }[];
}

export interface VeoPredictRequest {
  instances: VeoInstance[];
  parameters: { aspectRatio: string; resolution: string; durationSeconds: number; sampleCount?: number };
}

/** An operation, as far as Tollgate reads it; fields it does not read may hold anything. */
export const veoOperation = z.object({
  name: z.string().min(1),
  done: z.boolean().optional(),
  metadata: z
    .object({ progressPercent: z.number().optional().catch(undefined) })
    .optional()
    .catch(undefined),
  error: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
  response: z
    .object({
      generateVideoResponse: z
        .object({
          generatedSamples: z.array(z.object({ video: z.object({ uri: z.string().optional() }).optional() })).optional(),
          raiMediaFilteredReasons: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
});

export type VeoOperation = z.infer<typeof veoOperation>;
