import pino from 'pino';
import type { Config } from '../config';
import { configuredVendorEndpoints } from '../config/vendors';
import { DeploymentHealth } from '../domain/routing/health';
import { listDeployments, type DeploymentListing } from '../domain/routing/listing';
import { openRedisSharedHealth } from '../infra/redis-deployment-health';
import type { Printable } from './output';

/**
 * `tollgate admin list-deployments`: every deployment of the routed models (text and image) from the catalog and
 * the environment, with the health every instance shares through Redis (REDIS_URL). Without
 * Redis each instance keeps its own health, which only that instance can tell (GraphQL
 * `deployments`, `/metrics`): the state column then says so.
 */
export async function listDeploymentsCommand(config: Config): Promise<Printable> {
  const configured = new Set(configuredVendorEndpoints(config.catalog, config.vendors).keys());
  const shared = config.redisUrl ? await openRedisSharedHealth(config.redisUrl, config.redisKeyPrefix, pino({ level: 'silent' })) : null;
  const health = new DeploymentHealth(undefined, Date.now, shared);
  try {
    // Redis unreachable: the listing still shows the configuration, every state closed.
    await Promise.race([health.synced, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    return deploymentsOutput(listDeployments(config.catalog, configured, health), shared !== null);
  } finally {
    await health.close();
  }
}

function deploymentsOutput(listings: DeploymentListing[], sharedHealth: boolean): Printable {
  const state = (d: DeploymentListing) => (sharedHealth ? d.state : 'per instance');
  return {
    json: listings.map((d) => ({
      model: d.model,
      kind: d.kind,
      deployment: d.deployment,
      protocol: d.protocol,
      vendor_model_id: d.vendorModelId,
      priority: d.priority,
      weight: d.weight,
      configured: d.configured,
      state: state(d),
      cooled_until: d.cooledUntil === null ? null : new Date(d.cooledUntil).toISOString(),
    })),
    columns: ['model', 'kind', 'deployment', 'protocol', 'upstream model', 'priority', 'weight', 'configured', 'state', 'cooled until'],
    rows: listings.map((d) => [
      d.model,
      d.kind,
      d.deployment,
      d.protocol,
      d.vendorModelId,
      String(d.priority),
      String(d.weight),
      d.configured ? 'yes' : 'no',
      state(d),
      d.cooledUntil === null ? '' : new Date(d.cooledUntil).toISOString(),
    ]),
    footer: sharedHealth
      ? undefined
      : ['Health is kept per instance without REDIS_URL: see GraphQL `deployments` or /metrics on each instance.'],
  };
}
