import type { TextModel } from '../domain/catalog/types';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import type { TextProvider, TextProviderRegistry } from '../domain/generation/canonical';
import { AnthropicProvider } from './anthropic';
import { GeminiProvider } from './gemini';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai';
import { OpenAICompatibleProvider, type CompatibleVendorConfig } from './openai-compatible';
import { SandboxProvider, type SandboxOptions } from './sandbox';
import { VendorTransport, type VendorHttpOptions } from './transport/client';
import { vendorRegistry } from './vendor-registry';

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
 * protocol; all network providers share one transport (one pool per origin).
 */
export function createProviderRegistry(endpoints: ReadonlyMap<string, VendorEndpoint>, options: ProviderRegistryOptions = {}): ProviderRegistry {
  const http = new VendorTransport(options.http);
  const registry = vendorRegistry(endpoints, (endpoint, model: TextModel): TextProvider => {
    switch (model.protocol) {
      case 'sandbox':
        return new SandboxProvider(options.sandbox);
      case 'openai':
        return new OpenAIProvider(endpoint, http, options.openai);
      case 'anthropic':
        return new AnthropicProvider(endpoint, http);
      case 'gemini':
        return new GeminiProvider(endpoint, http);
      case 'openai-compatible':
        return new OpenAICompatibleProvider(endpoint, http, options.compatible?.[model.vendor]);
    }
  });
  return { forModel: registry.forModel, close: () => http.close() };
}
