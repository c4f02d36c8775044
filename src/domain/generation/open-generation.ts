import { countTokensExactly } from '../billing/estimate';
import { chargeWithinHold, textChargeOfParts, textCostParts, type TokenPrices } from '../billing/pricing';
import { textAnswerCost, type AnswerCost } from '../billing/answer-cost';
import { billedUsage, finishedWith, withReasoningEstimate } from './answer-usage';
import type { LeasedHold } from '../billing/lease-budgets';
import type { TextModel } from '../catalog/types';
import {
  isBatchedAnswer,
  isWholeAnswer,
  type BatchedAnswer,
  type CanonicalEvent,
  type CanonicalRequest,
  type CanonicalUsage,
  type FinishReason,
  type InputUsage,
  type ProviderEvent,
} from './canonical';
import { ProviderError } from './errors';
import type { BudgetLeases } from '../billing/leases';
import type { Metrics, TraceSpan } from '../shared/telemetry';
import type { TextGenerationContext } from './service';
import { usageSpanAttributes } from './trace-attributes';
import { countPromptTokens } from './prompt-size';
import { DeliveryTally } from './delivery-tally';

/**
 * A reserved generation, from the provider's first event to its settlement (the second half of
 * the pipeline, pipeline.ts).
 */

/** What settling a generation needs. */
export interface SettlementDeps {
  /** Request holds are carved from budget leases (billing/leases.ts). */
  budget: BudgetLeases;
  /**
   * Whether an answer's end waits for its settlement to be committed (TOLLGATE_SETTLEMENT =
   * before-answer). By default it does not: the charge is fixed and queued in memory (the lease
   * already counts it) and the batch writer commits it moments later; unless the writer's
   * backlog is at its limit, which makes that answer wait (BudgetLeases.settlementMayTrail).
   */
  settleBeforeAnswer?: boolean;
  /** A settlement or release that could not be written (after-answer mode: nobody awaits it); handed on as it is, unbound. */
  onSettlementFailed?: (error: unknown, requestId: string | null) => void;
  /** Vendor time, tokens and spend; none when absent. */
  metrics?: Metrics;
}

const count = countTokensExactly;

type Outcome = { usage: CanonicalUsage; status: 'ok' | 'partial' } | null;

/**
 * A reserved generation from the provider's first event to its settlement. A class with a
 * generator method rather than an `async function*` declared inside start(): V8 gives every
 * generator function object its own initial map, allocated in old space and pointing back at
 * the function; a per-request generator closure therefore kept its whole request (body,
 * response, signal) alive across young-generation GCs until the next full GC (promoted memory
 * and longer scavenge pauses; docs/performance.md).
 *
 * Iterable (`events()`, event by event), or read whole (`allEvents()`, a non-streamed answer):
 * the same events, tally and settlement either way.
 */
