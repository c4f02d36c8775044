import type { Readable } from 'node:stream';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import type { VendorJobHandle, VendorJobState, VideoGenerationRequest, VideoProvider } from '../../domain/videos/ports';
import { isOpenAIVideoJob, type OpenAIVideoCreateFields, type OpenAIVideoJob } from '../../protocols/openai-videos/vendor-types';
import { pixelSize, responseStream, vendorFetch, vendorJson } from './http';

/** OpenAI videos (Sora): a multipart create (as its SDK sends it, one `input_reference` image at most), then polling. */
export class OpenAIVideoProvider implements VideoProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly timeoutMs: number,
  ) {}

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.endpoint.apiKey ?? ''}` };
  }

  async start(request: VideoGenerationRequest): Promise<VendorJobHandle> {
    const fields: OpenAIVideoCreateFields = {
      model: request.model.vendorModelId,
      prompt: request.prompt,
      seconds: String(request.seconds),
      size: pixelSize(request.resolution, request.ratio),
    };
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    const image = request.inputs[0];
    if (image) form.append('input_reference', new Blob([image.bytes], { type: image.mediaType }), `input.${image.mediaType.split('/')[1]}`);
    const response = await vendorFetch('openai', `${this.endpoint.baseUrl}/videos`, { method: 'POST', headers: this.headers(), body: form }, this.timeoutMs);
    const job = await this.job(response);
    return { id: job.id };
  }

  async poll(handle: VendorJobHandle): Promise<VendorJobState> {
    const response = await vendorFetch('openai', `${this.endpoint.baseUrl}/videos/${encodeURIComponent(String(handle.id))}`, { headers: this.headers() }, this.timeoutMs);
    const job = await this.job(response);
    if (job.status === 'completed') return { status: 'completed' };
    if (job.status === 'failed') return { status: 'failed', code: job.error?.code ?? 'generation_failed', message: job.error?.message ?? 'OpenAI reported the video generation failed.' };
    return { status: 'running', progress: typeof job.progress === 'number' ? job.progress : 0 };
  }

  async download(handle: VendorJobHandle): Promise<Readable> {
    const response = await vendorFetch('openai', `${this.endpoint.baseUrl}/videos/${encodeURIComponent(String(handle.id))}/content`, { headers: this.headers() }, this.timeoutMs);
    return responseStream('openai', response);
  }

  private async job(response: Response): Promise<OpenAIVideoJob> {
    const body = await vendorJson<unknown>('openai', response);
    if (!isOpenAIVideoJob(body)) throw new ProviderError('OpenAI answered a video object without an id or status.', 'openai');
    return body;
  }
}
