import type { Cancellation } from '../generation/cancellation';
import { cancelledBy, isDeploymentFailure, noDeployment, withinAttemptBudget, type Routable, type Router } from './failover';

/**
 * A whole answer (an image, a video job's creation) from the first deployment that gives one, in
 * routing's order, within the attempt budget, on the breakers and the metrics: a deployment's
 * own failure moves on, anything else (the request's 4xx, a client that left) is thrown. When
 * none served: the last failure, or every one rate-limited or cooled, 429/503 with the soonest
 * time one is free. (A text answer's stream needs more, see FailoverStream.)
 */
export async function firstToServe<T extends Routable, R>(
  router: Router,
  model: { readonly id: string },
  targets: readonly T[],
  call: (target: T) => Promise<R>,
  signal: Cancellation | null = null,
): Promise<{ result: R; deployment: string; attempts: number }> {
  const { health, policy, metrics } = router.deps;
  const started = Date.now();
  let attempts = 0;
  let lastError: Error | null = null;
  let soonest = Infinity;
  // Every deployment seen so far was rate-limited by its vendor (a 429 now, or cooling after one).
  let allRateLimited = true;
  for (const target of router.order(targets, null)) {
    const name = target.deployment.name;
    if (signal?.aborted) throw lastError ?? cancelledBy(model, target.deployment);
    if (!withinAttemptBudget(policy, attempts, started, Date.now())) break;
    const admission = health.admit(target.key);
    if (admission === null) {
      soonest = Math.min(soonest, health.availableAt(target.key));
      allRateLimited &&= health.rateLimited(target.key);
      metrics?.attempt(model.id, name, 'refused');
      continue;
    }
    attempts++;
    try {
      const result = await call(target);
      health.succeeded(target.key);
      metrics?.attempt(model.id, name, 'served');
      return { result, deployment: name, attempts };
    } catch (error) {
      if (!isDeploymentFailure(error) || signal?.aborted) {
        // Not the deployment's doing: the request's own 4xx, or the client went away.
        if (admission === 'probe') health.abandoned(target.key);
        throw error;
      }
      health.failed(target.key, error);
      metrics?.attempt(model.id, name, 'failed');
      metrics?.failover(model.id, name);
      lastError = error;
      if (error.vendorStatus === 429) soonest = Math.min(soonest, Date.now() + (error.retryAfterMs ?? 0));
      else allRateLimited = false;
    }
  }
  if (lastError !== null && !allRateLimited) throw lastError;
  throw noDeployment(model, soonest === Infinity ? Date.now() + 1000 : soonest, allRateLimited);
}
