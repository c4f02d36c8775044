import type { KeyPrincipal } from '../shared/principal';
import { resolveModelId } from '../catalog/resolve';
import type { Catalog, TextModel } from '../catalog/types';
import { modelAccessFor } from '../catalog/vendors';
import { countTokensExactly, estimateInputTokens } from '../billing/estimate';
import { chargeWithinHold, textChargeMicro, textHoldMicro, type TokenPrices, type TokenUsage } from '../billing/pricing';
import { textAnswerCost, type AnswerCost } from '../billing/answer-cost';
import type { BudgetLeases } from '../billing/leases';
import type { LeasedHold } from '../billing/lease-budgets';
import type { UsageCounts } from '../billing/usage-counts';
import type { Clock } from '../shared/clock';
import { modelNotAvailable } from '../shared/errors';
import type {
  CanonicalEvent,
  CanonicalRequest,
  CanonicalUsage,
  FinishReason,
  InputUsage,
  ProviderEvent,
  TextProvider,
  TextProviderRegistry,
} from './canonical';
import { ProviderError } from './errors';
import { clampOutputLimit } from './rules';
import type { DecodedTextRequest, TextGeneration, TextGenerationContext, TextGenerationService } from './service';
import { withFields } from '../shared/objects';
import type { Metrics, TraceSpan } from '../shared/telemetry';
import { usageSpanAttributes, vendorSpanAttributes, vendorSpanName } from './trace-attributes';
import { validateCanonicalRequest } from './validate';
import { settleForVendor } from './hints';
import { countPromptTokens, inputTokensWithinContext, promptForEstimate } from './prompt-size';

export interface TextPipelineDeps {
  catalog: Catalog;
  configuredVendors: ReadonlySet<string>;
  providers: TextProviderRegistry;
  /** Request holds are carved from budget leases (billing/leases.ts). */
  budget: BudgetLeases;
  clock: Clock;
  /**
   * Whether an answer's end waits for its settlement to be committed (TOLLGATE_SETTLEMENT =
   * before-answer). By default it does not: the charge is fixed and queued in memory (the lease
   * already counts it) and the batch writer commits it moments later; unless the writer's
   * backlog is at its limit, which makes that answer wait (BudgetLeases.settlementMayTrail).
   */
  settleBeforeAnswer?: boolean;
  /** A settlement or release that could not be written (after-answer mode: nobody awaits it). */
  onSettlementFailed?(error: unknown, requestId: string): void;
  /** Vendor time, tokens and spend; none when absent. */
  metrics?: Metrics;
}

const count = countTokensExactly;

/** The hold's bound of a prompt's input tokens, which context edits compare with their triggers. */
const inputTokenBound = (request: CanonicalRequest): number => estimateInputTokens(promptForEstimate(request));

function pricesOf(model: TextModel): TokenPrices {
  if (!model.pricing) throw modelNotAvailable(model.id); // unpriced models never resolve; defensive
  return model.pricing;
}

/** What the client has been sent so far (streams only): the base of a partial charge when the stream is cut. */
class DeliveryTally {
  answerText = '';
  reasoningText = '';
  toolArguments = '';
  events = 0;

  note(event: CanonicalEvent): void {
    this.events++;
    if (event.type === 'text-delta') this.answerText += event.text;
    else if (event.type === 'reasoning-delta') this.reasoningText += event.text;
    else if (event.type === 'tool-call-delta') this.toolArguments += event.argumentsDelta;
    else if (event.type === 'tool-call-start') this.toolArguments += event.name;
    // The model wrote the call a vendor then made (or asks approval for) as it writes a tool call.
    else if (event.type === 'mcp-item' && (event.item.kind === 'call' || event.item.kind === 'approval_request'))
      this.toolArguments += event.item.name + event.item.arguments;
  }

  /** Tokens of the answer the client can see (text and tool calls, not reasoning). */
  visibleAnswerTokens(): number {
    return count(this.answerText) + count(this.toolArguments);
  }

  deliveredOutputTokens(): number {
    return this.visibleAnswerTokens() + count(this.reasoningText);
  }
}

/**
 * When the vendor reports no reasoning count but bills output the answer does not show, the
 * reported reasoning count is billed output minus the visible answer (an estimate).
 */
export function withReasoningEstimate(usage: CanonicalUsage, visibleAnswerTokens: () => number): CanonicalUsage {
  if (usage.reasoningTokens !== null) return usage; // counted only when needed: tokenizing a long answer costs
  return { ...usage, reasoningTokens: Math.max(0, usage.outputTokens - visibleAnswerTokens()) };
}

