import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { generateContentPath, imageContentRequest, imageFromContent } from '../../protocols/gemini-images/generate';
import type { VendorHttpClient } from '../http';

/** Gemini models with image output (`generateContent`); edits send the input images inline. */
export class GeminiImageProvider implements ImageProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorHttpClient,
  ) {}

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    const answer = await this.http.postJson({
      vendor,
      baseUrl,
      path: generateContentPath(request.model.vendorModelId),
      headers: { 'x-goog-api-key': apiKey ?? '' },
      body: imageContentRequest(request),
      signal: request.signal,
      secrets: [apiKey],
    });
    return imageFromContent(answer, vendor);
  }
}
