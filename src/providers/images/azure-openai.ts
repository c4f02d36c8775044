import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { imageFromAnswer } from '../../protocols/openai-images/vendor-answer';
import { editForm, EDITS_PATH, generationBody, GENERATIONS_PATH } from '../../protocols/openai-images/vendor-request';
import type { VendorTransport } from '../transport/client';

/**
 * Azure OpenAI's image models: OpenAI's Images API on a deployment's path,
 * `POST {base}/openai/deployments/{deployment}/images/generations?api-version=…` (and
 * `/images/edits`), the key in the `api-key` header. The body and the answer are OpenAI's,
 * without `model`: the path names the deployment (the catalog's `vendor_model_id`).
 */
export class AzureOpenAIImageProvider implements ImageProvider {
  private readonly query: string;

  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {
    this.query = `?api-version=${encodeURIComponent(endpoint.apiVersion ?? '2025-04-01-preview')}`;
  }

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    const deployment = `/openai/deployments/${encodeURIComponent(request.model.vendorModelId)}`;
    const headers: Record<string, string> = apiKey ? { 'api-key': apiKey } : {};
    const common = { vendor, baseUrl, headers, signal: request.signal, secrets: [apiKey] };
    const answer =
      request.mode === 'edit'
        ? await this.http.postJson({
            ...common,
            path: `${deployment}${EDITS_PATH}${this.query}`,
            body: null,
            form: editForm(request).filter((part) => part.name !== 'model'),
          })
        : await this.http.postJson({
            ...common,
            path: `${deployment}${GENERATIONS_PATH}${this.query}`,
            body: withoutModel(generationBody(request)),
          });
    return imageFromAnswer(answer, vendor);
  }
}

function withoutModel<T extends { model?: unknown }>(body: T): Omit<T, 'model'> {
  const { model: _model, ...rest } = body;
  return rest;
}
