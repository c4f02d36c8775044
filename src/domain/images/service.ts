import type { BillingService } from '../billing/service';
import { mediaCostMicro } from '../billing/pricing';
import type { Clock } from '../shared/clock';
import type { Metrics } from '../shared/telemetry';
import type { Cancellation } from '../generation/cancellation';
import { ProviderError } from '../generation/errors';
import { fitToSize } from './fit';
import type { GeneratedImage, ImageProviderRegistry, ImageTokenUsage } from './ports';
import { validateImageRequest, type ImageRequestInput, type ValidImageRequest } from './request';
import type { Catalog, ModelAccess } from '../catalog/types';
import { noDeploymentServed } from '../routing/failover';
import { modelAccessFor } from '../catalog/vendors';
import { requirePrepaidKey, type KeyPrincipal } from '../shared/principal';

/**
 * Image generation and editing on the money core of text: hold n × the per-image price before
 * any vendor call, make the n images in parallel (one vendor call each), fit each to the exact
 * requested size, charge the images delivered and release the rest.
 */

export interface ImageRunContext {
  /** Set when the client goes away: vendor calls still running stop, and nothing is charged. */
  signal: Cancellation;
  requestId: string;
}

export interface ImageResult {
  /** The request as served: the one asked, or as its fallback model took it. */
  request: ValidImageRequest;
  /** The delivered images, each exactly the requested size, in request order. */
  images: GeneratedImage[];
  /** How many of the n asked for failed (they are not charged). */
  failed: number;
  chargedMicro: bigint;
  /** Summed vendor token counts, when every delivered image reported them. */
  usage: ImageTokenUsage | null;
  /** A routed model: the deployments that made the images (in request order, each once, comma-separated), and the attempts they took in all; else null. */
  deployment: string | null;
  attempts: number | null;
}

export interface ImageServiceDeps {
  providers: ImageProviderRegistry;
  catalog: Catalog;
  configuredVendors: ReadonlySet<string>;
  billing: BillingService;
  clock: Clock;
  /** Vendor time and failures per image call, spend per request (no-op when metrics are off). */
  metrics?: Metrics;
  /** Names a routed model's serving deployment on the usage record (docs/routing.md, Images). */
  /** Told when that naming fails: the record and its money stand without it. */
  onError?: (error: unknown) => void;
}

const NO_TOKENS = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

export class ImageService {
  constructor(private readonly deps: ImageServiceDeps) {}

  /**
   * The request checked for this key, before anything is reserved: a prepaid key (403), a model
   * it can use (404) and every rule of the model (400 naming the field).
   */
  validate(principal: KeyPrincipal, input: ImageRequestInput): ValidImageRequest {
    requirePrepaidKey(principal);
    return validateImageRequest(input, this.deps.catalog, modelAccessFor(principal, this.deps.configuredVendors));
  }

  /**
   * Runs a validated request for a prepaid key. 402 before any vendor call when the hold does
   * not fit; 502 (the first vendor failure, nothing charged) when no image arrived. A routed
   * model whose deployments cannot serve is served by its fallback model when it has one
   * (docs/routing.md, Images): at once when every deployment is cooled, else once every image
   * failed for its deployments' sake.
   */
  async run(principal: KeyPrincipal, request: ValidImageRequest, context: ImageRunContext): Promise<ImageResult> {
    const { billing, clock } = this.deps;
    const access = modelAccessFor(principal, this.deps.configuredVendors);
    // Every deployment cooled: the fallback serves from the start, its hold at its price.
    let serving =
      this.deps.providers.forModel(request.model).available?.() === false ? (this.fallbackFor(request, access) ?? request) : request;
    let hold = await this.reserve(principal, serving);
    const started = clock.nowMs();
    const latencyMs = () => clock.nowMs() - started;
    let outcomes = await this.makeAll(serving, context.signal);
    let images = delivered(outcomes);
    const fallback =
      images.length === 0 &&
      serving === request &&
      !context.signal.aborted &&
      outcomes.every((o) => o.status === 'rejected' && noDeploymentServed(o.reason))
        ? this.fallbackFor(request, access)
        : null;
    if (fallback !== null) {
      // The fallback's hold is taken before the asked model's is given back: one of them always
      // covers the request. When it does not fit, the asked model's own failure is the answer.
      const moved = await this.reserve(principal, fallback).catch(() => null);
      if (moved !== null) {
        await billing.releaseHold(hold.id);
        [hold, serving] = [moved, fallback];
        outcomes = await this.makeAll(serving, context.signal);
        images = delivered(outcomes);
      }
    }
    if (context.signal.aborted || images.length === 0) {
      // A client that left receives nothing, so it pays nothing.
      await billing.releaseHold(hold.id, { recordFailure: true, latencyMs: latencyMs(), requestId: context.requestId });
      throw firstFailure(outcomes, serving.model.vendor);
    }
    const chargedMicro = mediaCostMicro(serving.model.pricing!.perImageMicro, images.length);
    const served = servedBy(images);
    this.deps.metrics?.charged(serving.model.vendor, serving.model.id, NO_TOKENS, chargedMicro);
    await billing.settleHold(hold.id, {
      costMicro: chargedMicro,
      usage: { images: images.length },
      status: images.length < serving.n ? 'partial' : 'ok',
      latencyMs: latencyMs(),
      requestId: context.requestId,
      deployment: served.deployment,
    });
    return { request: serving, images, failed: serving.n - images.length, chargedMicro, usage: summedUsage(images), ...served };
  }

