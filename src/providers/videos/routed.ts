import type { Deployment, VideoModel } from '../../domain/catalog/types';
import type { Router } from '../../domain/routing/failover';
import { firstToServe } from '../../domain/routing/first-to-serve';
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
  const { result, deployment } = await firstToServe(router, model, targets, (target) =>
    target.provider.start({ ...request, model: target.model }),
  );
  return { handle: result, deployment };
}
