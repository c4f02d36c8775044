import type { ImageModel, TextModel, VideoModel } from '../domain/catalog/types';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { ProviderError } from '../domain/generation/errors';

type VendorModel = TextModel | ImageModel | VideoModel;

/**
 * The one registry shape of every modality (text, images, videos): a model's provider is built
 * from its vendor's endpoint on first use and kept, so the models of one vendor share it; a
 * vendor that is not configured is refused (the sandbox needs no configuration). `build`
 * chooses by the model's protocol and throws for one the modality has no API for; `flavour`
 * separates providers of one vendor that speak different APIs (Imagen beside Gemini).
 */
export function vendorRegistry<M extends VendorModel, P>(
  endpoints: ReadonlyMap<string, VendorEndpoint>,
  build: (endpoint: VendorEndpoint, model: M) => P,
  flavour: (model: M) => string = () => '',
): { forModel(model: M): P } {
  // Catalog models are long-lived objects: a request's lookup is one WeakMap read, no key built.
  const byModel = new WeakMap<M, P>();
  const byVendor = new Map<string, P>();
  return {
    forModel(model) {
      let provider = byModel.get(model);
      if (provider !== undefined) return provider;
      const endpoint =
        endpoints.get(model.vendor) ??
        (model.protocol === 'sandbox' ? { vendor: model.vendor, protocol: 'sandbox', apiKey: null, baseUrl: '' } : null);
      if (!endpoint) throw new ProviderError(`The vendor '${model.vendor}' of model '${model.id}' is not configured.`, model.vendor);
      const key = `${model.protocol}:${model.vendor}:${flavour(model)}`;
      provider = byVendor.get(key);
      if (provider === undefined) {
        provider = build(endpoint, model);
        byVendor.set(key, provider);
      }
      byModel.set(model, provider);
      return provider;
    },
  };
}
