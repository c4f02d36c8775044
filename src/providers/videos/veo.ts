import type { Readable } from 'node:stream';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import type { VendorJobHandle, VendorJobState, VideoGenerationRequest, VideoInputImage, VideoProvider } from '../../domain/videos/ports';
import { isVeoOperation, type VeoImage, type VeoInstance, type VeoOperation, type VeoPredictRequest } from '../../protocols/veo/vendor-types';
import { responseStream, vendorFetch, vendorJson } from './http';

const veoImage = (input: VideoInputImage): VeoImage => ({ bytesBase64Encoded: input.bytes.toString('base64'), mimeType: input.mediaType });

/** Google Veo over the Gemini API: a long-running operation, polled by name, then the file by URI. */
export class VeoVideoProvider implements VideoProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly timeoutMs: number,
  ) {}

  private headers(): Record<string, string> {
    return { 'x-goog-api-key': this.endpoint.apiKey ?? '' };
  }

  async start(request: VideoGenerationRequest): Promise<VendorJobHandle> {
    const instance: VeoInstance = { prompt: request.prompt };
    const first = request.inputs.find((input) => input.role === 'first_frame' || input.role === 'input_reference');
    const last = request.inputs.find((input) => input.role === 'last_frame');
    const references = request.inputs.filter((input) => input.role === 'reference');
    if (first) instance.image = veoImage(first);
    if (last) instance.lastFrame = veoImage(last);
    if (references.length > 0) instance.referenceImages = references.map((input) => ({ image: veoImage(input), referenceType: 'asset' }));
    const body: VeoPredictRequest = {
      instances: [instance],
      parameters: { aspectRatio: request.ratio, resolution: request.resolution, durationSeconds: request.seconds, sampleCount: 1 },
    };
    const url = `${this.endpoint.baseUrl}/v1beta/models/${encodeURIComponent(request.model.vendorModelId)}:predictLongRunning`;
    const response = await vendorFetch('gemini', url, { method: 'POST', headers: { ...this.headers(), 'content-type': 'application/json' }, body: JSON.stringify(body) }, this.timeoutMs);
    const operation = await this.operation(response);
    return { operation: operation.name };
  }

  async poll(handle: VendorJobHandle): Promise<VendorJobState> {
    const operation = await this.fetchOperation(handle);
    if (!operation.done) return { status: 'running', progress: operation.metadata?.progressPercent ?? 0 };
    if (operation.error) return { status: 'failed', code: 'generation_failed', message: operation.error.message ?? 'Veo reported the video generation failed.' };
    if (!this.videoUri(operation)) {
      const reasons = operation.response?.generateVideoResponse?.raiMediaFilteredReasons ?? [];
      return { status: 'failed', code: 'content_filter', message: reasons[0] ?? 'Veo returned no video.' };
    }
    return { status: 'completed' };
  }

  async download(handle: VendorJobHandle): Promise<Readable> {
    const uri = this.videoUri(await this.fetchOperation(handle));
    if (!uri) throw new ProviderError('Veo returned no video to download.', 'gemini');
    // The key goes only to Google's own host (the one configured), never to a URI elsewhere.
    const sameHost = new URL(uri).origin === new URL(this.endpoint.baseUrl).origin;
    const response = await vendorFetch('gemini', uri, { headers: sameHost ? this.headers() : {} }, this.timeoutMs);
    return responseStream('gemini', response);
  }

  private videoUri(operation: VeoOperation): string | null {
    return operation.response?.generateVideoResponse?.generatedSamples?.[0]?.video?.uri ?? null;
  }

  private async fetchOperation(handle: VendorJobHandle): Promise<VeoOperation> {
    const name = String(handle.operation);
    const response = await vendorFetch('gemini', `${this.endpoint.baseUrl}/v1beta/${name.split('/').map(encodeURIComponent).join('/')}`, { headers: this.headers() }, this.timeoutMs);
    return this.operation(response);
  }

  private async operation(response: Response): Promise<VeoOperation> {
    const body = await vendorJson<unknown>('gemini', response);
    if (!isVeoOperation(body)) throw new ProviderError('Veo answered an operation without a name.', 'gemini');
    return body;
  }
}
