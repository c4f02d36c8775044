import type { ImageModel } from '../../domain/catalog/types';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import type { ImageProvider, ImageProviderRegistry } from '../../domain/images/ports';
import { VendorHttpClient, type VendorHttpOptions } from '../transport/client';
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
 * HTTP client, since an image can take minutes where a text stream would be called stalled.
 */
export function createImageProviders(endpoints: ReadonlyMap<string, VendorEndpoint>, options: { http?: VendorHttpOptions } = {}): ImageProviders {
  const http = new VendorHttpClient(options.http);
  const sandbox = new SandboxImageProvider();
  const providers = new Map<string, ImageProvider>();

  const build = (model: ImageModel): ImageProvider => {
    if (model.protocol === 'sandbox') return sandbox;
    const endpoint = endpoints.get(model.vendor);
    if (!endpoint) throw new ProviderError(`The vendor '${model.vendor}' of model '${model.id}' is not configured.`, model.vendor);
    switch (model.protocol) {
      case 'openai':
      case 'openai-compatible':
        return new OpenAIImageProvider(endpoint, http);
      case 'gemini':
        return new GoogleImageProvider(endpoint, http, isImagen(model) ? IMAGEN_PREDICT : GEMINI_GENERATE_CONTENT);
      default:
        throw new ProviderError(`Model '${model.id}' speaks '${model.protocol}', which has no image API.`, model.vendor);
    }
  };

  return {
    forModel(model) {
      const key = `${model.protocol}:${model.vendor}:${model.protocol === 'gemini' && isImagen(model) ? 'imagen' : ''}`;
      let provider = providers.get(key);
      if (!provider) {
        provider = build(model);
        providers.set(key, provider);
      }
      return provider;
    },
    close: () => http.close(),
  };
}

const isImagen = (model: ImageModel) => model.vendorModelId.toLowerCase().startsWith('imagen');
