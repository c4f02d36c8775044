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

export interface VeoOperation {
  name: string;
  done?: boolean;
  metadata?: { progressPercent?: number };
  error?: { code?: number; message?: string };
  response?: {
    generateVideoResponse?: {
      generatedSamples?: { video?: { uri?: string } }[];
      raiMediaFilteredCount?: number;
      raiMediaFilteredReasons?: string[];
    };
  };
}

export function isVeoOperation(value: unknown): value is VeoOperation {
  return typeof value === 'object' && value !== null && typeof (value as VeoOperation).name === 'string';
}
