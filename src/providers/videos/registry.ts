import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { VideoModel } from '../../domain/catalog/types';
import { ProviderError } from '../../domain/generation/errors';
import type { VideoProvider, VideoProviders } from '../../domain/videos/ports';
import { OpenAIVideoProvider } from './openai';
import { SandboxVideoProvider, type SandboxVideoOptions } from './sandbox';
import { VeoVideoProvider } from './veo';

export interface VideoProviderOptions {
  sandbox: SandboxVideoOptions;
  /** Per vendor HTTP call (ms). */
  requestTimeoutMs: number;
}

/** One video provider per vendor (OpenAI videos, Google Veo, the offline sandbox), made on first use. */
export function createVideoProviderRegistry(endpoints: ReadonlyMap<string, VendorEndpoint>, options: VideoProviderOptions): VideoProviders {
  const providers = new Map<string, VideoProvider>();
  const build = (model: VideoModel): VideoProvider => {
    if (model.protocol === 'sandbox') return new SandboxVideoProvider(options.sandbox);
    const endpoint = endpoints.get(model.vendor);
    if (!endpoint) throw new ProviderError(`The vendor '${model.vendor}' of model '${model.id}' is not configured.`, model.vendor);
    if (model.protocol === 'openai') return new OpenAIVideoProvider(endpoint, options.requestTimeoutMs);
    if (model.protocol === 'gemini') return new VeoVideoProvider(endpoint, options.requestTimeoutMs);
    throw new ProviderError(`The vendor '${model.vendor}' has no video protocol '${model.protocol}'.`, model.vendor);
  };
  return {
    forModel(model) {
      const key = `${model.protocol}:${model.vendor}`;
      let provider = providers.get(key);
      if (!provider) {
        provider = build(model);
        providers.set(key, provider);
      }
      return provider;
    },
  };
}
