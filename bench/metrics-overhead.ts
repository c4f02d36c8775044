/**
 * `node -r ./test/support/swc-register.js bench/metrics-overhead.ts`: what observing one text
 * request costs on the gateway's request path (requestFinished + vendorCallFinished + charged),
 * in nanoseconds per request, for: no metrics (the no-op), the
 * metrics of src/infra/metrics.ts (cells cached per label set), and, for reference, the same
 * observations through prom-client's own Counter/Histogram children. Then tracing: a request's
 * server span and vendor-call child with their attributes, exported in batches to a local sink
 * (export included, in the same process). In-process and CPU-bound,
 * so it is far less disturbed by other load on the machine than `npm run bench`. Reported,
 * never asserted. BENCH_ITERATIONS (default 1,000,000) per round, 5 rounds, the best kept.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Histogram, Registry } from 'prom-client';
import { PrometheusMetrics } from '../src/infra/metrics';
import { startTracing } from '../src/infra/tracing';
import { noMetrics, type Metrics, type RequestOutcome, type Tracer } from '../src/domain/shared/telemetry';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 1_000_000);
const ROUNDS = 5;

const outcome: RequestOutcome = {
  endpoint: '/v1/chat/completions',
  method: 'POST',
  status: 200,
  seconds: 0.0123,
  model: 'openai/gpt-4o-mini',
  vendor: 'openai',
  vendorSeconds: 0.0101,
};
const usage = { inputTokens: 120, cachedInputTokens: 16, outputTokens: 40, reasoningTokens: 0 };

/** prom-client's children, cached per label set the same way: what the cells replaced. */
function promClientMetrics(): Metrics {
  const registers = [new Registry()];
  const requests = new Counter({ name: 'r', help: 'r', labelNames: ['endpoint', 'method', 'status', 'model', 'vendor'], registers }).labels(
    '/v1/chat/completions',
    'POST',
    '200',
    'openai/gpt-4o-mini',
    'openai',
  );
  const gateway = new Histogram({ name: 'g', help: 'g', labelNames: ['endpoint', 'method'], registers }).labels(
    '/v1/chat/completions',
    'POST',
  );
  const histogram = new Histogram({ name: 'v', help: 'v', labelNames: ['vendor', 'model'], registers });
  const vendor = histogram.labels('openai', 'openai/gpt-4o-mini');
  const first = new Histogram({ name: 'f', help: 'f', labelNames: ['vendor', 'model'], registers }).labels('openai', 'openai/gpt-4o-mini');
  const tokens = new Counter({ name: 't', help: 't', labelNames: ['vendor', 'model', 'type'], registers });
  const input = tokens.labels('openai', 'openai/gpt-4o-mini', 'input');
  const cached = tokens.labels('openai', 'openai/gpt-4o-mini', 'cached_input');
  const output = tokens.labels('openai', 'openai/gpt-4o-mini', 'output');
  const spend = new Counter({ name: 's', help: 's', labelNames: ['vendor', 'model'], registers }).labels('openai', 'openai/gpt-4o-mini');
  return {
    requestFinished: (o) => {
      requests.inc();
      gateway.observe(o.seconds - (o.vendorSeconds ?? 0));
    },
    vendorCallFinished: (_v, _m, firstSeconds, seconds) => {
      vendor.observe(seconds);
      if (firstSeconds !== null) first.observe(firstSeconds);
    },
    charged: (_v, _m, u, cost) => {
      input.inc(u.inputTokens);
      cached.inc(u.cachedInputTokens);
      output.inc(u.outputTokens);
      spend.inc(Number(cost));
    },
    overage: () => undefined, // not on the request path: a vendor anomaly
  };
}

function observeRequests(metrics: Metrics, n: number): void {
  for (let i = 0; i < n; i++) {
    metrics.requestFinished(outcome);
    metrics.vendorCallFinished('openai', 'openai/gpt-4o-mini', 0.004, 0.0101, null);
    metrics.charged('openai', 'openai/gpt-4o-mini', usage, 123n);
  }
}

function measure(name: string, metrics: Metrics): void {
  observeRequests(metrics, 100_000); // warm-up: optimised code, every label set resolved
  let bestNs = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    observeRequests(metrics, ITERATIONS);
    bestNs = Math.min(bestNs, Number(process.hrtime.bigint() - started) / ITERATIONS);
  }
  console.log(`${name.padEnd(28)} ${bestNs.toFixed(0).padStart(6)} ns/request`);
}

/** What a traced text request does with spans (http.ts and the pipeline), `n` times, yielding so the exporter can run. */
async function traceRequests(tracer: Tracer, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const request = tracer.startRequest('POST /v1/chat/completions', {
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'tollgate.request_id': `req_${i}`,
    });
    const call = request.child('chat openai/gpt-4o-mini', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'openai/gpt-4o-mini',
      'gen_ai.request.max_tokens': 4096,
    });
    call.setAttributes({ 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 40, 'gen_ai.response.finish_reasons': ['stop'] });
    call.end();
    request.setName('POST /v1/chat/completions');
    request.setAttributes({
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'tollgate.model': 'openai/gpt-4o-mini',
    });
    request.end();
    if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
  }
}

async function measureTracing(): Promise<void> {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const tracer = await startTracing({
    tracesUrl: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`,
    serviceName: 'bench',
    serviceVersion: '0',
  });
  const n = Math.min(ITERATIONS, 100_000);
  await traceRequests(tracer, 10_000);
  let bestNs = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    await traceRequests(tracer, n);
    bestNs = Math.min(bestNs, Number(process.hrtime.bigint() - started) / n);
  }
  console.log(
    `${'tracing on (2 spans)'.padEnd(28)} ${bestNs.toFixed(0).padStart(6)} ns/request (export included; spans beyond the batch queue are dropped)`,
  );
  await tracer.close();
  sink.close();
}

console.log(
  `metrics overhead per text request, ${ITERATIONS.toLocaleString('en')} requests x ${ROUNDS} rounds (best), Node ${process.version}`,
);
measure('off (no-op)', noMetrics);
measure(
  'tollgate cells',
  new PrometheusMetrics({
    inFlight: () => ({ holds: 0, holdsMicro: 0n, leases: 0, leasesMicro: 0n }),
    settlementBacklog: () => ({ depth: 0, oldestAgeMs: 0, limit: 1, waited: 0, refused: 0 }),
  }),
);
measure('prom-client children', promClientMetrics());
void measureTracing();
