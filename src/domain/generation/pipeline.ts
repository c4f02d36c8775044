import type { KeyPrincipal } from '../shared/principal';
import type { LeasedHold } from '../billing/lease-budgets';
import { noDeploymentServed } from '../routing/failover';
import { resolveModelId } from '../catalog/resolve';
import type { Catalog, ModelAccess, TextModel } from '../catalog/types';
import { modelAccessFor } from '../catalog/vendors';
import { estimateInputTokens } from '../billing/estimate';
import { textHoldMicro, type TokenPrices } from '../billing/pricing';
import type { Clock } from '../shared/clock';
import { modelNotAvailable } from '../shared/errors';
import type { CanonicalRequest, TextProvider, TextProviderRegistry } from './canonical';
import { clampOutputLimit } from './rules';
import type { DecodedTextRequest, TextGeneration, TextGenerationContext, TextGenerationService } from './service';
import { withFields } from '../shared/objects';
import { vendorSpanAttributes, vendorSpanName } from './trace-attributes';
import { validateCanonicalRequest } from './validate';
import { settleForVendor } from './hints';
import { inputTokensWithinContext, promptForEstimate } from './prompt-size';
import { OpenGeneration, type SettlementDeps } from './open-generation';

export interface TextPipelineDeps extends SettlementDeps {
  catalog: Catalog;
  configuredVendors: ReadonlySet<string>;
  providers: TextProviderRegistry;
  clock: Clock;
}

/** The hold's bound of a prompt's input tokens, which context edits compare with their triggers. */
const inputTokenBound = (request: CanonicalRequest): number => estimateInputTokens(promptForEstimate(request));

function pricesOf(model: TextModel): TokenPrices {
  if (!model.pricing) throw modelNotAvailable(model.id); // unpriced models never resolve; defensive
  return model.pricing;
}

/** A model ready to be called: its provider, the request as that model takes it, and what its hold must cover. */
interface Prepared {
  model: TextModel;
  provider: TextProvider;
  request: CanonicalRequest;
  droppedHints: readonly string[];
  clampedTo: number | null;
  prices: TokenPrices;
  inputEstimate: number;
  holdMicro: bigint;
}

/** The model chosen to serve before anything is reserved. */
interface Serving {
  model: TextModel;
  provider: TextProvider;
  /** The id the client sent, when the service id differs (an alias, or the fallback). */
  routedFrom: string | null;
  /** The fallback already serves: there is no second hop. */
  fellBack: boolean;
}

/**
 * The text generation pipeline (docs/text.md): resolve model id → validate and clamp the output
 * limit → the canonical rules (validateCanonicalRequest) → admit the tokens → reserve the price → call the provider → deliver events → settle
 * the exact cost and release the rest. Every path after the reservation ends in exactly one
 * settlement or release: finish (exact usage), provider failure or abandonment by the client
 * (partial charge for what a stream delivered; release when nothing was, which is always the
 * case for a non-streamed answer).
 */
export class TextPipeline implements TextGenerationService {
  constructor(private readonly deps: TextPipelineDeps) {}

  async start(principal: KeyPrincipal, decoded: DecodedTextRequest, context: TextGenerationContext): Promise<TextGeneration> {
    const { deps } = this;
    const started = Date.now();
    const access = modelAccessFor(principal, deps.configuredVendors);
    const serving = this.servingModel(access, decoded.modelId);
    reportModel(context, serving.model);
    const prepared = prepare(serving.model, serving.provider, decoded);
    let ready = prepared instanceof Promise ? await prepared : prepared;

    // Admitted at once by an in-process store (no promise to wait for); a shared one answers later.
    const admitting = context.tokens?.reserveTokens(ready.inputEstimate + ready.request.maxOutputTokens);
    if (admitting) await admitting;
    let hold;
    try {
      hold = await deps.budget.reserve({ principal, purpose: 'text', model: ready.model.id, amountMicro: ready.holdMicro });
    } catch (error) {
      context.tokens?.settleTokens(0);
      throw error;
    }

    let routedFrom = serving.routedFrom;
    let generation = this.call(ready, hold, decoded, context, started);
    try {
      await generation.begin();
    } catch (error) {
      // Whatever goes wrong choosing a fallback, the asked model's own answer stands and the hold is released.
      const fallback =
        serving.fellBack || context.signal.aborted
          ? null
          : await this.fallbackAfter(error, serving.model, access, decoded, hold).catch(() => null);
      if (fallback === null) {
        await generation.fail(error);
        throw error;
      }
      generation.handOver(error);
      ready = fallback;
      routedFrom = decoded.modelId;
      reportModel(context, ready.model);
      generation = this.call(ready, hold, decoded, context, started);
      try {
        await generation.begin();
      } catch (fallbackError) {
        await generation.fail(fallbackError);
        throw fallbackError;
      }
    }
    const opened = generation;
    return {
      model: ready.model,
      routedFrom,
      clampedTo: ready.clampedTo,
      events: opened,
      batches: () => opened.batches(),
      allEvents: () => opened.allEvents(),
      droppedHints: ready.droppedHints,
      inputUsage: () => opened.inputUsage(),
    };
  }

