import type { Deployment, ImageModel } from '../../domain/catalog/types';
import { ProviderError } from '../../domain/generation/errors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { isDeploymentFailure, noDeployment, withinAttemptBudget, type Router } from '../../domain/routing/failover';

/** One deployment of an image model: its provider, the model as that deployment names it, its breaker's key. */
export interface ImageRouteTarget {
  deployment: Deployment;
  model: ImageModel;
  provider: ImageProvider;
  /** `<model id>/<deployment name>`, the key text routing uses too. */
  key: string;
}

/**
 * An image model with deployments (docs/routing.md, Images): each image is asked of the
 * deployments in text routing's order (priority, then a weighted random order within one),
 * within its attempt budget, on the text models' breakers and metrics. A connect error, a 429
 * or a 5xx (a deployment's own failure) moves it to the next; an image is one whole answer, so
 * nothing of it has reached the client yet. A 4xx the request causes would fail anywhere: it
 * ends the image. The service charges the model's price per image delivered, as for any model.
 */
export class RoutedImageProvider implements ImageProvider {
  constructor(
    private readonly model: ImageModel,
    private readonly targets: readonly ImageRouteTarget[],
    private readonly router: Router,
  ) {}

  /** Whether a deployment may take an image now (not every one cooled): the service's test for the fallback model. */
  available(): boolean {
    return this.router.anyAvailable(this.targets);
  }

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const { health, policy, metrics } = this.router.deps;
    const started = Date.now();
    let attempts = 0;
    let lastError: Error | null = null;
    let soonest = Infinity;
    // Every deployment seen so far was rate-limited by its vendor (a 429 now, or cooling after one).
    let allRateLimited = true;
    for (const target of this.router.order(this.targets, null)) {
      const name = target.deployment.name;
      if (request.signal.aborted)
        throw (
          lastError ??
          new ProviderError(
            `The request to ${this.model.id} was cancelled by the client.`,
            target.deployment.vendor,
            null,
            'client_cancelled',
          )
        );
      if (!withinAttemptBudget(policy, attempts, started, Date.now())) break;
      const admission = health.admit(target.key);
      if (admission === null) {
        soonest = Math.min(soonest, health.availableAt(target.key));
        allRateLimited &&= health.rateLimited(target.key);
        metrics?.attempt(this.model.id, name, 'refused');
        continue;
      }
      attempts++;
      try {
        const image = await target.provider.generateImage({ ...request, model: target.model });
        health.succeeded(target.key);
        metrics?.attempt(this.model.id, name, 'served');
        return { ...image, servedBy: { deployment: name, attempts } };
      } catch (error) {
        if (!isDeploymentFailure(error) || request.signal.aborted) {
          // Not the deployment's doing: the request's own 4xx, or the client went away.
          if (admission === 'probe') health.abandoned(target.key);
          throw error;
        }
        health.failed(target.key, error);
        metrics?.attempt(this.model.id, name, 'failed');
        metrics?.failover(this.model.id, name);
        lastError = error;
        if (error.vendorStatus === 429) soonest = Math.min(soonest, Date.now() + (error.retryAfterMs ?? 0));
        else allRateLimited = false;
      }
    }
    if (lastError !== null && !allRateLimited) throw lastError;
    throw noDeployment(this.model, soonest === Infinity ? Date.now() + 1000 : soonest, allRateLimited);
  }
}