/** Canonical usage as billing counts it (a missing reasoning count is 0: never billed on top). */
const billedUsage = (usage: CanonicalUsage): TokenUsage & UsageCounts => ({
  inputTokens: usage.inputTokens,
  cachedInputTokens: usage.cachedInputTokens,
  cacheWrite5mInputTokens: usage.cacheWrite5mInputTokens ?? 0,
  cacheWrite1hInputTokens: usage.cacheWrite1hInputTokens ?? 0,
  outputTokens: usage.outputTokens,
  reasoningTokens: usage.reasoningTokens ?? 0,
});

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

    const inputEstimate = await inputTokensWithinContext(request);
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

type Outcome = { usage: CanonicalUsage; status: 'ok' | 'partial' } | null;

/**
 * A reserved generation from the provider's first event to its settlement. A class with a
 * generator method rather than an `async function*` declared inside start(): V8 gives every
 * generator function object its own initial map, allocated in old space and pointing back at
 * the function; a per-request generator closure therefore kept its whole request (body,
 * response, signal) alive across young-generation GCs until the next full GC (promoted memory
 * and longer scavenge pauses; docs/performance.md).
 */
class OpenGeneration {
  private readonly tally = new DeliveryTally();
  private first: IteratorResult<CanonicalEvent> | null = null;
  /** The prompt's usage, when the vendor reported it before its answer. */
  private reportedInput: InputUsage | null = null;
  private closed = false;
  /** performance.now() when the vendor's first event arrived (0: none yet). */
  private firstEventAt = 0;
  /** The vendor that answers: the model's, or the deployment's that served (routing). */
  private vendor: string;
  /** The deployment that served, for a routed model. */
  private deployment: string | null = null;
  private finishReason: FinishReason | null = null;

  constructor(
    private readonly deps: TextPipelineDeps,
    private readonly context: TextGenerationContext,
    private readonly request: CanonicalRequest,
    private readonly prices: TokenPrices,
    private readonly hold: LeasedHold,
    private readonly upstream: AsyncIterator<ProviderEvent>,
    private readonly model: TextModel,
    /** When the pipeline began (Date.now()): the usage record's latency. */
    private readonly started: number,
    /** performance.now() when the provider was called: vendor time runs from here. */
    private readonly vendorStarted: number,
    private readonly span: TraceSpan | null,
  ) {
    this.vendor = model.vendor;
  }

  /** Waits for the provider's first event: a failure before it is an ordinary error (nothing was delivered). */
  async begin(): Promise<void> {
    try {
      this.first = await this.next();
      this.firstEventAt = performance.now();
      if (this.first.done)
        throw new ProviderError('The provider ended the answer without a result.', this.vendor, null, undefined, 'invalid_answer');
    } catch (error) {
      await this.close(null, error);
      throw error;
    }
  }

  async *events(): AsyncGenerator<CanonicalEvent> {
    let current = this.first!;
    this.first = null;
    try {
      while (!current.done) {
        const event = current.value;
        if (event.type === 'finish') {
          this.finishReason = event.reason;
          const usage = withReasoningEstimate(event.usage, () => this.tally.visibleAnswerTokens());
          const cost = await this.close({ usage, status: 'ok' });
          yield { ...event, usage: cost ? { ...usage, cost } : usage };
          return;
        }
        this.tally.note(event);
        yield event;
        current = await this.next();
      }
      throw new ProviderError('The provider stream ended without a result.', this.vendor, null, undefined, 'invalid_answer');
    } catch (error) {
      await this.closeAfterFailure(error);
      throw error;
    } finally {
      // Abandoned by the consumer (client disconnect): stop the upstream call, charge what was delivered.
      if (!this.closed) {
        // The answer is charged for what was delivered; a vendor stream failing to close changes nothing.
        await this.upstream.return?.().catch(() => undefined);
        await this.closeAfterFailure();
      }
    }
  }

  /** The vendor's next canonical event; the prompt's usage and the serving deployment it reports on the way are kept, not delivered. */
  private async next(): Promise<IteratorResult<CanonicalEvent>> {
    for (;;) {
      const result = await this.upstream.next();
      if (result.done) return result;
      const event = result.value;
      if (event.type === 'input-usage') this.reportedInput = event.usage;
      else if (event.type === 'served-by') this.servedBy(event);
      else return result as IteratorResult<CanonicalEvent>;
    }
  }

