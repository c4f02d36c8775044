import type { Readable } from 'node:stream';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { VendorJobHandle, VendorJobState, VideoGenerationRequest, VideoProvider } from '../../domain/videos/ports';
import { videoJobFromAnswer, videoJobState } from '../../protocols/openai-videos/vendor-answer';
import { createVideoForm, videoContentPath, videoPath, VIDEOS_PATH } from '../../protocols/openai-videos/vendor-request';
import type { VendorTarget, VendorTransport } from '../transport/client';

/** Where OpenAI's videos API sits on a vendor's host and how it takes the key. */
export interface OpenAIVideosDialect {
  /** Put before `/videos` (OpenAI's base URL already ends with `/v1`; Azure's v1 API is under `/openai/v1`). */
  pathPrefix: string;
  authHeaders(apiKey: string | null): Record<string, string>;
}

export const OPENAI_VIDEOS: OpenAIVideosDialect = {
  pathPrefix: '',
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey ?? ''}` }),
};

/**
 * Sora on Azure OpenAI's v1 API, which mirrors OpenAI's videos API (same bodies and answers, the
 * deployment's name as `model`) under `{base}/openai/v1`, with the key in `api-key`.
 */
export const AZURE_OPENAI_VIDEOS: OpenAIVideosDialect = {
  pathPrefix: '/openai/v1',
  authHeaders: (apiKey): Record<string, string> => (apiKey ? { 'api-key': apiKey } : {}),
};

/** OpenAI videos (Sora): a multipart create, then polling, then the file (`OPENAI_BASE_URL` includes `/v1`). */
export class OpenAIVideoProvider implements VideoProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
    private readonly dialect: OpenAIVideosDialect = OPENAI_VIDEOS,
  ) {}

  private target(path: string): VendorTarget {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    return { vendor, baseUrl, path: `${this.dialect.pathPrefix}${path}`, headers: this.dialect.authHeaders(apiKey), secrets: [apiKey] };
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
