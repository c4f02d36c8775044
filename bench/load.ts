/**
 * HTTP load generator for `npm run bench`, on undici keep-alive connections, with latencies in
 * floating milliseconds (performance.now(), sub-microsecond resolution).
 *
 * Closed loop (no `ratePerSecond`): `connections` workers, each sending its next request as soon
 * as the previous response body has been read to the end. Measures capacity; latency at high
 * concurrency is mostly queueing.
 *
 * Open loop (`ratePerSecond` set): request i is due at t0 + i / rate, whatever happened to the
 * previous ones. A timer loop (and every completed response) sends all requests whose due time
 * has passed, while fewer than `connections` are in flight; the rest wait in line. Latency runs
 * from the DUE time, not the actual send, to the last byte of the body (corrected for coordinated
 * omission): time spent waiting for a free connection, and the timer's own lateness, count as
 * latency. `sendLagP50/P99` report how late sends were against their due time.
 *
 * The run lasts `warmupMs` (default 500) + `durationMs`; only requests started (closed loop) or
 * due (open loop) in the last `durationMs` are counted.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/**
 * The error envelope's code and message (spec: `{error: {code, message}}`), so a row says which
 * error it counted; numbers in the message become N, so a retry time does not split a kind.
 */
function errorText(body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
    return error?.code ? ` ${error.code}: ${(error.message ?? '').replace(/\d+(\.\d+)?/g, 'N')}` : '';
  } catch {
    return '';
  }
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  /** When set, request i uses headerSets[i % length] instead (several keys in rotation). */
  headerSets?: Record<string, string>[];
  body: string;
  /** Closed loop: concurrent workers. Open loop: maximum requests in flight. */
  connections: number;
  /** Measured window, after the warm-up. */
  durationMs: number;
  /** Not measured, before the window (default 500). */
  warmupMs?: number;
  /** Open loop when set: requests due at fixed intervals of 1 / rate. */
  ratePerSecond?: number;
  /** Open loop: how long after the schedule ends a backlog may still be sent (default durationMs); what is left is dropped. */
  drainMs?: number;
  /**
   * Open loop: when the next request is due within this many ms, poll with setImmediate instead
   * of a timer (default 0: timers only). Node timers have 1 ms granularity, so with 0 sends run
   * ~0.5 ms late on average (see sendLag*); spinning removes that but costs up to a whole core.
   */
  spinMs?: number;
}

export interface LoadResult {
  /** Responses in the window (errors included). */
  requests: number;
  /** Status other than 200, thrown errors and dropped requests, in the window. */
  errors: number;
  /** Errors in the window by kind: "HTTP 429", an error code such as "ECONNRESET", "dropped". */
  errorKinds: Record<string, number>;
  /** Open loop: requests due in the window but never sent (backlog left when the drain time ran out); counted in `errors`, not in `requests`. */
  dropped: number;
  /** Responses in the window per second. */
  requestsPerSecond: number;
  /** Latency of successful responses in the window, ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Requests actually sent during the window, per second (open loop: compare with the target rate). */
  achievedRate: number;
  /** Open loop: how late requests were sent against their due time, ms (0 in closed loop). */
  sendLagP50: number;
  sendLagP99: number;
  /** Responses over the whole run, warm-up included (for per-request CPU figures). */
  totalRequests: number;
  /** Measured window (ms), and the raw samples behind the percentiles (sorted), for mergeLoadResults. */
  durationMs: number;
  latencies: Float64Array;
  lags: Float64Array;
}

/** Growable store of float samples. */
class Samples {
  private data = new Float64Array(1 << 14);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
  /** Sorted copy of the samples. */
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/** Nearest-rank percentile of sorted samples (NaN when empty). */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const url = new URL(o.url);
  const path = url.pathname + url.search;
  const warmupMs = o.warmupMs ?? 500;
  const pool = new Pool(url.origin, {
    connections: o.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
    // A hung server fails requests instead of hanging the run.
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });

  const latencies = new Samples();
  const lags = new Samples();
  let requests = 0;
  let errors = 0;
  let sentInWindow = 0;
  let totalRequests = 0;
  let sent = 0;
  const errorKinds: Record<string, number> = {};

  const t0 = performance.now();
  const windowStart = t0 + warmupMs;
  const windowEnd = windowStart + o.durationMs;

  /** Sends one request and reads its body to the end; undefined when the status was 200, else what went wrong. */
  async function exchange(): Promise<string | undefined> {
    try {
      const headers = o.headerSets ? o.headerSets[sent++ % o.headerSets.length]! : o.headers;
      const response = await pool.request({ path, method: 'POST', headers, body: o.body });
      if (response.statusCode !== 200) return `HTTP ${response.statusCode}${errorText(await response.body.text())}`;
      // Read every chunk (not dump(), which may give up on a long body) so the end time is the last byte.
      for await (const _chunk of response.body) void _chunk;
      return undefined;
    } catch (error) {
      return (error as { code?: string }).code ?? (error as Error).name ?? 'error';
    }
  }

  /** Records one finished exchange whose latency clock started at `start` (start or due time). */
  function record(start: number, failure: string | undefined, end: number): void {
    totalRequests++;
    if (start < windowStart || start >= windowEnd) return;
    requests++;
    if (failure === undefined) latencies.push(end - start);
    else {
      errors++;
      errorKinds[failure] = (errorKinds[failure] ?? 0) + 1;
    }
  }

