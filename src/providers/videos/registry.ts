import type { Deployment, VideoModel } from '../../domain/catalog/types';
import type { VendorEndpoint } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import { healthKey } from '../../domain/routing/failover';
import type { DeploymentHealth } from '../../domain/routing/health';
import type { VideoProvider, VideoProviders } from '../../domain/videos/ports';
import { VendorTransport, type VendorHttpOptions } from '../transport/client';
import { vendorRegistry } from '../vendor-registry';
import { AZURE_OPENAI_VIDEOS, OpenAIVideoProvider } from './openai';
import { startOnDeployments, type VideoRouteTarget } from './routed';
import { SandboxVideoProvider, type SandboxVideoOptions } from './sandbox';
import { VeoVideoProvider } from './veo';

export interface VideoProviderOptions {
  sandbox: SandboxVideoOptions;
  /** Outbound HTTP: connect, first byte, and silence within a downloaded file. */
  http?: VendorHttpOptions;
  /** The deployments' breakers (text routing's), for models with deployments; without it such models are refused. */
  health?: DeploymentHealth;
}

export type VideoProviderRegistry = VideoProviders & {
  /** The provider of the model's own vendor (its first deployment, for a model with a list). */
  forModel(model: VideoModel): VideoProvider;
  /** Closes the outbound connection pools (at shutdown, after the running steps finished). */
  close(): Promise<void>;
};

/**
 * One video provider per vendor (OpenAI videos, Azure OpenAI's, Google Veo, the offline sandbox),
 * made on first use. A model with deployments starts each job on the first deployment that
 * accepts it (routed.ts), and its later calls go to that deployment's provider.
 */
export function createVideoProviderRegistry(
  endpoints: ReadonlyMap<string, VendorEndpoint>,
  options: VideoProviderOptions,
): VideoProviderRegistry {
  const http = new VendorTransport(options.http);
  const build = (endpoint: VendorEndpoint): VideoProvider => {
    switch (endpoint.protocol) {
      case 'sandbox':
        return new SandboxVideoProvider(options.sandbox);
      case 'openai':
        return new OpenAIVideoProvider(endpoint, http);
      case 'azure-openai':
        return new OpenAIVideoProvider(endpoint, http, AZURE_OPENAI_VIDEOS);
      case 'gemini':
        return new VeoVideoProvider(endpoint, http);
      default:
        throw new ProviderError(`The vendor '${endpoint.vendor}' has no video protocol '${endpoint.protocol}'.`, endpoint.vendor);
    }
  };
  const direct = vendorRegistry(endpoints, (endpoint, model: VideoModel) => build({ ...endpoint, protocol: model.protocol }));

  const byVendor = new Map<string, VideoProvider>();
  /** A deployment's provider, shared by the models of its vendor; null when its vendor is not configured. */
  const deploymentProvider = (deployment: Deployment): VideoProvider | null => {
    let provider = byVendor.get(deployment.vendor);
    if (provider === undefined) {
      const endpoint = endpoints.get(deployment.vendor);
      if (endpoint === undefined) return null;
      byVendor.set(deployment.vendor, (provider = build(endpoint)));
    }
    return provider;
  };
  const routes = new WeakMap<VideoModel, VideoRouteTarget[]>();
  const targetsOf = (model: VideoModel): VideoRouteTarget[] => {
    let targets = routes.get(model);
    if (targets !== undefined) return targets;
    targets = model.deployments.flatMap((deployment): VideoRouteTarget[] => {
      const provider = deploymentProvider(deployment);
      return provider ? [{ deployment, model: deploymentModel(model, deployment), provider, key: healthKey(model, deployment) }] : [];
    });
    if (targets.length === 0) throw new ProviderError(`No deployment of model '${model.id}' is configured.`, model.vendor);
    routes.set(model, targets);
    return targets;
  };

  return {
    async start(request) {
      const { model } = request;
      if (!model.routed) return { handle: await direct.forModel(model).start(request), deployment: null };
      if (!options.health)
        throw new ProviderError(`Model '${model.id}' has deployments, and this gateway was built without routing.`, model.vendor);
      return startOnDeployments(model, targetsOf(model), options.health, request);
    },
    forJob(model, name) {
      // A job of a model without deployments, or from before routing, is its own vendor's (the first deployment).
      if (!model.routed) return name === null || name === model.vendor ? direct.forModel(model) : null;
      const deployment = name === null ? model.deployments[0] : model.deployments.find((d) => d.name === name);
      return deployment ? deploymentProvider(deployment) : null;
    },
    forModel: (model) => direct.forModel(model),
    close: () => http.close(),
  };
}

/** The model as one deployment names it: that deployment's vendor, protocol and vendor model id. */
function deploymentModel(model: VideoModel, deployment: Deployment): VideoModel {
  return Object.freeze({ ...model, vendor: deployment.vendor, protocol: deployment.protocol, vendorModelId: deployment.vendorModelId });
}
