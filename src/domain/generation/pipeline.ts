import type { KeyPrincipal } from '../shared/principal';
import { resolveModelId } from '../catalog/resolve';
import type { Catalog, TextModel } from '../catalog/types';
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
import { OpenGeneration, type GenerationDeps } from './open-generation';

export interface TextPipelineDeps extends GenerationDeps {
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
    const { model, routedFrom, provider } = this.servingModel(principal, decoded.modelId);
    if (context.outcome) {
      context.outcome.model = model.id;
      context.outcome.vendor = model.vendor;
    }
    const limit = clampOutputLimit(model, decoded.outputLimit.value, decoded.outputLimit.field, decoded.outputLimit.fallback);
    const clamped: CanonicalRequest = withFields(decoded.request, {
      model,
      maxOutputTokens: limit.maxOutputTokens,
      stream: decoded.stream,
    });
    const { request, droppedHints } = settleForVendor(
      validateCanonicalRequest(clamped, decoded, provider.capabilities),
      provider,
      decoded.fields.hints,
      inputTokenBound,
    );
    provider.validate?.(request);
    const prices = pricesOf(model);

    const inputEstimate = await inputTokensWithinContext(request, decoded.fields.prompt ?? 'messages');
    await context.tokens?.reserveTokens(inputEstimate + request.maxOutputTokens);
    let hold;
    try {
      hold = await deps.budget.reserve({
        principal,
        purpose: 'text',
        model: model.id,
        amountMicro: textHoldMicro(prices, { inputTokens: inputEstimate, maxOutputTokens: request.maxOutputTokens }),
      });
    } catch (error) {
      context.tokens?.settleTokens(0);
      throw error;
    }

    // Tracing off: no span, and the only cost is this check.
    const span = context.span ? context.span.child(vendorSpanName(model), vendorSpanAttributes(model, decoded.modelId, request)) : null;
    const vendorStarted = performance.now();
    const upstream = provider.generate(request, context.signal, context.route)[Symbol.asyncIterator]();
    const generation = new OpenGeneration(deps, context, request, prices, hold, upstream, model, started, vendorStarted, span);
    await generation.begin();
    return {
      model,
      routedFrom,
      clampedTo: limit.clampedTo,
      events: generation.events(),
      droppedHints,
      inputUsage: () => generation.inputUsage(),
    };
  }

  /**
   * The model that serves the request: the one asked for, or its operator-defined fallback when
   * every deployment of it is cooled and the fallback (usable by this key) is not (docs/routing.md,
   * Fallback). Chosen before anything is reserved, so the hold and the charge are the serving
   * model's price; `routedFrom` then names the id the client sent.
   */
  private servingModel(principal: KeyPrincipal, sentId: string): { model: TextModel; routedFrom: string | null; provider: TextProvider } {
    const { deps } = this;
    const access = modelAccessFor(principal, deps.configuredVendors);
    const resolved = resolveModelId(deps.catalog, sentId, 'text', access);
    const provider = deps.providers.forModel(resolved.model);
    if (resolved.model.fallback === null || provider.available?.() !== false) return { ...resolved, provider };
    let fallback: TextModel;
    try {
      fallback = resolveModelId(deps.catalog, resolved.model.fallback, 'text', access).model;
    } catch {
      return { ...resolved, provider }; // not usable by this key: the model's own answer (every deployment cooled)
    }
    const fallbackProvider = deps.providers.forModel(fallback);
    if (fallbackProvider.available?.() === false) return { ...resolved, provider };
    return { model: fallback, routedFrom: sentId, provider: fallbackProvider };
  }
}