  let dropped = 0;
  try {
    if (o.ratePerSecond === undefined) {
      const worker = async (): Promise<void> => {
        while (performance.now() < windowEnd) {
          const start = performance.now();
          if (start >= windowStart) sentInWindow++;
          const failure = await exchange();
          record(start, failure, performance.now());
          // A refused connection fails at once: do not spin on it.
          if (failure !== undefined) await new Promise((resolve) => setTimeout(resolve, 1));
        }
      };
      await Promise.all(Array.from({ length: o.connections }, worker));
    } else {
      dropped = await openLoop(o.ratePerSecond);
    }
  } finally {
    await pool.close();
  }

  function openLoop(rate: number): Promise<number> {
    const interval = 1000 / rate;
    const total = Math.ceil((warmupMs + o.durationMs) / interval);
    const drainUntil = windowEnd + (o.drainMs ?? o.durationMs);
    let next = 0; // index of the next request to send
    let inFlight = 0;
    let timer: NodeJS.Timeout | undefined;
    let armed = false;
    const spinMs = o.spinMs ?? 0;
    let stopped = false;

    return new Promise<number>((resolve) => {
      let finished = false;
      const finishIfDone = (): void => {
        if (!finished && (next >= total || stopped) && inFlight === 0) {
          finished = true;
          if (timer) clearTimeout(timer);
          timer = undefined;
          // Never sent (the backlog left when the drain time ran out): those due in the window.
          const left = total - Math.max(next, Math.ceil(warmupMs / interval));
          errors += Math.max(0, left);
          if (left > 0) errorKinds.dropped = left;
          resolve(Math.max(0, left));
        }
      };

      const send = (due: number): void => {
        inFlight++;
        const sentAt = performance.now();
        if (due >= windowStart && due < windowEnd) lags.push(sentAt - due);
        if (sentAt >= windowStart && sentAt < windowEnd) sentInWindow++;
        void exchange().then((failure) => {
          record(due, failure, performance.now());
          inFlight--;
          dispatch();
        });
      };

      /**
       * Sends every request that is due while a connection is free (catching up after a late
       * timer), then arms the timer for the next due time. With all connections busy no timer is
       * armed: the next completed response calls this again.
       */
      const dispatch = (): void => {
        const now = performance.now();
        if (!stopped && next < total && now > drainUntil) stopped = true;
        if (!stopped) {
          while (next < total && inFlight < o.connections) {
            const due = t0 + next * interval;
            if (due > now) break;
            next++;
            send(due);
          }
        }
        if (stopped || next >= total) return finishIfDone();
        if (!armed && inFlight < o.connections) {
          armed = true;
          const wait = t0 + next * interval - performance.now();
          if (wait <= spinMs) setImmediate(fire);
          else timer = setTimeout(fire, Math.max(1, Math.floor(wait - spinMs)));
        }
      };
      const fire = (): void => {
        armed = false;
        timer = undefined;
        dispatch();
      };

      dispatch();
    });
  }

  const sorted = latencies.sorted();
  const sortedLags = lags.sorted();
  const seconds = o.durationMs / 1000;
  return {
    requests,
    errors,
    errorKinds,
    dropped,
    requestsPerSecond: requests / seconds,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    achievedRate: sentInWindow / seconds,
    sendLagP50: o.ratePerSecond === undefined ? 0 : percentile(sortedLags, 0.5),
    sendLagP99: o.ratePerSecond === undefined ? 0 : percentile(sortedLags, 0.99),
    totalRequests,
    durationMs: o.durationMs,
    latencies: sorted,
    lags: sortedLags,
  };
}

/** One result from several runs of the same load (slices interleaved with other runs): counts add up, percentiles come from all samples. */
export function mergeLoadResults(parts: LoadResult[]): LoadResult {
  const concat = (pick: (r: LoadResult) => Float64Array) => {
    const all = new Float64Array(parts.reduce((n, r) => n + pick(r).length, 0));
    let at = 0;
    for (const r of parts) {
      all.set(pick(r), at);
      at += pick(r).length;
    }
    return all.sort();
  };
  const sum = (pick: (r: LoadResult) => number) => parts.reduce((n, r) => n + pick(r), 0);
  const latencies = concat((r) => r.latencies);
  const lags = concat((r) => r.lags);
  const seconds = sum((r) => r.durationMs) / 1000;
  const errorKinds: Record<string, number> = {};
  for (const r of parts) for (const [kind, n] of Object.entries(r.errorKinds)) errorKinds[kind] = (errorKinds[kind] ?? 0) + n;
  const open = parts.some((r) => r.lags.length > 0);
  return {
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    errorKinds,
    dropped: sum((r) => r.dropped),
    requestsPerSecond: sum((r) => r.requests) / seconds,
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
    p99: percentile(latencies, 0.99),
    max: latencies.length ? latencies[latencies.length - 1]! : NaN,
    achievedRate: sum((r) => r.achievedRate * r.durationMs) / 1000 / seconds,
    sendLagP50: open ? percentile(lags, 0.5) : 0,
    sendLagP99: open ? percentile(lags, 0.99) : 0,
    totalRequests: sum((r) => r.totalRequests),
    durationMs: sum((r) => r.durationMs),
    latencies,
    lags,
  };
}
