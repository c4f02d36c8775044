import type { Deployment, VideoModel } from '../../domain/catalog/types';
import { isDeploymentFailure, noDeployment, withinAttemptBudget, type Router } from '../../domain/routing/failover';
import type { StartedVideoJob, VideoGenerationRequest, VideoProvider } from '../../domain/videos/ports';

/** One deployment of a video model: its provider, the model as that deployment names it, its breaker's key. */
export interface VideoRouteTarget {
  deployment: Deployment;
  model: VideoModel;
  provider: VideoProvider;
  /** `<model id>/<deployment name>`, the key text and image routing use too. */
  key: string;
}

/**
 * Starts a job of a video model with deployments (docs/routing.md, Videos) on the first that
 * accepts it, in text routing's order (priority, then a weighted random order within one),
 * within its attempt budget, on the text models' breakers and metrics. Before a vendor accepts
 * the job nothing exists anywhere, so a connect error, a timeout, a 429 or a 5xx (the
 * deployment's own failure) moves it to the next; a 4xx the request causes would fail anywhere
 * and is thrown. The job then lives on the deployment that accepted it (the runner stores its
 * name). Money is not touched here: the job's one hold was taken at creation, at the model's price.
 */
export async function startOnDeployments(
  model: VideoModel,
  targets: readonly VideoRouteTarget[],
  router: Router,
  request: VideoGenerationRequest,
): Promise<StartedVideoJob> {
  const { health, policy, metrics } = router.deps;
  const started = Date.now();
  let attempts = 0;
  let lastError: Error | null = null;
  let soonest = Infinity;
  // Every deployment seen so far was rate-limited by its vendor (a 429 now, or cooling after one).
  let allRateLimited = true;
  for (const target of router.order(targets, null)) {
    const name = target.deployment.name;
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
      const handle = await target.provider.start({ ...request, model: target.model });
      health.succeeded(target.key);
      metrics?.attempt(model.id, name, 'served');
      return { handle, deployment: name };
    } catch (error) {
      if (!isDeploymentFailure(error)) {
        // The request's own 4xx: not the deployment's doing.
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
