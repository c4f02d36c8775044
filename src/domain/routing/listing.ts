import type { Catalog, VendorProtocol } from '../catalog/types';
import { healthKey } from './failover';
import type { DeploymentHealth, HealthView } from './health';

/** One deployment as the operator lists it (CLI, GraphQL): where it is and how it is doing. */
export interface DeploymentListing extends HealthView {
  model: string;
  /** The model's kind: `text` or `image`. */
  kind: 'text' | 'image';
  deployment: string;
  vendor: string;
  protocol: VendorProtocol;
  vendorModelId: string;
  priority: number;
  weight: number;
  /** Its credentials are set: it can take traffic. */
  configured: boolean;
}

/**
 * Every deployment of the catalog's routed models, text then image models, with its health on
 * this instance (which, with Redis, every instance shares).
 */
export function listDeployments(catalog: Catalog, configuredVendors: ReadonlySet<string>, health: DeploymentHealth): DeploymentListing[] {
  return [...catalog.text, ...catalog.images].flatMap((model) =>
    model.routed
      ? model.deployments.map((d) => ({
          model: model.id,
          kind: model.kind,
          deployment: d.name,
          vendor: d.vendor,
          protocol: d.protocol,
          vendorModelId: d.vendorModelId,
          priority: d.priority,
          weight: d.weight,
          configured: configuredVendors.has(d.vendor),
          ...health.view(healthKey(model, d)),
        }))
      : [],
  );
}
