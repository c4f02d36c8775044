import type { VideoGenerationRequest, VideoInputImage } from '../../domain/videos/ports';
import type { VeoImage, VeoInstance, VeoPredictRequest } from './vendor-types';

export const predictLongRunningPath = (vendorModelId: string) => `/v1beta/models/${encodeURIComponent(vendorModelId)}:predictLongRunning`;

/** An operation's name (`models/…/operations/…`) as a path, each segment escaped. */
export const operationPath = (name: string) => `/v1beta/${name.split('/').map(encodeURIComponent).join('/')}`;

const veoImage = (input: VideoInputImage): VeoImage => ({ bytesBase64Encoded: input.bytes.toString('base64'), mimeType: input.mediaType });

/** One instance: the prompt, a first frame (or the OpenAI-style input reference), a last frame, reference images as assets. */
export function predictVideoRequest(request: VideoGenerationRequest): VeoPredictRequest {
  const instance: VeoInstance = { prompt: request.prompt };
  const first = request.inputs.find((input) => input.role === 'first_frame' || input.role === 'input_reference');
  const last = request.inputs.find((input) => input.role === 'last_frame');
  const references = request.inputs.filter((input) => input.role === 'reference');
  if (first) instance.image = veoImage(first);
  if (last) instance.lastFrame = veoImage(last);
  if (references.length > 0) instance.referenceImages = references.map((input) => ({ image: veoImage(input), referenceType: 'asset' }));
  return {
    instances: [instance],
    parameters: { aspectRatio: request.ratio, resolution: request.resolution, durationSeconds: request.seconds, sampleCount: 1 },
  };
}
