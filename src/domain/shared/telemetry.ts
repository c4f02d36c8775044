/**
 * The telemetry ports: what the domain and the planes report about their work, and how a trace
 * span is carried. Adapters live in src/infra (metrics.ts: Prometheus, tracing.ts:
 * OpenTelemetry); when one is off its no-op stands in, so callers never check.
 *
 * Every method is called on the request path: implementations must not allocate per call
 * beyond looking up cached label children, and callers pass objects they already hold.
 */

/** Why a vendor call failed, a small fixed set (a metric label). */
export type VendorErrorKind =
  'http_4xx' | 'http_429' | 'http_5xx' | 'timeout' | 'connect' | 'broken_stream' | 'invalid_answer' | 'cancelled';

/** One finished HTTP request, as the access log line sees it (never a key id or a prompt). */
export interface RequestOutcome {
  /** The route pattern (`/v1/keys/{id}`), never a raw path with ids; `unmatched` otherwise. */
  endpoint: string;
  method: string;
  status: number;
  /** The catalog's model id, once resolved. */
  model?: string;
  vendor?: string;
  /** Whole request, seconds. */
  seconds: number;
  /** The deployment that served (a model with several, domain/routing) and the attempts it took. */
  deployment?: string;
  attempts?: number;
  /** Time spent waiting on the vendor (seconds), when a vendor was called. */
  vendorSeconds?: number;
  /** The error answered (envelope or stream error event). */
  error?: { code: string; message: string };
}

/** Tokens of a settled request (cache reads and writes are parts of input, reasoning part of output). */
export interface ChargedUsage {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWrite5mInputTokens?: number;
  cacheWrite1hInputTokens?: number;
  outputTokens: number;
  reasoningTokens?: number;
}

/** Positional arguments below: these run on every request, and an argument object would be one more allocation each. */
export interface Metrics {
  requestFinished(outcome: RequestOutcome): void;
  /**
   * One call to a vendor, from the request sent to its last event or failure: seconds to the
   * first event (null when none came) and in all; `errorKind` null when it succeeded.
   */
  vendorCallFinished(
    vendor: string,
    model: string,
    firstEventSeconds: number | null,
    seconds: number,
    errorKind: VendorErrorKind | null,
  ): void;
  charged(vendor: string, model: string, usage: ChargedUsage, costMicro: bigint): void;
  /** A vendor reported usage costing more than the request's hold: `overageMicro` was not charged (docs/billing.md, Overage). */
  overage(vendor: string, model: string, overageMicro: bigint): void;
}

export const noMetrics: Metrics = {
  requestFinished: () => undefined,
  vendorCallFinished: () => undefined,
  charged: () => undefined,
  overage: () => undefined,
};

export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** One span of a trace: the request's, or a vendor call's under it. */
export interface TraceSpan {
  /** Renames the span (a request's route is known only once it is answered). */
  setName(name: string): void;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed with the error answered. */
  fail(code: string, message: string): void;
  end(): void;
  /** A child span (a vendor call, kind client) under this one. */
  child(name: string, attributes: SpanAttributes): TraceSpan;
}

/**
 * Starts request spans; null when tracing is off, so a request path checks one constant
 * (`tracer !== null`) and makes no tracer call at all.
 */
export interface Tracer {
  startRequest(name: string, attributes: SpanAttributes): TraceSpan;
  /** Exports what is buffered and stops. */
  close(): Promise<void>;
}
