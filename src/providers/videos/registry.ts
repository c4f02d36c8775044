import type { VendorEndpoint } from '../../domain/catalog/vendors';
import type { VideoModel } from '../../domain/catalog/types';
import { ProviderError } from '../../domain/generation/errors';
import type { VideoProvider, VideoProviders } from '../../domain/videos/ports';
import { VendorTransport, type VendorHttpOptions } from '../transport/client';
import { vendorRegistry } from '../vendor-registry';
import { OpenAIVideoProvider } from './openai';
import { SandboxVideoProvider, type SandboxVideoOptions } from './sandbox';
import { VeoVideoProvider } from './veo';

export interface VideoProviderOptions {
  sandbox: SandboxVideoOptions;
  /** Outbound HTTP: connect, first byte, and silence within a downloaded file. */
  http?: VendorHttpOptions;
}

export type VideoProviderRegistry = VideoProviders & {
  /** Closes the outbound connection pools (at shutdown, after the running steps finished). */
  close(): Promise<void>;
};

/** One video provider per vendor (OpenAI videos, Google Veo, the offline sandbox), made on first use. */
export function createVideoProviderRegistry(
  endpoints: ReadonlyMap<string, VendorEndpoint>,
  options: VideoProviderOptions,
): VideoProviderRegistry {
  const http = new VendorTransport(options.http);
  const registry = vendorRegistry(endpoints, (endpoint, model: VideoModel): VideoProvider => {
    switch (model.protocol) {
      case 'sandbox':
        return new SandboxVideoProvider(options.sandbox);
      case 'openai':
        return new OpenAIVideoProvider(endpoint, http);
      case 'gemini':
        return new VeoVideoProvider(endpoint, http);
      default:
        throw new ProviderError(`The vendor '${model.vendor}' has no video protocol '${model.protocol}'.`, model.vendor);
    }
  });
  return { forModel: registry.forModel, close: () => http.close() };
}
