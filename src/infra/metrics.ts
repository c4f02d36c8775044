import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ChargedUsage, Metrics, RequestOutcome, VendorErrorKind } from '../domain/shared/telemetry';
import { FastCounter, FastHistogram, type CounterCell as Inc, type HistogramCell as Observe } from './metric-cells';
import { PrometheusRoutingMetrics } from './routing-metrics';

/**
 * The Metrics port on prom-client, one Registry per Tollgate instance (tests run several in one
 * process). Label values are bounded: endpoints are route patterns, models come from the
 * catalog, error codes and failure kinds from fixed sets; never a key id or a prompt.
 *
 * The request-path metrics are cells (metric-cells.ts) cached per label set in nested Maps,
 * so a request costs a few Map lookups and additions; the gauges and Node's process metrics
 * are prom-client's own.
 */

/** What is in flight in memory, read at scrape time. */
export interface InFlightSource {
  inFlight(): { holds: number; holdsMicro: bigint; leases: number; leasesMicro: bigint };
  settlementBacklog(): { depth: number; oldestAgeMs: number; limit: number; waited: number; refused: number };
}

/** Seconds Tollgate adds to a request: sub-millisecond up to the slow paths (key creation hashes). */
const GATEWAY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Vendor seconds: a short completion to a long reasoning stream. */
const VENDOR_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Error codes that are admission refusals (rate and concurrency) or money refusals. */
const RATE_LIMIT_CODES = new Set(['rate_limited', 'api_concurrency_limit']);
const SPEND_LIMIT_CODES = new Set(['api_insufficient_balance', 'api_key_spend_limit_reached', 'plan_allowance_exhausted']);

/** Per vendor and model: every child a vendor call or a charge touches. */
interface ModelChildren {
  vendorSeconds: Observe;
  firstEventSeconds: Observe;
  inputTokens: Inc;
  cachedInputTokens: Inc;
  cacheWrite5mInputTokens: Inc;
  cacheWrite1hInputTokens: Inc;
  outputTokens: Inc;
  reasoningTokens: Inc;
  spendMicro: Inc;
  overages: Inc;
  overageMicro: Inc;
  errors: Map<VendorErrorKind, Inc>;
}

