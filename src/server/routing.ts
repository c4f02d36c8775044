import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Catalog } from '../domain/catalog/types';
import { StickyRoutes } from '../domain/routing/affinity';
import { Router, splitHealthKey } from '../domain/routing/failover';
import { DEFAULT_BREAKER, DeploymentHealth } from '../domain/routing/health';
import type { PrometheusMetrics } from '../infra/metrics';
import { RedisSharedAffinity } from '../infra/redis-affinity';
import { openRedisSharedHealth } from '../infra/redis-deployment-health';

/** Failover across a model's deployments: their health (circuit breakers), conversations' affinity, and the router that reads both. */
export async function openRouting(
  config: Config,
  catalog: Catalog,
  log: Logger,
  metrics: PrometheusMetrics | null,
): Promise<{ health: DeploymentHealth; router: Router }> {
  // Deployments' health: shared by every instance through Redis when there is one (and a model to route), else per instance.
  const { routing } = config;
  const sharedHealth =
    config.redisUrl && [...catalog.text, ...catalog.images, ...catalog.videos].some((model) => model.routed)
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
  // Conversations' deployments: on the same Redis connection, so that another instance keeps a conversation's cache warm.
  const sharedAffinity = sharedHealth
    ? new RedisSharedAffinity(sharedHealth.redis, config.redisKeyPrefix, log, routing.affinityWaitMs)
    : null;
  const router = new Router(
    health,
    new StickyRoutes(routing.stickyTtlMs, Date.now, sharedAffinity),
    { maxAttempts: routing.maxAttempts, budgetMs: routing.budgetMs, firstByteTimeoutMs: routing.firstByteTimeoutMs },
    metrics?.routing,
  );
  return { health, router };
}