  /** The hold of n × the model's per-image price (usable models always have a price). */
  private reserve(principal: KeyPrincipal, request: ValidImageRequest) {
    const amountMicro = mediaCostMicro(request.model.pricing!.perImageMicro, request.n);
    return this.deps.billing.reserveHold({ principal, purpose: 'image', model: request.model.id, amountMicro });
  }

  /**
   * The request as the model's fallback takes it, answered with the id the client sent
   * (`x-service-model-routed-from`); null without a fallback, when this key may not use it, when
   * the request does not suit it (its sizes, modes, inputs), or when it is cooled itself. One hop.
   */
  private fallbackFor(request: ValidImageRequest, access: ModelAccess): ValidImageRequest | null {
    if (request.model.fallback === null) return null;
    let fallback: ValidImageRequest;
    try {
      fallback = validateImageRequest({ ...request.source, modelId: request.model.fallback }, this.deps.catalog, access);
    } catch {
      return null;
    }
    if (this.deps.providers.forModel(fallback.model).available?.() === false) return null;
    return { ...fallback, routedFrom: request.source.modelId };
  }

  /** The request's n images, one vendor call each, in parallel. */
  private makeAll(request: ValidImageRequest, signal: Cancellation): Promise<PromiseSettledResult<GeneratedImage>[]> {
    return Promise.allSettled(Array.from({ length: request.n }, (_, index) => this.makeOne(request, index, signal)));
  }

  private async makeOne(request: ValidImageRequest, index: number, signal: Cancellation): Promise<GeneratedImage> {
    const provider = this.deps.providers.forModel(request.model);
    const started = performance.now();
    const observe = (error: unknown) => {
      const seconds = (performance.now() - started) / 1000;
      this.deps.metrics?.vendorCallFinished(
        request.model.vendor,
        request.model.id,
        error === null ? seconds : null,
        seconds,
        error === null ? null : error instanceof ProviderError ? error.kind : 'invalid_answer',
      );
    };
    let made;
    try {
      made = await provider.generateImage({
        model: request.model,
        mode: request.mode,
        prompt: request.prompt,
        size: request.size,
        images: request.images,
        index,
        signal,
      });
      observe(null);
    } catch (error) {
      observe(error);
      throw error;
    }
    let fitted;
    try {
      fitted = await fitToSize(made, request.size);
    } catch {
      throw new ProviderError(`${request.model.vendor} answered with an image that could not be decoded.`, request.model.vendor);
    }
    return { ...fitted, usage: made.usage, servedBy: made.servedBy };
  }
}

const delivered = (outcomes: PromiseSettledResult<GeneratedImage>[]): GeneratedImage[] =>
  outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));

function firstFailure(outcomes: PromiseSettledResult<GeneratedImage>[], vendor: string): Error {
  const rejected = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (rejected?.reason instanceof Error) return rejected.reason;
  return new ProviderError('The request was cancelled by the client.', vendor, null, 'client_cancelled');
}

/** Which deployments of a routed model made the images, and the attempts that took (all null for a model without routing). */
function servedBy(images: readonly GeneratedImage[]): { deployment: string | null; attempts: number | null } {
  const routed = images.flatMap((image) => (image.servedBy ? [image.servedBy] : []));
  if (routed.length === 0) return { deployment: null, attempts: null };
  return {
    deployment: [...new Set(routed.map((s) => s.deployment))].join(','),
    attempts: routed.reduce((sum, s) => sum + s.attempts, 0),
  };
}

function summedUsage(images: readonly GeneratedImage[]): ImageTokenUsage | null {
  if (!images.every((image) => image.usage)) return null;
  return images.reduce<ImageTokenUsage>(
    (sum, image) => ({
      inputTokens: sum.inputTokens + image.usage!.inputTokens,
      outputTokens: sum.outputTokens + image.usage!.outputTokens,
    }),
    { inputTokens: 0, outputTokens: 0 },
  );
}
