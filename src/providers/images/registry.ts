import type { ImageModel } from '../../domain/catalog/types';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import type { ImageProvider, ImageProviderRegistry } from '../../domain/images/ports';
import { VendorTransport, type VendorHttpOptions } from '../transport/client';
import { vendorRegistry } from '../vendor-registry';
import { GEMINI_GENERATE_CONTENT, GoogleImageProvider, IMAGEN_PREDICT } from './google';
import { OpenAIImageProvider } from './openai';
import { SandboxImageProvider } from './sandbox';

export type ImageProviders = ImageProviderRegistry & {
  /** Closes the outbound connection pools (at shutdown). */
  close(): Promise<void>;
};

/**
 * The image providers of the configured vendors, chosen by the model's protocol. Google's
 * image models share the `gemini` protocol: Imagen models (`imagen-…` vendor ids) are served
 * by `:predict`, the others by `generateContent` with image output. Image calls get their own
 * transport, since an image can take minutes where a text stream would be called stalled.
 */
export function createImageProviders(
  endpoints: ReadonlyMap<string, VendorEndpoint>,
  options: { http?: VendorHttpOptions } = {},
): ImageProviders {
  const http = new VendorTransport(options.http);
  const registry = vendorRegistry(
    endpoints,
    (endpoint, model: ImageModel): ImageProvider => {
      switch (model.protocol) {
        case 'sandbox':
          return new SandboxImageProvider();
        case 'openai':
        case 'openai-compatible':
          return new OpenAIImageProvider(endpoint, http);
        case 'gemini':
          return new GoogleImageProvider(endpoint, http, isImagen(model) ? IMAGEN_PREDICT : GEMINI_GENERATE_CONTENT);
        default:
          throw new ProviderError(`Model '${model.id}' speaks '${model.protocol}', which has no image API.`, model.vendor);
      }
    },
    (model) => (model.protocol === 'gemini' && isImagen(model) ? 'imagen' : ''),
  );
  return { forModel: registry.forModel, close: () => http.close() };
}

const isImagen = (model: ImageModel) => model.vendorModelId.toLowerCase().startsWith('imagen');
