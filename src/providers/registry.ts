import type { TextModel } from '../domain/catalog/types';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import type { TextProvider, TextProviderRegistry } from '../domain/generation/canonical';
import { ProviderError } from '../domain/generation/errors';
import { AnthropicProvider } from './anthropic';
import { GeminiProvider } from './gemini';
import { VendorHttpClient, type VendorHttpOptions } from './transport/client';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai';
import { OpenAICompatibleProvider, type CompatibleVendorConfig } from './openai-compatible';
import { SandboxProvider, type SandboxOptions } from './sandbox';

export interface ProviderRegistryOptions {
  /** Outbound HTTP: timeouts (connect 10 s, headers 120 s, idle body 120 s) and pool size. */
  http?: VendorHttpOptions;
  /** Which OpenAI API serves requests (default `auto`, see OpenAIProvider). */
  openai?: OpenAIProviderOptions;
  /** Per OpenAI-compatible vendor (by catalog vendor name): headers, output-limit field, excluded params. */
  compatible?: Readonly<Record<string, Partial<CompatibleVendorConfig>>>;
  sandbox?: SandboxOptions;
}

export type ProviderRegistry = TextProviderRegistry & {
  /** Closes the outbound connection pools (at shutdown, after in-flight requests drained). */
  close(): Promise<void>;
};

/**
 * The text providers of the configured vendors, one per vendor, chosen by the model's
 * protocol; all network providers share one pooled HTTP client (one pool per origin).
 */
export function createProviderRegistry(endpoints: ReadonlyMap<string, VendorEndpoint>, options: ProviderRegistryOptions = {}): ProviderRegistry {
  const http = new VendorHttpClient(options.http);
  const providers = new Map<string, TextProvider>();

  const build = (model: TextModel): TextProvider => {
    if (model.protocol === 'sandbox') return new SandboxProvider(options.sandbox);
    const endpoint = endpoints.get(model.vendor);
    if (!endpoint) throw new ProviderError(`The vendor '${model.vendor}' of model '${model.id}' is not configured.`, model.vendor);
    switch (model.protocol) {
      case 'openai':
        return new OpenAIProvider(endpoint, http, options.openai);
      case 'anthropic':
        return new AnthropicProvider(endpoint, http);
      case 'gemini':
        return new GeminiProvider(endpoint, http);
      case 'openai-compatible':
        return new OpenAICompatibleProvider(endpoint, http, options.compatible?.[model.vendor]);
    }
  };

  return {
    forModel(model: TextModel): TextProvider {
      const key = `${model.protocol}:${model.vendor}`;
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
