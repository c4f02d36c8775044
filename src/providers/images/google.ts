import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { imageFromContent } from '../../protocols/gemini-images/vendor-answer';
import { generateContentPath, imageContentRequest } from '../../protocols/gemini-images/vendor-request';
import { imageFromPrediction } from '../../protocols/imagen/vendor-answer';
import { predictPath, predictRequest } from '../../protocols/imagen/vendor-request';
import type { VendorTransport } from '../transport/client';

/** One of Google's two image APIs: where a model is called, what is sent, how the image is read back. */
interface GoogleImageApi {
  path(vendorModelId: string): string;
  body(request: ImageProviderRequest): unknown;
  image(answer: unknown, vendor: string): GeneratedImage;
}

/** Gemini models with image output (`generateContent`); edits send the input images inline. */
export const GEMINI_GENERATE_CONTENT: GoogleImageApi = { path: generateContentPath, body: imageContentRequest, image: imageFromContent };

/** Imagen through the Gemini API's `:predict` (`GEMINI_BASE_URL` has no version). Generates only. */
export const IMAGEN_PREDICT: GoogleImageApi = { path: predictPath, body: predictRequest, image: imageFromPrediction };

/** Google's image models behind `GEMINI_API_KEY`, through the API their model id calls for. */
export class GoogleImageProvider implements ImageProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
    private readonly api: GoogleImageApi,
  ) {}

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const { vendor, baseUrl, apiKey } = this.endpoint;
    const answer = await this.http.postJson({
      vendor,
      baseUrl,
      path: this.api.path(request.model.vendorModelId),
      headers: { 'x-goog-api-key': apiKey ?? '' },
      body: this.api.body(request),
      signal: request.signal,
      secrets: [apiKey],
    });
    return this.api.image(answer, vendor);
  }
}