/** The inner Map under `key`, made on first use (no closure: this runs on every request). */
function inner<K, V extends Map<unknown, unknown>>(map: Map<K, V>, key: K): V {
  let value = map.get(key);
  if (value === undefined) {
    value = new Map() as V;
    map.set(key, value);
  }
  return value;
}

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  /** Failover and deployment health (routing-metrics.ts). */
  readonly routing = new PrometheusRoutingMetrics(this.registry);
  private readonly requests: FastCounter;
  private readonly gatewaySeconds: FastHistogram;
  private readonly vendorSeconds: FastHistogram;
  private readonly firstEventSeconds: FastHistogram;
  private readonly tokens: FastCounter;
  private readonly spend: FastCounter;
  private readonly overages: FastCounter;
  private readonly overageMicro: FastCounter;
  private readonly vendorErrors: FastCounter;
  private readonly refusals: FastCounter;
  /** method → endpoint → status → model → vendor → child. */
  private readonly requestChildren = new Map<string, Map<string, Map<number, Map<string, Map<string, Inc>>>>>();
  /** method → endpoint → child. */
  private readonly gatewayChildren = new Map<string, Map<string, Observe>>();
  /** vendor → model → children. */
  private readonly modelChildren = new Map<string, Map<string, ModelChildren>>();
  private readonly refusalChildren = new Map<string, Inc>();

  constructor(inFlight: InFlightSource, feeds?: { count(): number }) {
    const registers = [this.registry];
    // Process CPU, memory, GC and the event-loop delay (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
    this.requests = new FastCounter(
      this.registry,
      'tollgate_http_requests_total',
      'HTTP requests answered, by route pattern, method, status, catalog model and vendor (empty when none).',
      ['endpoint', 'method', 'status', 'model', 'vendor'],
    );
    this.gatewaySeconds = new FastHistogram(
      this.registry,
      'tollgate_gateway_seconds',
      "Time Tollgate itself spent on a request: the whole request minus the vendor's time.",
      ['endpoint', 'method'],
      GATEWAY_BUCKETS,
    );
    this.vendorSeconds = new FastHistogram(
      this.registry,
      'tollgate_vendor_seconds',
      'Vendor call time, from the request sent to its last event or failure.',
      ['vendor', 'model'],
      VENDOR_BUCKETS,
    );
    this.firstEventSeconds = new FastHistogram(
      this.registry,
      'tollgate_vendor_first_event_seconds',
      "Time to the vendor's first event (first token of a stream, the whole answer otherwise).",
      ['vendor', 'model'],
      VENDOR_BUCKETS,
    );
    this.tokens = new FastCounter(
      this.registry,
      'tollgate_tokens_total',
      'Tokens of settled requests by type: input, output, and their parts cached_input, cache_write_5m and cache_write_1h (of input) and reasoning (of output).',
      ['vendor', 'model', 'type'],
    );
    this.spend = new FastCounter(
      this.registry,
      'tollgate_spend_micro_total',
      'Amount charged for settled requests, in micro-dollars (millionths of USD).',
      ['vendor', 'model'],
    );
    this.overages = new FastCounter(
      this.registry,
      'tollgate_overages_total',
      "Settlements whose vendor-reported usage cost more than the request's hold: charged up to the hold, the excess recorded as overage (a vendor anomaly).",
      ['vendor', 'model'],
    );
    this.overageMicro = new FastCounter(
      this.registry,
      'tollgate_overage_micro_total',
      'What vendor-reported usage cost beyond the holds (overage), in micro-dollars: recorded, charged to no one.',
      ['vendor', 'model'],
    );
    this.vendorErrors = new FastCounter(
      this.registry,
      'tollgate_vendor_errors_total',
      'Vendor calls that failed, by kind (http_4xx, http_429, http_5xx, timeout, connect, broken_stream, invalid_answer).',
      ['vendor', 'kind'],
    );
    this.refusals = new FastCounter(
      this.registry,
      'tollgate_refusals_total',
      'Requests refused by a limit: limit="rate" (rate_limited, api_concurrency_limit) or limit="spend" (balance, key spend limit, plan allowance); reason is the error code.',
      ['limit', 'reason'],
    );
    // Read from memory when scraped: nothing is counted per request for these.
    const inFlightGauge = (name: string, help: string, read: (now: ReturnType<InFlightSource['inFlight']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(inFlight.inFlight()));
        },
      });
    inFlightGauge(
      'tollgate_holds_in_flight',
      'Request holds open on this instance (reserved, not yet settled or released).',
      (now) => now.holds,
    );
    inFlightGauge('tollgate_holds_in_flight_micro', 'Micro-dollars held by the open request holds of this instance.', (now) =>
      Number(now.holdsMicro),
    );
    inFlightGauge(
      'tollgate_leases_in_flight',
      'Budget leases this instance holds in PostgreSQL (request holds are carved from them).',
      (now) => now.leases,
    );
    inFlightGauge('tollgate_leases_in_flight_micro', 'Micro-dollars the budget leases of this instance still reserve.', (now) =>
      Number(now.leasesMicro),
    );
    const backlogGauge = (name: string, help: string, read: (backlog: ReturnType<InFlightSource['settlementBacklog']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(inFlight.settlementBacklog()));
        },
      });
    backlogGauge(
      'tollgate_settlement_backlog',
      'Text settlements (and lease give-backs) accepted by this instance and not yet committed.',
      (b) => b.depth,
    );
    backlogGauge('tollgate_settlement_backlog_age_seconds', 'How long the oldest of them has waited (0 when none).', (b) =>
      b.depth === 0 ? 0 : b.oldestAgeMs / 1000,
    );
    backlogGauge(
      'tollgate_settlement_backlog_limit',
      'The backlog at which admission waits and answers wait for their charge (TOLLGATE_SETTLEMENT_BACKLOG).',
      (b) => b.limit,
    );
    // Counted by the writer; copied when scraped.
    const backlogCounter = (name: string, help: string, read: (backlog: ReturnType<InFlightSource['settlementBacklog']>) => number) => {
      let seen = 0;
      return new Counter({
        name,
        help,
        registers,
        collect() {
          const now = read(inFlight.settlementBacklog());
          this.inc(now - seen);
          seen = now;
        },
      });
    };
    backlogCounter(
      'tollgate_settlement_pushback_waits_total',
      'Text requests that waited for room in a full settlement backlog.',
      (b) => b.waited,
    );
    backlogCounter(
      'tollgate_settlement_pushback_refusals_total',
      'Of those, the ones answered 503 unavailable because no room came in time.',
      (b) => b.refused,
    );
    if (feeds) {
      new Gauge({
        name: 'tollgate_graphql_subscriptions',
        help: 'GraphQL subscriptions (graphql-ws) live on this instance.',
        registers,
        collect() {
          this.set(feeds.count());
        },
      });
    }
  }

  requestFinished(outcome: RequestOutcome): void {
    const { method, endpoint, status } = outcome;
    const model = outcome.model ?? '';
    const vendor = outcome.vendor ?? '';
    const byVendor = inner(inner(inner(inner(this.requestChildren, method), endpoint), status), model);
    let request = byVendor.get(vendor);
    if (request === undefined) byVendor.set(vendor, (request = this.requests.cell(endpoint, method, String(status), model, vendor)));
    request.inc();

    const byEndpoint = inner(this.gatewayChildren, method);
    let gateway = byEndpoint.get(endpoint);
    if (gateway === undefined) byEndpoint.set(endpoint, (gateway = this.gatewaySeconds.cell(endpoint, method)));
    gateway.observe(Math.max(0, outcome.seconds - (outcome.vendorSeconds ?? 0)));

    const code = outcome.error?.code;
    if (code !== undefined && (RATE_LIMIT_CODES.has(code) || SPEND_LIMIT_CODES.has(code))) {
      let refusal = this.refusalChildren.get(code);
      if (refusal === undefined)
        this.refusalChildren.set(code, (refusal = this.refusals.cell(RATE_LIMIT_CODES.has(code) ? 'rate' : 'spend', code)));
      refusal.inc();
    }
  }

  vendorCallFinished(
    vendor: string,
    model: string,
    firstEventSeconds: number | null,
    seconds: number,
    errorKind: VendorErrorKind | null,
  ): void {
    const children = this.childrenOf(vendor, model);
    children.vendorSeconds.observe(seconds);
    if (firstEventSeconds !== null) children.firstEventSeconds.observe(firstEventSeconds);
    // A client that leaves cancels the call: that is no failure of the vendor.
    if (errorKind !== null && errorKind !== 'cancelled') {
      let errors = children.errors.get(errorKind);
      if (errors === undefined) children.errors.set(errorKind, (errors = this.vendorErrors.cell(vendor, errorKind)));
      errors.inc();
    }
  }

  charged(vendor: string, model: string, usage: ChargedUsage, costMicro: bigint): void {
    const children = this.childrenOf(vendor, model);
    if (usage.inputTokens > 0) children.inputTokens.inc(usage.inputTokens);
    if (usage.cachedInputTokens > 0) children.cachedInputTokens.inc(usage.cachedInputTokens);
    if (usage.cacheWrite5mInputTokens) children.cacheWrite5mInputTokens.inc(usage.cacheWrite5mInputTokens);
    if (usage.cacheWrite1hInputTokens) children.cacheWrite1hInputTokens.inc(usage.cacheWrite1hInputTokens);
    if (usage.outputTokens > 0) children.outputTokens.inc(usage.outputTokens);
    if (usage.reasoningTokens) children.reasoningTokens.inc(usage.reasoningTokens);
    if (costMicro > 0n) children.spendMicro.inc(Number(costMicro));
  }

  overage(vendor: string, model: string, overageMicro: bigint): void {
    const children = this.childrenOf(vendor, model);
    children.overages.inc();
    children.overageMicro.inc(Number(overageMicro));
  }

  /** The Prometheus text exposition of everything above. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  private childrenOf(vendor: string, model: string): ModelChildren {
    const byModel = inner(this.modelChildren, vendor);
    let children = byModel.get(model);
    if (children === undefined) {
      children = {
        vendorSeconds: this.vendorSeconds.cell(vendor, model),
        firstEventSeconds: this.firstEventSeconds.cell(vendor, model),
        inputTokens: this.tokens.cell(vendor, model, 'input'),
        cachedInputTokens: this.tokens.cell(vendor, model, 'cached_input'),
        cacheWrite5mInputTokens: this.tokens.cell(vendor, model, 'cache_write_5m'),
        cacheWrite1hInputTokens: this.tokens.cell(vendor, model, 'cache_write_1h'),
        outputTokens: this.tokens.cell(vendor, model, 'output'),
        reasoningTokens: this.tokens.cell(vendor, model, 'reasoning'),
        spendMicro: this.spend.cell(vendor, model),
        overages: this.overages.cell(vendor, model),
        overageMicro: this.overageMicro.cell(vendor, model),
        errors: new Map(),
      };
      byModel.set(model, children);
    }
    return children;
  }
}
