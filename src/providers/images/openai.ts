import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { imageFromAnswer } from '../../protocols/openai-images/vendor-answer';
import { editForm, EDITS_PATH, generationBody, GENERATIONS_PATH } from '../../protocols/openai-images/vendor-request';
import type { VendorTransport } from '../transport/client';

/** OpenAI's Images API (`OPENAI_BASE_URL` includes `/v1`): generations as JSON, edits as multipart. */
export class OpenAIImageProvider implements ImageProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {}

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    const common = { vendor, baseUrl, headers: { authorization: `Bearer ${apiKey ?? ''}` }, signal: request.signal, secrets: [apiKey] };
    const answer =
      request.mode === 'edit'
        ? await this.http.postJson({ ...common, path: EDITS_PATH, body: null, form: editForm(request) })
        : await this.http.postJson({ ...common, path: GENERATIONS_PATH, body: generationBody(request) });
    return imageFromAnswer(answer, vendor);
  }
}
