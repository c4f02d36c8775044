import type { TextModel } from '../../domain/catalog/types';
import type { Cancellation } from '../../domain/generation/cancellation';
import type { VendorCapabilities } from '../../domain/generation/canonical';
import type { CanonicalRequest, ProviderEvent, RouteHints, TextProvider, VendorHints } from '../../domain/generation/canonical';
import type { RouteTarget, Router } from '../../domain/routing/failover';

/**
 * A model with several deployments (or one that is not its own vendor's) as one provider: what
 * it takes and refuses is its first deployment's (deployments of one model speak the same
 * model; docs/routing.md), and each call goes through the router's failover.
 */
export class RoutedProvider implements TextProvider {
  readonly capabilities: VendorCapabilities;
  private readonly primary: RouteTarget;

  constructor(
    private readonly model: TextModel,
    private readonly targets: readonly RouteTarget[],
    private readonly router: Router,
  ) {
    this.primary = targets[0]!;
    this.capabilities = this.primary.provider.capabilities;
    if (this.primary.provider.countTokens)
      this.countTokens = (request, signal) => this.primary.provider.countTokens!(this.asPrimary(request), signal);
  }

  countTokens?: (request: CanonicalRequest, signal: Cancellation) => Promise<number>;

  hints(request: CanonicalRequest): VendorHints {
    return this.primary.provider.hints(this.asPrimary(request));
  }

  validate(request: CanonicalRequest): void {
    this.primary.provider.validate?.(this.asPrimary(request));
  }

  generate(request: CanonicalRequest, signal: Cancellation, route?: RouteHints): AsyncIterable<ProviderEvent> {
    return this.router.stream(this.model, this.targets, request, signal, route);
  }

  available(): boolean {
    return this.router.anyAvailable(this.targets);
  }

  private asPrimary(request: CanonicalRequest): CanonicalRequest {
    return { ...request, model: this.primary.model };
  }
}