  private servedBy(event: Extract<ProviderEvent, { type: 'served-by' }>): void {
    this.vendor = event.vendor;
    this.deployment = event.deployment;
    const outcome = this.context.outcome;
    if (outcome) {
      outcome.vendor = event.vendor;
      outcome.deployment = event.deployment;
      outcome.attempts = event.attempts;
    }
  }

  /** The prompt's input usage: the vendor's figure when it sent one before its answer, else Tollgate's count of the prompt. */
  inputUsage(): InputUsage {
    return this.reportedInput ?? { inputTokens: countPromptTokens(this.request), cachedInputTokens: 0 };
  }

  /** A non-streamed answer reaches the client only whole: when it fails, nothing was delivered. */
  private async closeAfterFailure(error?: unknown): Promise<void> {
    const delivered = this.request.stream && this.tally.events > 0;
    await this.close(delivered ? { usage: this.partialUsage(), status: 'partial' } : null, error);
  }

  /** A cut stream: the prompt was read (uncached input, counted without the hold's margin) and what was delivered is charged. */
  private partialUsage(): CanonicalUsage {
    return {
      inputTokens: countPromptTokens(this.request),
      cachedInputTokens: 0,
      outputTokens: this.tally.deliveredOutputTokens(),
      reasoningTokens: count(this.tally.reasoningText),
    };
  }

  /** Settles (or releases) exactly once; `error` is the failure that ended the call, if one did. Answers what was charged, if anything was. */
  private async close(outcome: Outcome, error?: unknown): Promise<AnswerCost | null> {
    if (this.closed) return null;
    this.closed = true;
    const { deps, context, hold } = this;
    const latencyMs = Date.now() - this.started;
    this.observeVendorCall(outcome, error);
    // Checked before queueing: an answer ends before its charge commits only while the backlog has room.
    const awaitCommit = deps.settleBeforeAnswer || !deps.budget.settlementMayTrail();
    let written: Promise<void>;
    let cost: AnswerCost | null = null;
    if (outcome === null) {
      context.tokens?.settleTokens(0);
      written = deps.budget.release(hold, { recordFailure: true, latencyMs, requestId: context.requestId, deployment: this.deployment });
    } else {
      context.tokens?.settleTokens(outcome.usage.inputTokens + outcome.usage.outputTokens);
      const usage = billedUsage(outcome.usage);
      const costMicro = textChargeMicro(this.prices, usage);
      written = deps.budget.settle(hold, {
        costMicro,
        usage,
        status: outcome.status,
        latencyMs,
        requestId: context.requestId,
        deployment: this.deployment,
      });
      // Charged up to the hold: a vendor reporting more usage than the hold covers is an overage, not a charge.
      const { chargedMicro } = chargeWithinHold(costMicro, hold.amountMicro);
      cost = textAnswerCost(this.prices, usage, chargedMicro);
      context.onCharged?.(chargedMicro);
      deps.metrics?.charged(this.vendor, this.model.id, usage, chargedMicro);
    }
    // The charge is already fixed: settle() claimed the hold and counted it in the lease.
    if (awaitCommit) await written;
    else reportSettlementFailure(written, deps.onSettlementFailed, context.requestId);
    return cost;
  }

  /** Vendor time (to the first event and in all), its failure kind, and the vendor span's end. */
  private observeVendorCall(outcome: Outcome, error: unknown): void {
    const now = performance.now();
    const seconds = (now - this.vendorStarted) / 1000;
    if (this.context.outcome) this.context.outcome.vendorSeconds = seconds;
    const errorKind = error instanceof ProviderError ? error.kind : null;
    const firstEventSeconds = this.firstEventAt === 0 ? null : (this.firstEventAt - this.vendorStarted) / 1000;
    this.deps.metrics?.vendorCallFinished(this.vendor, this.model.id, firstEventSeconds, seconds, errorKind);
    const span = this.span;
    if (span === null) return;
    if (outcome) span.setAttributes(usageSpanAttributes(outcome.usage, this.finishReason));
    if (error instanceof ProviderError) span.fail(error.code, error.message);
    span.end();
  }
}

/**
 * After-answer: nobody awaits the settlement, so a failure is reported. Defined out here so
 * that the handler, which lives until the batch is committed (up to the batch window and the
 * commit), holds only what it reports: a closure made inside `start` would keep the whole
 * request (its body, events and response) alive until then.
 */
function reportSettlementFailure(written: Promise<void>, report: TextPipelineDeps['onSettlementFailed'], requestId: string): void {
  written.catch((error: unknown) => report?.(error, requestId));
}
