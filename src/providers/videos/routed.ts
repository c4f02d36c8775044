import type { Deployment, VideoModel } from '../../domain/catalog/types';
import { isDeploymentFailure, noDeployment } from '../../domain/routing/failover';
import type { DeploymentHealth } from '../../domain/routing/health';
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
 * accepts it, in priority order, with the text models' breakers. Before a vendor accepts the
 * job nothing exists anywhere, so a connect error, a timeout, a 429 or a 5xx (the deployment's
 * own failure) moves it to the next; a 4xx the request causes would fail anywhere and is
 * thrown. The job then lives on the deployment that accepted it (the runner stores its name).
 * Money is not touched here: the job's one hold was taken at creation and prices the model.
 */
export async function startOnDeployments(
  model: VideoModel,
  targets: readonly VideoRouteTarget[],
  health: DeploymentHealth,
  request: VideoGenerationRequest,
): Promise<StartedVideoJob> {
  let lastError: Error | null = null;
  let soonest = Infinity;
  let allRateLimited = true;
  for (const target of targets) {
    const admission = health.admit(target.key);
    if (admission === null) {
      soonest = Math.min(soonest, health.availableAt(target.key));
      allRateLimited &&= health.rateLimited(target.key);
      continue;
    }
    try {
      const handle = await target.provider.start({ ...request, model: target.model });
      health.succeeded(target.key);
      return { handle, deployment: target.deployment.name };
    } catch (error) {
      if (!isDeploymentFailure(error)) {
        // The request's own 4xx: not the deployment's doing.
        if (admission === 'probe') health.abandoned(target.key);
        throw error;
      }
      health.failed(target.key, error);
      lastError = error;
      if (error.vendorStatus === 429) soonest = Math.min(soonest, Date.now() + (error.retryAfterMs ?? 0));
      else allRateLimited = false;
    }
  }
  if (lastError !== null && !allRateLimited) throw lastError;
  throw noDeployment(model, soonest === Infinity ? Date.now() + 1000 : soonest, allRateLimited);
}