  /** Calls the provider on the reserved hold; the generation waits for its first event (begin). */
  private call(ready: Prepared, hold: LeasedHold, decoded: DecodedTextRequest, context: TextGenerationContext, started: number) {
    const { model, request } = ready;
    // Tracing off: no span, and the only cost is this check.
    const span = context.span ? context.span.child(vendorSpanName(model), vendorSpanAttributes(model, decoded.modelId, request)) : null;
    const vendorStarted = performance.now();
    const answer = ready.provider.generate(request, context.signal, context.route);
    return new OpenGeneration(this.deps, context, request, ready.prices, hold, answer, model, started, vendorStarted, span);
  }

  /**
   * The model that serves the request: the one asked for, or its operator-defined fallback when
   * every deployment of it is cooled and the fallback (usable by this key) is not (docs/routing.md,
   * Fallback). Chosen before anything is reserved, so the hold and the charge are the serving
   * model's price; `routedFrom` then names the id the client sent.
   */
  private servingModel(access: ModelAccess, sentId: string): Serving {
    const resolved = resolveModelId(this.deps.catalog, sentId, 'text', access);
    const provider = this.deps.providers.forModel(resolved.model);
    // Literals of one shape, not spreads: a spread then a new key takes V8's slow path (docs/performance.md).
    const asked: Serving = { model: resolved.model, provider, routedFrom: resolved.routedFrom, fellBack: false };
    if (resolved.model.fallback === null || provider.available?.() !== false) return asked;
    const fallback = this.usableFallback(resolved.model, access);
    return fallback === null ? asked : { model: fallback.model, provider: fallback.provider, routedFrom: sentId, fellBack: true };
  }

  /** The model's fallback when this key may use it and it can take a request now (not every deployment cooled); else null. */
  private usableFallback(model: TextModel, access: ModelAccess): { model: TextModel; provider: TextProvider } | null {
    if (model.fallback === null) return null;
    let fallback: TextModel;
    try {
      fallback = resolveModelId(this.deps.catalog, model.fallback, 'text', access).model;
    } catch {
      return null; // not usable by this key: the model's own answer stands
    }
    const provider = this.deps.providers.forModel(fallback);
    return provider.available?.() === false ? null : { model: fallback, provider };
  }

  /**
   * Every deployment of the asked model failed during the request, before anything reached the
   * client (docs/routing.md, Fallback): its fallback serves instead when it is usable, takes this
   * request (the output limit, the rules and the context of its own), and its bound at its own
   * price fits the hold, grown from slack already leased if need be (BudgetLeases.moveHold).
   * One hold either way, settled once at the serving model's price. Null: the asked model's answer stands.
   */
  private async fallbackAfter(
    error: unknown,
    asked: TextModel,
    access: ModelAccess,
    decoded: DecodedTextRequest,
    hold: LeasedHold,
  ): Promise<Prepared | null> {
    if (asked.fallback === null || !noDeploymentServed(error)) return null;
    const fallback = this.usableFallback(asked, access);
    if (fallback === null) return null;
    let ready: Prepared;
    try {
      ready = await prepare(fallback.model, fallback.provider, decoded);
    } catch {
      return null; // the request does not suit the fallback (its context, what it accepts)
    }
    return this.deps.budget.moveHold(hold, ready.model.id, ready.holdMicro) ? ready : null;
  }
}

/** The access log and metrics name the model that serves (failures included). */
function reportModel(context: TextGenerationContext, model: TextModel): void {
  if (!context.outcome) return;
  context.outcome.model = model.id;
  context.outcome.vendor = model.vendor;
}

/**
 * The request as `model` takes it: its output limit clamped to the model's, the canonical rules
 * for its provider's capabilities, the hints that provider takes, its prompt within the context;
 * and its hold, the most it can cost at the model's price.
 */
// Not an async function: a prompt within the context by its bound (nearly every one) is prepared without a promise.
function prepare(model: TextModel, provider: TextProvider, decoded: DecodedTextRequest): Prepared | Promise<Prepared> {
  const limit = clampOutputLimit(model, decoded.outputLimit.value, decoded.outputLimit.fallback);
  const clamped: CanonicalRequest = withFields(decoded.request, {
    model,
    maxOutputTokens: limit.maxOutputTokens,
    stream: decoded.stream,
  });
  const { request, droppedHints } = settleForVendor(
    validateCanonicalRequest(clamped, provider.capabilities),
    provider,
    decoded.hintNames,
    inputTokenBound,
  );
  provider.validate?.(request);
  const prices = pricesOf(model);
  const ready = (inputEstimate: number): Prepared => ({
    model,
    provider,
    request,
    droppedHints,
    clampedTo: limit.clampedTo,
    prices,
    inputEstimate,
    holdMicro: textHoldMicro(prices, { inputTokens: inputEstimate, maxOutputTokens: request.maxOutputTokens }),
  });
  const inputEstimate = inputTokensWithinContext(request);
  return typeof inputEstimate === 'number' ? ready(inputEstimate) : inputEstimate.then(ready);
}
