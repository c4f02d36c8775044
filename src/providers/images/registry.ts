import type { Deployment, ImageModel } from '../../domain/catalog/types';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import type { ImageProvider, ImageProviderRegistry } from '../../domain/images/ports';
import { healthKey, type Router } from '../../domain/routing/failover';
import { VendorTransport, type VendorHttpOptions } from '../transport/client';
import { vendorRegistry } from '../vendor-registry';
import { AzureOpenAIImageProvider } from './azure-openai';
import { GEMINI_GENERATE_CONTENT, GoogleImageProvider, IMAGEN_PREDICT } from './google';
import { OpenAIImageProvider } from './openai';
import { RoutedImageProvider, type ImageRouteTarget } from './routed';
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
 * A model with deployments is served through them by text routing's `router` (order, budget, breakers, metrics).
 */
export function createImageProviders(
  endpoints: ReadonlyMap<string, VendorEndpoint>,
  options: { http?: VendorHttpOptions; router?: Router } = {},
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
        case 'azure-openai':
          return new AzureOpenAIImageProvider(endpoint, http);
        case 'gemini':
          return new GoogleImageProvider(endpoint, http, isImagen(model) ? IMAGEN_PREDICT : GEMINI_GENERATE_CONTENT);
        default:
          throw new ProviderError(`Model '${model.id}' speaks '${model.protocol}', which has no image API.`, model.vendor);
      }
    },
    (model) => (model.protocol === 'gemini' && isImagen(model) ? 'imagen' : ''),
  );
  const byVendor = new Map<string, ImageProvider>();
  const deploymentProvider = (endpoint: VendorEndpoint): ImageProvider => {
    let provider = byVendor.get(endpoint.vendor);
    if (provider === undefined) {
      provider =
        endpoint.protocol === 'azure-openai' ? new AzureOpenAIImageProvider(endpoint, http) : new OpenAIImageProvider(endpoint, http);
      byVendor.set(endpoint.vendor, provider);
    }
    return provider;
  };
  const routed = new WeakMap<ImageModel, ImageProvider>();
  const routedProvider = (model: ImageModel): ImageProvider => {
    let provider = routed.get(model);
    if (provider !== undefined) return provider;
    const targets = model.deployments.flatMap((deployment): ImageRouteTarget[] => {
      const endpoint = endpoints.get(deployment.vendor);
      return endpoint
        ? [
            {
              deployment,
              model: deploymentModel(model, deployment),
              provider: deploymentProvider(endpoint),
              key: healthKey(model, deployment),
            },
          ]
        : [];
    });
    if (targets.length === 0) throw new ProviderError(`No deployment of model '${model.id}' is configured.`, model.vendor);
    if (!options.router)
      throw new ProviderError(`Model '${model.id}' has deployments, and this gateway was built without routing.`, model.vendor);
    routed.set(model, (provider = new RoutedImageProvider(model, targets, options.router)));
    return provider;
  };
  return { forModel: (model) => (model.routed ? routedProvider(model) : registry.forModel(model)), close: () => http.close() };
}

/** The model as one deployment names it: that deployment's vendor, protocol and vendor model id. */
function deploymentModel(model: ImageModel, deployment: Deployment): ImageModel {
  return Object.freeze({ ...model, vendor: deployment.vendor, protocol: deployment.protocol, vendorModelId: deployment.vendorModelId });
}

const isImagen = (model: ImageModel) => model.vendorModelId.toLowerCase().startsWith('imagen');
