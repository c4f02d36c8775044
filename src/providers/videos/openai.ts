import type { Readable } from 'node:stream';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { VendorJobHandle, VendorJobState, VideoGenerationRequest, VideoProvider } from '../../domain/videos/ports';
import { videoJobFromAnswer, videoJobState } from '../../protocols/openai-videos/vendor-answer';
import { createVideoForm, videoContentPath, videoPath, VIDEOS_PATH } from '../../protocols/openai-videos/vendor-request';
import type { VendorTarget, VendorTransport } from '../transport/client';

/** OpenAI videos (Sora): a multipart create, then polling, then the file (`OPENAI_BASE_URL` includes `/v1`). */
export class OpenAIVideoProvider implements VideoProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {}

  private target(path: string): VendorTarget {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    return { vendor, baseUrl, path, headers: { authorization: `Bearer ${apiKey ?? ''}` }, secrets: [apiKey] };
  }

  async start(request: VideoGenerationRequest): Promise<VendorJobHandle> {
    const answer = await this.http.postJson({ ...this.target(VIDEOS_PATH), body: null, form: createVideoForm(request) });
    return { id: videoJobFromAnswer(answer, this.endpoint.vendor).id };
  }

  async poll(handle: VendorJobHandle): Promise<VendorJobState> {
    return videoJobState(videoJobFromAnswer(await this.http.getJson(this.target(videoPath(String(handle.id)))), this.endpoint.vendor));
  }

  download(handle: VendorJobHandle): Promise<Readable> {
    const { baseUrl, path, ...target } = this.target(videoContentPath(String(handle.id)));
    return this.http.download({ ...target, url: `${baseUrl}${path}` });
  }
}