export class OpenGeneration implements AsyncIterable<CanonicalEvent> {
  private readonly tally = new DeliveryTally();
  private first: IteratorResult<CanonicalEvent> | null = null;
  /**
   * A whole answer's events (WholeAnswer), or a batched stream's latest batch (BatchedAnswer),
   * delivered from here without an async step each; null: a stream read event by event from `upstream`.
   */
  private buffered: ProviderEvent[] | null = null;
  private bufferedAt = 0;
  /** The batched stream that refills `buffered`; null: a whole answer, or an unbatched stream. */
  private batchedStream: BatchedAnswer | null = null;
  private upstream: AsyncIterator<ProviderEvent> | null = null;
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
    private readonly deps: SettlementDeps,
    private readonly context: TextGenerationContext,
    private readonly request: CanonicalRequest,
    private readonly prices: TokenPrices,
    private readonly hold: LeasedHold,
    private readonly answer: AsyncIterable<ProviderEvent>,
    private readonly model: TextModel,
    /** When the pipeline began (Date.now()): the usage record's latency. */
    private readonly started: number,
    /** performance.now() when the provider was called: vendor time runs from here. */
    private readonly vendorStarted: number,
    private readonly span: TraceSpan | null,
  ) {
    this.vendor = model.vendor;
  }

  /**
   * Waits for the provider's first event. A failure before it delivered nothing; the caller then
   * releases the hold (fail) or hands it to a fallback model (handOver).
   */
  async begin(): Promise<void> {
    const { answer } = this;
    if (isWholeAnswer(answer)) {
      this.buffered = await answer.whole();
      this.first = this.nextBuffered();
    } else if (isBatchedAnswer(answer)) {
      this.batchedStream = answer;
      this.buffered = [];
      this.first = await this.nextBatched();
    } else {
      this.upstream = answer[Symbol.asyncIterator]();
      this.first = await this.next();
    }
    this.firstEventAt = performance.now();
    if (this.first.done)
      throw new ProviderError('The provider ended the answer without a result.', this.vendor, null, undefined, 'invalid_answer');
  }

  /** The call failed before its first event: nothing was delivered, the hold is released. */
  async fail(error: unknown): Promise<void> {
    await this.close(null, error);
  }

  /** The call failed before its first event and a fallback model serves on the same hold: only the failed vendor call is recorded. */
  handOver(error: unknown): void {
    this.closed = true;
    this.observeVendorCall(null, error);
  }

  [Symbol.asyncIterator](): AsyncIterator<CanonicalEvent> {
    return this.events();
  }

  /** Event by event: the batches' events, one at a time. */
  async *events(): AsyncGenerator<CanonicalEvent> {
    for await (const batch of this.batches()) yield* batch;
  }

  /**
   * The events as they arrived together: every event already in hand (a whole answer's, a
   * batched stream's latest batch) in one batch, so that a stream is delivered, and written to
   * the client, without an async step per event; an unbatched stream's one event at a time.
   * Every event of a batch counts as delivered once the batch is handed over (a cut stream is
   * charged for it), so a consumer writes a batch whole.
   */
  async *batches(): AsyncGenerator<CanonicalEvent[]> {
    let current = this.first!;
    this.first = null;
    try {
      while (!current.done) {
        const batch: CanonicalEvent[] = [];
        for (;;) {
          const event = current.value;
          if (event.type === 'finish') {
            batch.push(await this.finish(event));
            yield batch;
            return;
          }
          this.tally.note(event);
          batch.push(event);
          if (this.buffered === null) break;
          current = this.nextBuffered();
          if (current.done) break;
        }
        yield batch;
        // The vendor's next events, awaited here rather than through next(): no async frame of their own.
        if (this.buffered === null) {
          let result: IteratorResult<ProviderEvent>;
          do result = await this.upstream!.next();
          while (!result.done && !this.deliverable(result.value));
          current = result as IteratorResult<CanonicalEvent>;
        } else if (this.batchedStream !== null) current = await this.nextBatched();
      }
      throw new ProviderError('The provider stream ended without a result.', this.vendor, null, undefined, 'invalid_answer');
    } catch (error) {
      await this.closeAfterFailure(error);
      throw error;
    } finally {
      // Abandoned by the consumer (client disconnect): stop the upstream call, charge what was delivered.
      if (!this.closed) {
        // The answer is charged for what was delivered; a vendor stream failing to close changes nothing.
        this.batchedStream?.close();
        await this.upstream?.return?.().catch(() => undefined);
        await this.closeAfterFailure();
      }
    }
  }

  /**
   * Every event at once, for a client that reads the answer whole: what `events()` gives, with the
   * same tally and settlement. A whole answer's events are all in hand, so they are delivered
   * without an async step each; a streamed one is read through `events()`.
   */
  // Not an async function: a whole answer settled after it is answered (the default) is
  // delivered without an async frame or an await of its own (nor finish's, nor close's).
  allEvents(): Promise<CanonicalEvent[]> {
    if (this.buffered === null || this.batchedStream !== null) return this.allStreamedEvents();
    let events: CanonicalEvent[] | Promise<CanonicalEvent[]>;
    try {
      events = this.allBufferedEvents();
    } catch (error) {
      return this.failedWith(error);
    }
    return events instanceof Promise ? events.catch((error: unknown) => this.failedWith(error)) : Promise.resolve(events);
  }

  private async allStreamedEvents(): Promise<CanonicalEvent[]> {
    const events: CanonicalEvent[] = [];
    for await (const batch of this.batches()) for (const event of batch) events.push(event);
    return events;
  }

  /** A whole answer's events: an array, or its promise when the finish waits for the charge's commit. */
  private allBufferedEvents(): CanonicalEvent[] | Promise<CanonicalEvent[]> {
    const events: CanonicalEvent[] = [];
    let current = this.first!;
    this.first = null;
    while (!current.done) {
      const event = current.value;
      if (event.type === 'finish') {
        const finished = this.finish(event);
        if (finished instanceof Promise)
          return finished.then((last) => {
            events.push(last);
            return events;
          });
        events.push(finished);
        return events;
      }
      this.tally.note(event);
      events.push(event);
      current = this.nextBuffered();
    }
    throw new ProviderError('The provider stream ended without a result.', this.vendor, null, undefined, 'invalid_answer');
  }

  /** Settles what a failure leaves to settle, then fails with it. */
  private async failedWith(error: unknown): Promise<never> {
    await this.closeAfterFailure(error);
    throw error;
  }

  /** The finish as delivered: usage with the reasoning estimate, and the answer's cost once settled (a promise while its commit is awaited). */
  private finish(event: Extract<CanonicalEvent, { type: 'finish' }>): CanonicalEvent | Promise<CanonicalEvent> {
    this.finishReason = event.reason;
    const usage = withReasoningEstimate(event.usage, () => this.tally.visibleAnswerTokens());
    const cost = this.close({ usage, status: 'ok' });
    return cost instanceof Promise ? cost.then((settled) => finishedWith(event, usage, settled)) : finishedWith(event, usage, cost);
  }

  /** An unbatched stream's next deliverable event (its first: begin()). */
  private async next(): Promise<IteratorResult<CanonicalEvent>> {
    for (;;) {
      const result = await this.upstream!.next();
      if (result.done || this.deliverable(result.value)) return result as IteratorResult<CanonicalEvent>;
    }
  }

  /** A batched stream's next deliverable event: from the batch in hand, else from the next batches. */
  private async nextBatched(): Promise<IteratorResult<CanonicalEvent>> {
    for (;;) {
      const current = this.nextBuffered();
      if (!current.done) return current;
      const batch = await this.batchedStream!.nextBatch();
      if (batch === null) return current;
      this.buffered = batch;
      this.bufferedAt = 0;
    }
  }

  private nextBuffered(): IteratorResult<CanonicalEvent> {
    const events = this.buffered!;
    while (this.bufferedAt < events.length) {
      const event = events[this.bufferedAt++]!;
      if (this.deliverable(event)) return { done: false, value: event };
    }
    return { done: true, value: undefined };
  }

  /** False for what the vendor reports on the way, which is kept, not delivered: the prompt's usage, the serving deployment. */
  private deliverable(event: ProviderEvent): event is CanonicalEvent {
    if (event.type === 'input-usage') this.reportedInput = event.usage;
    else if (event.type === 'served-by') this.servedBy(event);
    else return true;
    return false;
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

  /**
   * Settles (or releases) exactly once; `error` is the failure that ended the call, if one did.
   * Answers what was charged, if anything was: at once, or once committed when the answer waits
   * for its charge (TOLLGATE_SETTLEMENT=before-answer, or a full settlement backlog).
   */
  private close(outcome: Outcome, error?: unknown): AnswerCost | null | Promise<AnswerCost | null> {
    if (this.closed) return null;
    this.closed = true;
    const { deps, context, hold } = this;
    const latencyMs = Date.now() - this.started;
    this.observeVendorCall(outcome, error);
    // Checked before queueing: an answer ends before its charge commits only while the backlog has room.
    const awaitCommit = deps.settleBeforeAnswer || !deps.budget.settlementMayTrail();
    let written: Promise<void> | null = null;
    let cost: AnswerCost | null = null;
    if (outcome === null) {
      context.tokens?.settleTokens(0);
      written = deps.budget.release(hold, { recordFailure: true, latencyMs, requestId: context.requestId, deployment: this.deployment });
    } else {
      context.tokens?.settleTokens(outcome.usage.inputTokens + outcome.usage.outputTokens);
      const usage = billedUsage(outcome.usage);
      const parts = textCostParts(this.prices, usage);
      const costMicro = textChargeOfParts(parts);
      const input = { costMicro, usage, status: outcome.status, latencyMs, requestId: context.requestId, deployment: this.deployment };
      // Trailing (nearly every answer): no promise waits in the backlog, only a failure is reported.
      if (awaitCommit) written = deps.budget.settle(hold, input);
      else deps.budget.settleTrailing(hold, input, deps.onSettlementFailed ?? NO_REPORT);
      // Charged up to the hold: a vendor reporting more usage than the hold covers is an overage, not a charge.
      const { chargedMicro } = chargeWithinHold(costMicro, hold.amountMicro);
      cost = textAnswerCost(parts, chargedMicro);
      context.onCharged?.(chargedMicro);
      deps.metrics?.charged(this.vendor, this.model.id, usage, chargedMicro);
    }
    // The charge is already fixed: settle() claimed the hold and counted it in the lease.
    if (written === null) return cost;
    if (awaitCommit) return written.then(() => cost);
    written.catch(settlementFailureReport(deps.onSettlementFailed, context.requestId));
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

const NO_REPORT = (): void => undefined;

/**
 * After-answer: nobody awaits the release, so a failure is reported. Made out here so that the
 * handler, which lives until the batch is committed (up to the batch window and the commit),
 * holds only what it reports: a closure made inside `close` would keep the whole request (its
 * body, events and response) alive until then. (A settlement's listener carries the request id
 * itself, and is given `onSettlementFailed` as it is.)
 */
function settlementFailureReport(report: SettlementDeps['onSettlementFailed'], requestId: string): (error: unknown) => void {
  return (error) => report?.(error, requestId);
}
