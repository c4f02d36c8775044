import type { Deployment, ImageModel } from '../../domain/catalog/types';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../domain/images/ports';
import type { Router } from '../../domain/routing/failover';
import { firstToServe } from '../../domain/routing/first-to-serve';

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
    const { result, deployment, attempts } = await firstToServe(
      this.router,
      this.model,
      this.targets,
      (target) => target.provider.generateImage({ ...request, model: target.model }),
      request.signal,
    );
    return { ...result, servedBy: { deployment, attempts } };
  }
}
