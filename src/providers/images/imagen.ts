import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { imageFromPrediction, predictPath, predictRequest } from '../../protocols/imagen/predict';
import type { VendorHttpClient } from '../http';

/** Google Imagen through the Gemini API's `:predict` (`GEMINI_BASE_URL` has no version). Generates only. */
export class ImagenProvider implements ImageProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorHttpClient,
  ) {}

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    const answer = await this.http.postJson({
      vendor,
      baseUrl,
      path: predictPath(request.model.vendorModelId),
      headers: { 'x-goog-api-key': apiKey ?? '' },
      body: predictRequest(request),
      signal: request.signal,
      secrets: [apiKey],
    });
    return imageFromPrediction(answer, vendor);
  }
}
