import { type Deployment, type TextModel, type VendorProtocol } from '../domain/catalog/types';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import type { TextProvider, TextProviderRegistry } from '../domain/generation/canonical';
import { ProviderError } from '../domain/generation/errors';
import { healthKey, type RouteTarget, type Router } from '../domain/routing/failover';
import { AnthropicProvider } from './anthropic';
import { AzureOpenAIProvider } from './azure-openai';
import { BedrockProvider } from './bedrock';
import { GeminiProvider } from './gemini';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai';
import { OpenAICompatibleProvider, type CompatibleVendorConfig } from './openai-compatible';
import { RoutedProvider } from './routing/routed-provider';
import { SandboxProvider, type SandboxOptions } from './sandbox';
import { VertexProvider } from './vertex';
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
  /** Failover and health for models with several deployments (domain/routing); none: such models are refused. */
  router?: Router;
}

export type ProviderRegistry = TextProviderRegistry & {
  /** Closes the outbound connection pools (at shutdown, after in-flight requests drained). */
  close(): Promise<void>;
};

/**
 * The text providers of the configured vendors, one per vendor, chosen by the protocol it
 * speaks; all network providers share one transport (one pool per origin). A model with its own
 * vendor as its one deployment (every built-in model) is served by that vendor's provider
 * directly: routing adds nothing to its path. Other models get a RoutedProvider over the
 * providers of their configured deployments.
 */
export function createProviderRegistry(
  endpoints: ReadonlyMap<string, VendorEndpoint>,
  options: ProviderRegistryOptions = {},
): ProviderRegistry {
  const http = new VendorTransport(options.http);
  const build = (endpoint: VendorEndpoint, protocol: VendorProtocol): TextProvider => {
    switch (protocol) {
      case 'sandbox':
        return new SandboxProvider(options.sandbox);
      case 'openai':
        return new OpenAIProvider(endpoint, http, options.openai);
      case 'anthropic':
        return new AnthropicProvider(endpoint, http);
      case 'gemini':
        return new GeminiProvider(endpoint, http);
      case 'openai-compatible':
        return new OpenAICompatibleProvider(endpoint, http, options.compatible?.[endpoint.vendor]);
      case 'azure-openai':
        return new AzureOpenAIProvider(endpoint, http);
      case 'bedrock':
        return new BedrockProvider(endpoint, http);
      case 'vertex':
        return new VertexProvider(endpoint, http);
    }
  };
  const direct = vendorRegistry(endpoints, (endpoint, model: TextModel) => build(endpoint, model.protocol));
  const byVendor = new Map<string, TextProvider>();
  const vendorProvider = (endpoint: VendorEndpoint): TextProvider => {
    let provider = byVendor.get(endpoint.vendor);
    if (provider === undefined) byVendor.set(endpoint.vendor, (provider = build(endpoint, endpoint.protocol)));
    return provider;
  };
  const routed = new WeakMap<TextModel, TextProvider>();
  const routedProvider = (model: TextModel): TextProvider => {
    let provider = routed.get(model);
    if (provider !== undefined) return provider;
    const targets = model.deployments.flatMap((deployment): RouteTarget[] => {
      const endpoint = endpoints.get(deployment.vendor);
      return endpoint
        ? [{ deployment, model: deploymentModel(model, deployment), provider: vendorProvider(endpoint), key: healthKey(model, deployment) }]
        : [];
    });
    if (targets.length === 0) throw new ProviderError(`No deployment of model '${model.id}' is configured.`, model.vendor);
    if (!options.router)
      throw new ProviderError(`Model '${model.id}' has deployments, and this gateway was built without routing.`, model.vendor);
    routed.set(model, (provider = new RoutedProvider(model, targets, options.router)));
    return provider;
  };
  return { forModel: (model) => (model.routed ? routedProvider(model) : direct.forModel(model)), close: () => http.close() };
}

/** The model as one deployment names it: its vendor, protocol and vendor model id (an Azure deployment, a Bedrock model id). */
function deploymentModel(model: TextModel, deployment: Deployment): TextModel {
  return Object.freeze({ ...model, vendor: deployment.vendor, protocol: deployment.protocol, vendorModelId: deployment.vendorModelId });
}
