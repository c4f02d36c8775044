import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Catalog } from '../domain/catalog/types';
import { StickyRoutes } from '../domain/routing/affinity';
import { Router, splitHealthKey } from '../domain/routing/failover';
import { DEFAULT_BREAKER, DeploymentHealth } from '../domain/routing/health';
import type { PrometheusMetrics } from '../infra/metrics';
import { openRedisSharedHealth } from '../infra/redis-deployment-health';

/** Failover across a model's deployments: their health (circuit breakers) and the router that reads it. */
export async function openRouting(
  config: Config,
  catalog: Catalog,
  log: Logger,
  metrics: PrometheusMetrics | null,
): Promise<{ health: DeploymentHealth; router: Router }> {
  // Deployments' health: shared by every instance through Redis when there is one (and a model to route), else per instance.
  const { routing } = config;
  const sharedHealth =
    config.redisUrl && catalog.text.some((model) => model.routed)
      ? await openRedisSharedHealth(config.redisUrl, config.redisKeyPrefix, log)
      : null;
  const health = new DeploymentHealth(
    { ...DEFAULT_BREAKER, failureThreshold: routing.failuresToCool, cooldownMs: routing.cooldownMs },
    Date.now,
    sharedHealth,
    (key) => {
      const [model, deployment] = splitHealthKey(key);
      metrics?.routing.cooled(model, deployment);
    },
  );
  const router = new Router(
    health,
    new StickyRoutes(routing.stickyTtlMs),
    { maxAttempts: routing.maxAttempts, budgetMs: routing.budgetMs, firstByteTimeoutMs: routing.firstByteTimeoutMs },
    metrics?.routing,
  );
  return { health, router };
}
