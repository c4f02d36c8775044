import type { Deployment, ImageModel } from '../../domain/catalog/types';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import { isDeploymentFailure, noDeployment } from '../../domain/routing/failover';
import type { DeploymentHealth } from '../../domain/routing/health';

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
 * deployments in priority order, with the text models' breakers. A connect error, a 429 or a
 * 5xx (a deployment's own failure) moves it to the next; an image is one whole answer, so
 * nothing of it has reached the client yet. A 4xx the request causes would fail anywhere: it
 * ends the image. The service charges the model's price per image delivered, as for any model.
 */
export class RoutedImageProvider implements ImageProvider {
  constructor(
    private readonly model: ImageModel,
    private readonly targets: readonly ImageRouteTarget[],
    private readonly health: DeploymentHealth,
  ) {}

  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    let lastError: Error | null = null;
    let soonest = Infinity;
    let allRateLimited = true;
    for (const target of this.targets) {
      if (request.signal.aborted) break;
      const admission = this.health.admit(target.key);
      if (admission === null) {
        soonest = Math.min(soonest, this.health.availableAt(target.key));
        allRateLimited &&= this.health.rateLimited(target.key);
        continue;
      }
      try {
        const image = await target.provider.generateImage({ ...request, model: target.model });
        this.health.succeeded(target.key);
        return image;
      } catch (error) {
        if (!isDeploymentFailure(error) || request.signal.aborted) {
          // Not the deployment's doing: the request's own 4xx, or the client went away.
          if (admission === 'probe') this.health.abandoned(target.key);
          throw error;
        }
        this.health.failed(target.key, error);
        lastError = error;
        if (error.vendorStatus === 429) soonest = Math.min(soonest, Date.now() + (error.retryAfterMs ?? 0));
        else allRateLimited = false;
      }
    }
    if (lastError !== null && !allRateLimited) throw lastError;
    throw noDeployment(this.model, soonest === Infinity ? Date.now() + 1000 : soonest, allRateLimited);
  }
}
