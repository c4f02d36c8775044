import type { Readable } from 'node:stream';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { VendorJobHandle, VendorJobState, VideoGenerationRequest, VideoProvider } from '../../domain/videos/ports';
import { operationFromAnswer, operationState, operationVideoUri } from '../../protocols/veo/vendor-answer';
import { operationPath, predictLongRunningPath, predictVideoRequest } from '../../protocols/veo/vendor-request';
import type { VeoOperation } from '../../protocols/veo/vendor-types';
import type { VendorTarget, VendorTransport } from '../transport/client';
import { invalidAnswerError } from '../transport/errors';

/** Google Veo over the Gemini API: a long-running operation, polled by name, then the file by URI. */
export class VeoVideoProvider implements VideoProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {}

  private target(path: string): VendorTarget {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    return { vendor, baseUrl, path, headers: { 'x-goog-api-key': apiKey ?? '' }, secrets: [apiKey] };
  }

  async start(request: VideoGenerationRequest): Promise<VendorJobHandle> {
    const answer = await this.http.postJson({
      ...this.target(predictLongRunningPath(request.model.vendorModelId)),
      body: predictVideoRequest(request),
    });
    return { operation: operationFromAnswer(answer, this.endpoint.vendor).name };
  }

  async poll(handle: VendorJobHandle): Promise<VendorJobState> {
    return operationState(await this.operation(handle));
  }

  async download(handle: VendorJobHandle): Promise<Readable> {
    const uri = operationVideoUri(await this.operation(handle));
    const { vendor, baseUrl, apiKey } = this.endpoint;
    if (!uri) throw invalidAnswerError({ vendor, secrets: [apiKey] }, 'Veo returned no video to download.');
    // The key goes only to Google's own host (the one configured), never to a URI elsewhere.
    const sameHost = URL.canParse(uri) && new URL(uri).origin === new URL(baseUrl).origin;
    return this.http.download({ vendor, secrets: [apiKey], url: uri, headers: sameHost ? this.target('').headers : {} });
  }

  private async operation(handle: VendorJobHandle): Promise<VeoOperation> {
    return operationFromAnswer(await this.http.getJson(this.target(operationPath(String(handle.operation)))), this.endpoint.vendor);
  }
}
