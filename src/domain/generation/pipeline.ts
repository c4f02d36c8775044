import { countTokens } from 'gpt-tokenizer';
import type { KeyPrincipal } from '../accounts/auth';
import { resolveModelId, type Catalog, type TextModel } from '../catalog';
import { modelAccessFor } from '../catalog/vendors';
import { estimateInputTokens, type PromptForEstimate } from '../billing/estimate';
import { textChargeMicro, textHoldMicro, type TokenPrices, type TokenUsage } from '../billing/pricing';
import type { BudgetLeases } from '../billing/leases';
import type { UsageCounts } from '../billing/reservations';
import type { Clock } from '../shared/clock';
import { modelNotAvailable } from '../shared/errors';
import type { CanonicalEvent, CanonicalRequest, CanonicalUsage, TextProviderRegistry } from './canonical';
import { ProviderError } from './errors';
import { clampOutputLimit } from './rules';
import type { DecodedTextRequest, TextGeneration, TextGenerationContext, TextGenerationService } from './service';

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
   * already counts it) and the batch writer commits it moments later.
   */
  settleBeforeAnswer?: boolean;
  /** A settlement or release that could not be written (after-answer mode: nobody awaits it). */
  onSettlementFailed?(error: unknown, requestId: string): void;
}

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };
const count = (text: string): number => (text ? countTokens(text, NO_SPECIAL_TOKENS) : 0);

/** Every text the model reads, for the reservation estimate. */
export function promptForEstimate(request: CanonicalRequest): PromptForEstimate {
  const texts: string[] = [];
  for (const message of request.messages) {
    texts.push(message.content);
    if (message.role === 'assistant') for (const call of message.toolCalls) texts.push(call.name, call.arguments);
  }
  for (const tool of request.tools) texts.push(JSON.stringify(tool));
  if (request.responseFormat?.type === 'json_schema') texts.push(JSON.stringify(request.responseFormat.schema));
  return { texts, messages: request.messages.length };
}

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
 * spec 2.8: when the vendor reports no reasoning count but bills output the answer does not
 * show, report billed output minus the visible answer as the (estimated) reasoning count.
 */
export function withReasoningEstimate(usage: CanonicalUsage, visibleAnswerTokens: () => number): CanonicalUsage {
  if (usage.reasoningTokens !== null) return usage; // counted only when needed: tokenizing a long answer costs
  return { ...usage, reasoningTokens: Math.max(0, usage.outputTokens - visibleAnswerTokens()) };
}

/** Canonical usage as billing counts it (a missing reasoning count is 0: never billed on top). */
const billedUsage = (usage: CanonicalUsage): TokenUsage & UsageCounts => ({
  inputTokens: usage.inputTokens,
  cachedInputTokens: usage.cachedInputTokens,
  outputTokens: usage.outputTokens,
  reasoningTokens: usage.reasoningTokens ?? 0,
});

/**
 * The text generation pipeline (GUIDE.md): resolve model id → validate and clamp the output
 * limit → admit the tokens → reserve the price → call the provider → deliver events → settle
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
    const { model, routedFrom } = resolveModelId(deps.catalog, decoded.modelId, 'text', modelAccessFor(principal, deps.configuredVendors));
    const limit = clampOutputLimit(model, decoded.outputLimit.value, decoded.outputLimit.field, decoded.outputLimit.fallback);
    let request: CanonicalRequest = { ...decoded.request, model, maxOutputTokens: limit.maxOutputTokens, stream: decoded.stream };
    if (decoded.finalize) request = decoded.finalize(model, request);
    const prices = pricesOf(model);
    const provider = deps.providers.forModel(model);
    provider.validate?.(request);

    const inputEstimate = estimateInputTokens(promptForEstimate(request), { contextLength: model.contextLength });
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

    const tally = new DeliveryTally();
    let closed = false;
    const close = async (outcome: { usage: CanonicalUsage; status: 'ok' | 'partial' } | null): Promise<void> => {
      if (closed) return;
      closed = true;
      const latencyMs = Date.now() - started;
      let written: Promise<void>;
      if (outcome === null) {
        context.tokens?.settleTokens(0);
        written = deps.budget.release(hold, { recordFailure: true, latencyMs, requestId: context.requestId });
      } else {
        context.tokens?.settleTokens(outcome.usage.inputTokens + outcome.usage.outputTokens);
        const costMicro = textChargeMicro(prices, billedUsage(outcome.usage));
        written = deps.budget.settle(hold, { costMicro, usage: billedUsage(outcome.usage), status: outcome.status, latencyMs, requestId: context.requestId });
        context.onCharged?.(costMicro);
      }
      // The charge is already fixed: settle() claimed the hold and counted it in the lease.
      if (deps.settleBeforeAnswer) await written;
      else reportSettlementFailure(written, deps.onSettlementFailed, context.requestId);
    };
    /** A cut stream: the prompt was read (uncached input, counted without the hold's margin) and what was delivered is charged. */
    const partialUsage = (): CanonicalUsage => ({
      inputTokens: estimateInputTokensExact(request),
      cachedInputTokens: 0,
      outputTokens: tally.deliveredOutputTokens(),
      reasoningTokens: count(tally.reasoningText),
    });
    // A non-streamed answer reaches the client only whole: when it fails, nothing was delivered.
    const delivered = () => decoded.stream && tally.events > 0;
    const closeAfterFailure = () => close(delivered() ? { usage: partialUsage(), status: 'partial' } : null);

    const upstream = provider.generate(request, context.signal)[Symbol.asyncIterator]();
    let first: IteratorResult<CanonicalEvent>;
    try {
      first = await upstream.next();
      if (first.done) throw new ProviderError('The provider ended the answer without a result.', model.vendor);
    } catch (error) {
      await close(null);
      throw error;
    }

    async function* deliver(): AsyncGenerator<CanonicalEvent> {
      let current: IteratorResult<CanonicalEvent> = first;
      try {
        while (!current.done) {
          const event = current.value;
          if (event.type === 'finish') {
            const usage = withReasoningEstimate(event.usage, () => tally.visibleAnswerTokens());
            await close({ usage, status: 'ok' });
            yield { ...event, usage };
            return;
          }
          tally.note(event);
          yield event;
          current = await upstream.next();
        }
        throw new ProviderError('The provider stream ended without a result.', model.vendor);
      } catch (error) {
        await closeAfterFailure();
        throw error;
      } finally {
        // Abandoned by the consumer (client disconnect): stop the upstream call, charge what was delivered.
        if (!closed) {
          await upstream.return?.().catch(() => undefined);
          await closeAfterFailure();
        }
      }
    }

    return { model, routedFrom, clampedTo: limit.clampedTo, events: deliver() };
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

/** Input tokens of the prompt as best counted (no safety margin): charged when a stream is cut. */
function estimateInputTokensExact(request: CanonicalRequest): number {
  const prompt = promptForEstimate(request);
  return prompt.texts.reduce((sum, text) => sum + count(text), 0);
}
