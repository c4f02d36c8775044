import type { Deployment, TextModel } from '../catalog/types';
import { Cancellation } from '../generation/cancellation';
import {
  isWholeAnswer,
  type CanonicalRequest,
  type ProviderEvent,
  type RouteHints,
  type TextProvider,
  type WholeAnswer,
} from '../generation/canonical';
import { ProviderError } from '../generation/errors';
import { ApiError, deploymentsUnavailable, upstreamRateLimited } from '../shared/errors';
import { conversationKey, type StickyRoutes } from './affinity';
import type { DeploymentHealth } from './health';

/**
 * Failover across a model's deployments (docs/routing.md): before the first event of an answer
 * reaches the pipeline (so before any byte reaches the client), a deployment's failure moves the
 * request to the next one; after it, nothing is retried. One hold covers the request (the
 * pipeline reserved it before calling); a failed attempt delivered nothing, so it costs nothing.
 */

export interface RoutingPolicy {
  /** Deployments tried per request, at most. */
  maxAttempts: number;
  /** No attempt starts later than this after the first (ms). */
  budgetMs: number;
  /** A streamed attempt that sends no event for this long is abandoned for the next deployment (ms); the last candidate waits for the transport's own timeout. */
  firstByteTimeoutMs: number;
}

export const DEFAULT_ROUTING_POLICY: RoutingPolicy = { maxAttempts: 3, budgetMs: 60_000, firstByteTimeoutMs: 30_000 };

export type AttemptOutcome = 'served' | 'failed' | 'refused';

/** What routing reports (metrics): labels are the catalog's model and deployment names, a bounded set. */
export interface RoutingMetrics {
  attempt(model: string, deployment: string, outcome: AttemptOutcome): void;
  /** A request moved on from `deployment` to another. */
  failover(model: string, deployment: string): void;
  cooled(model: string, deployment: string): void;
}

/** One deployment as routing uses it: its provider, the model as that deployment names it, its health key. */
export interface RouteTarget {
  deployment: Deployment;
  /** The catalog model with this deployment's vendor, protocol and vendor model id. */
  model: TextModel;
  provider: TextProvider;
  /** `<model id>/<deployment name>`: the breaker's and the shared store's key. */
  key: string;
}

/** What ordering and the attempt budget need of a deployment to try, text's or an image model's. */
export interface Routable {
  readonly deployment: Deployment;
  /** `<model id>/<deployment name>`: the breaker's key. */
  readonly key: string;
}

/**
 * Whether another attempt may start: fewer than `maxAttempts` so far, and (after the first) the
 * time budget not spent since the first began. Text and image routing both ask it.
 */
export function withinAttemptBudget(policy: RoutingPolicy, attempts: number, startedMs: number, nowMs: number): boolean {
  return attempts < policy.maxAttempts && (attempts === 0 || nowMs - startedMs < policy.budgetMs);
}

export const healthKey = (model: { readonly id: string }, deployment: Deployment): string => `${model.id}/${deployment.name}`;

