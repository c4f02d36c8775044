import { Gauge, type Registry } from 'prom-client';
import type { AttemptOutcome, RoutingMetrics } from '../domain/routing/failover';
import type { BreakerState } from '../domain/routing/health';
import { FastCounter, type CounterCell } from './metric-cells';

/** One deployment's state when scraped (domain/routing/listing.ts). */
export interface DeploymentStateSource {
  deploymentStates(): Iterable<{ model: string; deployment: string; state: BreakerState }>;
}

const STATE_VALUE: Readonly<Record<BreakerState, number>> = { closed: 0, 'half-open': 1, cooled: 2 };

/**
 * Routing's metrics (docs/routing.md, Visible): attempts by outcome, failovers and cooldowns per
 * deployment, and each deployment's breaker state when scraped. Labels are the catalog's model
 * ids and deployment names, so their number is bounded by the catalog.
 */
export class PrometheusRoutingMetrics implements RoutingMetrics {
  private readonly attempts: FastCounter;
  private readonly failovers: FastCounter;
  private readonly cooldowns: FastCounter;
  private readonly cells = new Map<string, CounterCell>();

  constructor(private readonly registry: Registry) {
    this.attempts = new FastCounter(
      registry,
      'tollgate_routing_attempts_total',
      'Attempts on a deployment of a routed model: outcome served, failed (the next deployment is tried), or refused (cooled down, not called).',
      ['model', 'deployment', 'outcome'],
    );
    this.failovers = new FastCounter(
      registry,
      'tollgate_routing_failovers_total',
      'Requests that moved on from this deployment to another after it failed before its first byte.',
      ['model', 'deployment'],
    );
    this.cooldowns = new FastCounter(
      registry,
      'tollgate_routing_cooldowns_total',
      'Times this deployment was cooled down by its circuit breaker (failures in a row, a failed probe, or a 429 with Retry-After).',
      ['model', 'deployment'],
    );
  }

  attempt(model: string, deployment: string, outcome: AttemptOutcome): void {
    this.cell(this.attempts, model, deployment, outcome).inc();
  }

  failover(model: string, deployment: string): void {
    this.cell(this.failovers, model, deployment).inc();
  }

  cooled(model: string, deployment: string): void {
    this.cell(this.cooldowns, model, deployment).inc();
  }

  /** The breaker state gauge (0 closed, 1 half-open, 2 cooled), read from `source` when scraped. */
  watch(source: DeploymentStateSource): void {
    new Gauge({
      name: 'tollgate_routing_deployment_state',
      help: 'Circuit breaker state of each deployment of a routed model: 0 closed (takes traffic), 1 half-open (a probe may go), 2 cooled (no traffic).',
      labelNames: ['model', 'deployment'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { model, deployment, state } of source.deploymentStates()) this.set({ model, deployment }, STATE_VALUE[state]);
      },
    });
  }

  private cell(counter: FastCounter, ...labels: string[]): CounterCell {
    const key = `${counter.name}\u0000${labels.join('\u0000')}`;
    let cell = this.cells.get(key);
    if (cell === undefined) this.cells.set(key, (cell = counter.cell(...labels)));
    return cell;
  }
}
