import type { VideoGenerationRequest } from '../../domain/videos/ports';
import type { FormPart } from '../form-parts';
import type { OpenAIVideoCreateFields } from './vendor-types';

export const VIDEOS_PATH = '/videos';
export const videoPath = (id: string) => `/videos/${encodeURIComponent(id)}`;
export const videoContentPath = (id: string) => `/videos/${encodeURIComponent(id)}/content`;

/** The create form as OpenAI's SDK sends it: the fields, and one `input_reference` image at most. */
export function createVideoForm(request: VideoGenerationRequest): FormPart[] {
  const fields: OpenAIVideoCreateFields = {
    model: request.model.vendorModelId,
    prompt: request.prompt,
    seconds: String(request.seconds),
    size: pixelSize(request.resolution, request.ratio),
  };
  const parts: FormPart[] = Object.entries(fields).map(([name, value]) => ({ name, value }));
  const image = request.inputs[0];
  if (image)
    parts.push({
      name: 'input_reference',
      filename: `input.${image.mediaType.split('/')[1]}`,
      contentType: image.mediaType,
      data: image.bytes,
    });
  return parts;
}

/** `720p` and `16:9` → `1280x720` (the short side is the resolution). */
function pixelSize(resolution: string, ratio: string): string {
  const short = Number.parseInt(resolution, 10);
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  const long = Math.round((short * Math.max(w, h)) / Math.min(w, h));
  return w >= h ? `${long}x${short}` : `${short}x${long}`;
}