/** The model id and deployment name of a health key (model ids hold one slash, deployment names none). */
export function splitHealthKey(key: string): [model: string, deployment: string] {
  const slash = key.lastIndexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/**
 * Whether a failure is the deployment's (another may serve the request): no connection, no
 * first byte in time, a 429, a 5xx (Anthropic's 529 "overloaded" included), an answer that is
 * not the protocol, and the 4xx that a deployment's own setup causes (a key it refuses, a model
 * or Azure deployment it does not have). A 4xx the request itself causes (400, 413, 422) would
 * fail anywhere, and a cancelled request has nobody to answer.
 */
export function isDeploymentFailure(error: unknown): error is ProviderError {
  if (!(error instanceof ProviderError)) return false;
  switch (error.kind) {
    case 'connect':
    case 'timeout':
    case 'http_429':
    case 'http_5xx':
    case 'broken_stream':
    case 'invalid_answer':
      return true;
    case 'http_4xx':
      return error.vendorStatus === 401 || error.vendorStatus === 403 || error.vendorStatus === 404 || error.vendorStatus === 408;
    case 'cancelled':
      return false;
  }
}

/**
 * Whether a routed request ended with no deployment serving it for the deployments' sake: each
 * tried one failed in a way of its own, or was cooled (the answers below). Not a request's own
 * 4xx, nor a client that went away: a fallback model could serve the one, not the other.
 */
export function noDeploymentServed(error: unknown): boolean {
  // A ProviderError is an ApiError too: asked first.
  if (isDeploymentFailure(error)) return true;
  return error instanceof ApiError && (error.code === 'deployments_unavailable' || error.code === 'upstream_rate_limited');
}

/**
 * Why no deployment served, when none failed in a way of its own: every one cooled (503), or
 * every one rate-limited by its vendor, cooling after a 429 or answering 429 now (429, so the
 * client backs off); either way Retry-After is the soonest a deployment may serve again.
 */
export function noDeployment(model: { readonly id: string }, availableAt: number, rateLimited: boolean): ApiError {
  const seconds = Math.max(1, Math.ceil((availableAt - Date.now()) / 1000));
  return rateLimited ? upstreamRateLimited(model.id, seconds) : deploymentsUnavailable(model.id, seconds);
}

/** A client that went away before any deployment served. */
export function cancelledBy(model: { readonly id: string }, deployment: Deployment): ProviderError {
  return new ProviderError(`The request to ${model.id} was cancelled by the client.`, deployment.vendor, null, 'client_cancelled');
}

export class Router {
  constructor(
    private readonly health: DeploymentHealth,
    private readonly sticky: StickyRoutes,
    private readonly policy: RoutingPolicy = DEFAULT_ROUTING_POLICY,
    private readonly metrics: RoutingMetrics | null = null,
    private readonly random: () => number = Math.random,
  ) {}

  /** The events of the first deployment that answers; a `served-by` event precedes them. */
  stream(
    model: TextModel,
    targets: readonly RouteTarget[],
    request: CanonicalRequest,
    signal: Cancellation,
    hints: RouteHints | undefined,
  ): AsyncIterable<ProviderEvent> {
    const conversation = targets.length > 1 ? conversationKey(request, hints?.session ?? null) : null;
    // A non-streamed request may be answered whole, as a direct model's is (docs/performance.md, "Fast paths").
    const Answer = request.stream === false ? FailoverWhole : FailoverStream;
    return new Answer(this, model, targets, request, signal, conversation);
  }

  /**
   * The order to try: the conversation's last deployment (`warm`) first (its cache is warm), then
   * by priority, and within a priority a weighted random order (Efraimidis-Spirakis keys).
   */
  order<T extends Routable>(targets: readonly T[], warm: string | null): T[] {
    if (targets.length === 1) return [targets[0]!];
    const keyed = targets.map((target) => ({ target, key: Math.pow(this.random(), 1 / target.deployment.weight) }));
    keyed.sort((a, b) => a.target.deployment.priority - b.target.deployment.priority || b.key - a.key);
    const ordered = keyed.map((k) => k.target);
    if (warm !== null) {
      const index = ordered.findIndex((target) => target.deployment.name === warm);
      if (index > 0) ordered.unshift(...ordered.splice(index, 1));
    }
    return ordered;
  }

  /** Whether a deployment may take a request now (none cooled past reach): the pipeline's test for a model's fallback. */
  anyAvailable(targets: readonly Routable[]): boolean {
    return targets.some((target) => this.health.availableAt(target.key) === 0);
  }

  /** @internal for FailoverStream and firstToServe (first-to-serve.ts) */
  get deps() {
    return { health: this.health, sticky: this.sticky, policy: this.policy, metrics: this.metrics };
  }
}

/**
 * The iterator the pipeline reads: its first `next()` runs the attempts; later ones go straight
 * to the serving deployment's stream (one call more per event, no generator in between).
 */
class FailoverStream implements AsyncIterableIterator<ProviderEvent> {
  protected current: AsyncIterator<ProviderEvent> | null = null;
  private serving: RouteTarget | null = null;
  protected held: IteratorResult<ProviderEvent> | null = null;
  private probe: string | null = null;
  private attempts = 0;
  /** The deployments in the order to try (start). */
  private candidates: RouteTarget[] = [];

  constructor(
    private readonly router: Router,
    private readonly model: TextModel,
    private readonly targets: readonly RouteTarget[],
    private readonly request: CanonicalRequest,
    private readonly signal: Cancellation,
    private readonly conversation: string | null,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ProviderEvent>> {
    if (this.held !== null) {
      const held = this.held;
      this.held = null;
      return Promise.resolve(held);
    }
    if (this.current !== null) return this.current.next().then(undefined, this.streamFailed);
    return this.start();
  }

  async return(): Promise<IteratorResult<ProviderEvent>> {
    if (this.probe !== null) this.router.deps.health.abandoned(this.probe);
    this.probe = null;
    await this.current?.return?.().catch(() => undefined);
    return { done: true, value: undefined };
  }

  /** A failure after the first event is not retried, but counts against the deployment. */
  private readonly streamFailed = (error: unknown): never => {
    if (this.serving !== null && isDeploymentFailure(error)) this.router.deps.health.failed(this.serving.key, error);
    throw error;
  };

  protected async start(): Promise<IteratorResult<ProviderEvent>> {
    const { health, policy, metrics, sticky } = this.router.deps;
    let warm = this.conversation === null ? null : sticky.recall(this.conversation);
    // Awaited only when the shared store is asked (a named conversation this instance does not know).
    if (warm instanceof Promise) warm = await warm;
    this.candidates = this.router.order(this.targets, warm);
    const started = Date.now();
    let lastError: unknown = null;
    let soonest = Infinity;
    // Every deployment seen so far was rate-limited by its vendor (a 429 now, or cooling after one).
    let allRateLimited = true;
    for (let i = 0; i < this.candidates.length; i++) {
      const target = this.candidates[i]!;
      if (this.signal.aborted) throw lastError ?? cancelledBy(this.model, target.deployment);
      if (!withinAttemptBudget(policy, this.attempts, started, Date.now())) break;
      const admission = health.admit(target.key);
      if (admission === null) {
        soonest = Math.min(soonest, health.availableAt(target.key));
        allRateLimited &&= health.rateLimited(target.key);
        metrics?.attempt(this.model.id, target.deployment.name, 'refused');
        continue;
      }
      this.probe = admission === 'probe' ? target.key : null;
      this.attempts++;
      const last = this.attempts >= policy.maxAttempts || !this.anotherAfter(i);
      try {
        const first = await this.attempt(target, last ? 0 : policy.firstByteTimeoutMs);
        this.probe = null;
        health.succeeded(target.key);
        metrics?.attempt(this.model.id, target.deployment.name, 'served');
        if (this.conversation !== null) this.router.deps.sticky.remember(this.conversation, target.deployment.name);
        this.held = first;
        return {
          done: false,
          value: { type: 'served-by', deployment: target.deployment.name, vendor: target.deployment.vendor, attempts: this.attempts },
        };
      } catch (error) {
        this.current = null;
        if (!isDeploymentFailure(error) || this.signal.aborted) {
          if (this.probe !== null) health.abandoned(this.probe);
          this.probe = null;
          // Not the deployment's doing: the request's own 4xx, or the client went away.
          throw error;
        }
        this.probe = null;
        health.failed(target.key, error);
        metrics?.attempt(this.model.id, target.deployment.name, 'failed');
        metrics?.failover(this.model.id, target.deployment.name);
        lastError = error;
        if (error.vendorStatus === 429) soonest = Math.min(soonest, Date.now() + (error.retryAfterMs ?? 0));
        else allRateLimited = false;
      }
    }
    if (lastError !== null && !allRateLimited) throw lastError;
    throw noDeployment(this.model, soonest === Infinity ? Date.now() + 1000 : soonest, allRateLimited);
  }

  /** Whether a deployment after the i-th could still be tried now. */
  private anotherAfter(i: number): boolean {
    const { health } = this.router.deps;
    for (let j = i + 1; j < this.candidates.length; j++) if (health.availableAt(this.candidates[j]!.key) === 0) return true;
    return false;
  }

  /**
   * One deployment's call up to its first event. A streamed attempt with another deployment
   * behind it has its own cancellation, tied to the client's, so that it can be dropped when its
   * first event is late; any other attempt uses the client's own (no timer, no listener).
   */
  private async attempt(target: RouteTarget, firstByteTimeoutMs: number): Promise<IteratorResult<ProviderEvent>> {
    const parent = this.signal;
    const timed = firstByteTimeoutMs > 0 && this.request.stream !== false;
    const cancellation = timed ? new Cancellation() : parent;
    const forward = () => cancellation.cancel();
    let timedOut = false;
    let timer: NodeJS.Timeout | null = null;
    if (timed) {
      parent.once('abort', forward);
      timer = setTimeout(() => {
        timedOut = true;
        cancellation.cancel();
      }, firstByteTimeoutMs);
    }
    try {
      const request = { ...this.request, model: target.model };
      this.serving = target;
      const first = await this.firstEvent(target.provider.generate(request, cancellation));
      if (first.done)
        throw new ProviderError(
          `${target.deployment.vendor} ended the answer without a result.`,
          target.deployment.vendor,
          null,
          undefined,
          'invalid_answer',
        );
      return first;
    } catch (error) {
      if (timed) parent.off('abort', forward);
      await this.current?.return?.().catch(() => undefined);
      if (timedOut && !parent.aborted)
        throw new ProviderError(
          `${target.deployment.vendor} sent nothing within ${firstByteTimeoutMs / 1000} s.`,
          target.deployment.vendor,
          null,
          undefined,
          'timeout',
        );
      throw error;
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  /** The answer's first event; the rest is read through `current`. */
  protected firstEvent(answer: AsyncIterable<ProviderEvent>): Promise<IteratorResult<ProviderEvent>> {
    this.current = answer[Symbol.asyncIterator]();
    return this.current.next();
  }
}

/**
 * A non-streamed request's failover, readable whole: an attempt whose provider answers whole
 * (WholeAnswer) is read in one promise, so a routed model's JSON answer takes the same fast path
 * as a direct one. The attempts, their order and what moves a request on are FailoverStream's;
 * read event by event, it is FailoverStream.
 */
class FailoverWhole extends FailoverStream implements WholeAnswer {
  /** Set by whole(); read event by event (next()), every attempt is read as a stream. */
  private readingWhole = false;
  /** The serving attempt's events, when its provider answered whole. */
  private wholeEvents: ProviderEvent[] | null = null;

  protected override firstEvent(answer: AsyncIterable<ProviderEvent>): Promise<IteratorResult<ProviderEvent>> {
    if (!this.readingWhole || !isWholeAnswer(answer)) return super.firstEvent(answer);
    return answer.whole().then((events): IteratorResult<ProviderEvent> => {
      this.wholeEvents = events;
      return events.length > 0 ? { done: false, value: events[0]! } : { done: true, value: undefined };
    });
  }

  async whole(): Promise<ProviderEvent[]> {
    this.readingWhole = true;
    const servedBy = (await this.start()).value as ProviderEvent;
    if (this.wholeEvents !== null) {
      this.held = null;
      return [servedBy, ...this.wholeEvents];
    }
    // A provider that answers only as a stream: its events as FailoverStream reads them.
    const events = [servedBy];
    for (let next = await this.next(); !next.done; next = await this.next()) events.push(next.value);
    return events;
  }
}
