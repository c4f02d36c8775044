/**
 * The sustained scenario of `npm run bench` (BENCH_SUSTAINED=only runs it alone; `npm run
 * bench:sustained` is that): one instance of the compiled build, started by bin/tollgate as
 * `npm start` starts it, under closed-loop load for several minutes without a pause, rounds of
 * JSON and streamed chat in turn, the accounts' keys in rotation. Short runs hide growth: a
 * settlement backlog that falls behind, memory that grows with it, latency that follows.
 *
 * Per minute: throughput, p50/p99, errors, the peak resident memory (VmHWM, reset at each
 * minute's start), the settlement backlog's largest depth and oldest age (scraped from /metrics
 * every half second), admissions that waited for room in it, the gateway's event-loop delay
 * p99 (prom-client's, scraped), and CPU per request: the gateway's, and PostgreSQL's
 * (the backends of the bench database). After the last request: how long the backlog took
 * to drain. Then a verdict against the goals (SUSTAINED_GOALS).
 */
import { mergeLoadResults, runLoad, type LoadResult } from './load';
import { Client } from 'pg';
import { backendsCpu, cpuMs, cpuSince, resetPeakRss, residentMb } from './proc';
import { ADMIN_TOKEN, provisionKey } from './provision';
import { gatewayEnv, startCompiledGateway, startLine, stopGateway } from './sharing';

export const SUSTAINED_GOALS = { peakRssMb: 250, p99Ms: 150, backlogAgeMs: 1_000 };

export interface SustainedOptions {
  databaseUrl: string;
  upstreamUrl: string;
  redisUrl: string;
  minutes: number;
  /** Seconds per round; the body alternates between rounds (JSON first). */
  roundSeconds: number;
  connections: number;
  accounts: number;
}

export interface SustainedMinute {
  minute: number;
  bodies: string;
  load: LoadResult;
  peakRssMb: number;
  backlogDepth: number;
  backlogAgeMs: number;
  backlogLimit: number;
  pushbackWaits: number;
  pushbackRefusals: number;
  loopDelayP99Ms: number;
  /** Gateway CPU and PostgreSQL CPU per request served, ms. */
  cpuPerRequest: number;
  dbPerRequest: number;
}

export interface SustainedResult {
  minutes: SustainedMinute[];
  /** From the last answer to an empty backlog, ms (null: not empty within a minute). */
  drainMs: number | null;
}

const SAMPLE_MS = 500;

/** The values of a few unlabelled metrics in a Prometheus exposition. */
function metricValues(text: string, names: string[]): Record<string, number> {
  const values: Record<string, number> = {};
  for (const name of names) {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    values[name] = match ? Number(match[1]) : NaN;
  }
  return values;
}

const BACKLOG_METRICS = [
  'tollgate_settlement_backlog',
  'tollgate_settlement_backlog_age_seconds',
  'tollgate_settlement_backlog_limit',
  'tollgate_settlement_pushback_waits_total',
  'tollgate_settlement_pushback_refusals_total',
  'nodejs_eventloop_lag_p99_seconds',
];

async function scrape(url: string): Promise<Record<string, number>> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return metricValues(await response.text(), BACKLOG_METRICS);
}

export async function runSustained(options: SustainedOptions, onMinute: (minute: SustainedMinute) => void): Promise<SustainedResult> {
  const gateway = await startCompiledGateway(gatewayEnv(options, null));
  const pid = gateway.child.pid!;
  const monitor = new Client({ connectionString: options.databaseUrl });
  await monitor.connect();
  try {
    const tokens = await Promise.all(Array.from({ length: options.accounts }, () => provisionKey(gateway.url)));
    const headerSets = tokens.map((token) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` }));
    const messages = [{ role: 'user', content: 'Say something about foxes.' }];
    const bodies = {
      json: JSON.stringify({ model: 'openai/gpt-4o-mini', messages }),
      stream: JSON.stringify({ model: 'openai/gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } }),
    };
    const minutes: SustainedMinute[] = [];
    const totalSeconds = options.minutes * 60;
    let round = 0;
    let elapsed = 0;
    let pushedBack = { waits: 0, refusals: 0 };
    while (elapsed < totalSeconds) {
      // One minute: its rounds (or parts of rounds), with the samplers around them.
      resetPeakRss(pid);
      const cpuBefore = cpuMs(pid);
      const dbBefore = await backendsCpu(monitor);
      const sampled = { depth: 0, ageMs: 0, limit: NaN, loopP99: 0, waits: pushedBack.waits, refusals: pushedBack.refusals };
      const sampler = setInterval(() => {
        void scrape(gateway.url).then(
          (m) => {
            sampled.depth = Math.max(sampled.depth, m.tollgate_settlement_backlog!);
            sampled.ageMs = Math.max(sampled.ageMs, m.tollgate_settlement_backlog_age_seconds! * 1000);
            sampled.limit = m.tollgate_settlement_backlog_limit!;
            sampled.loopP99 = Math.max(sampled.loopP99, m.nodejs_eventloop_lag_p99_seconds! * 1000);
            sampled.waits = m.tollgate_settlement_pushback_waits_total!;
            sampled.refusals = m.tollgate_settlement_pushback_refusals_total!;
          },
          () => undefined,
        );
      }, SAMPLE_MS);
      const parts: LoadResult[] = [];
      const names: string[] = [];
      const minuteEnd = Math.min(totalSeconds, elapsed + 60);
      try {
        while (elapsed < minuteEnd) {
          const roundEnd = (round + 1) * options.roundSeconds;
          const seconds = Math.min(roundEnd, minuteEnd) - elapsed;
          const body = round % 2 === 0 ? 'json' : 'stream';
          parts.push(
            await runLoad({
              url: `${gateway.url}/v1/chat/completions`,
              headers: headerSets[0]!,
              headerSets,
              body: bodies[body],
              connections: options.connections,
              durationMs: seconds * 1000,
              warmupMs: 0,
            }),
          );
          if (!names.includes(body)) names.push(body);
          elapsed += seconds;
          if (elapsed >= roundEnd) round++;
        }
      } finally {
        clearInterval(sampler);
      }
      const cpu = cpuMs(pid);
      const load = mergeLoadResults(parts);
      const served = Math.max(1, load.totalRequests);
      const minute: SustainedMinute = {
        minute: minutes.length + 1,
        bodies: names.join('+'),
        load: { ...load, requestsPerSecond: load.requests / (load.durationMs / 1000) },
        peakRssMb: residentMb(pid),
        backlogDepth: sampled.depth,
        backlogAgeMs: sampled.ageMs,
        backlogLimit: sampled.limit,
        pushbackWaits: sampled.waits - pushedBack.waits,
        pushbackRefusals: sampled.refusals - pushedBack.refusals,
        loopDelayP99Ms: sampled.loopP99,
        cpuPerRequest: (cpu.user + cpu.system - cpuBefore.user - cpuBefore.system) / served,
        dbPerRequest: cpuSince(dbBefore, await backendsCpu(monitor)) / served,
      };
      pushedBack = { waits: sampled.waits, refusals: sampled.refusals };
      minutes.push(minute);
      onMinute(minute);
    }
    const stopped = performance.now();
    let drainMs: number | null = null;
    while (performance.now() - stopped < 60_000) {
      const depth = (await scrape(gateway.url)).tollgate_settlement_backlog;
      if (Number.isNaN(depth)) break; // a build without the metric
      if (depth === 0) {
        drainMs = performance.now() - stopped;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return { minutes, drainMs };
  } finally {
    await monitor.end();
    await stopGateway(gateway);
  }
}

const f = (n: number, digits = 1) => n.toFixed(digits);

export function sustainedTextRow(m: SustainedMinute): string {
  return [
    `minute ${m.minute}`.padEnd(9),
    m.bodies.padEnd(11),
    `${f(m.load.requestsPerSecond, 0).padStart(5)} req/s`,
    `p50 ${f(m.load.p50, 2).padStart(7)} p99 ${f(m.load.p99, 2).padStart(7)} ms`,
    `peak RSS ${f(m.peakRssMb, 0)} MB`,
    `backlog max ${m.backlogDepth} (limit ${m.backlogLimit}), oldest ${f(m.backlogAgeMs, 0)} ms`,
    `pushback ${m.pushbackWaits} waits / ${m.pushbackRefusals} refused`,
    `loop p99 ${f(m.loopDelayP99Ms)} ms`,
    `cpu ${f(m.cpuPerRequest, 3)} + db ${f(m.dbPerRequest, 3)} ms/req`,
    `errors ${m.load.errors}${
      m.load.errors
        ? ` (${Object.entries(m.load.errorKinds)
            .map(([k, n]) => `${k} ×${n}`)
            .join(', ')})`
        : ''
    }`,
  ].join(' | ');
}

export function sustainedTable(result: SustainedResult, options: SustainedOptions): string {
  const header = [
    'minute',
    'bodies',
    'req/s',
    'p50 ms',
    'p99 ms',
    'peak RSS MB',
    'backlog max',
    'oldest ms',
    'pushback waits/refused',
    'loop p99 ms',
    'CPU ms/req (gateway + db)',
    'errors',
  ];
  const lines = [
    `Sustained: ${options.minutes} min at ${options.connections} connections, ${options.roundSeconds}-second rounds of JSON and streamed chat in turn, ${options.accounts} accounts' keys in rotation, the compiled build started by bin/tollgate: \`${startLine()}\``,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i < 2 ? '---|' : '--:|')).join('')}`,
  ];
  for (const m of result.minutes) {
    const cells = [
      m.minute,
      m.bodies,
      f(m.load.requestsPerSecond, 0),
      f(m.load.p50, 2),
      f(m.load.p99, 2),
      f(m.peakRssMb, 0),
      `${m.backlogDepth} / ${m.backlogLimit}`,
      f(m.backlogAgeMs, 0),
      `${m.pushbackWaits}/${m.pushbackRefusals}`,
      f(m.loopDelayP99Ms),
      `${f(m.cpuPerRequest, 3)} + ${f(m.dbPerRequest, 3)}`,
      m.load.errors,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The verdict against each goal, one line each. */
export function sustainedVerdict(result: SustainedResult): string[] {
  const { minutes } = result;
  const worst = (pick: (m: SustainedMinute) => number) => Math.max(...minutes.map(pick));
  const pass = (ok: boolean) => (ok ? 'met' : 'NOT MET');
  const rss = worst((m) => m.peakRssMb);
  const p99 = worst((m) => m.load.p99);
  const depth = worst((m) => m.backlogDepth);
  const age = worst((m) => m.backlogAgeMs);
  const pushback = minutes.reduce((n, m) => n + m.pushbackWaits, 0);
  // Kept up: bounded by the writer's own pace, not by admission waiting for it.
  const bounded = depth < minutes[0]!.backlogLimit && pushback === 0 && age <= SUSTAINED_GOALS.backlogAgeMs && result.drainMs !== null;
  return [
    `every minute's peak RSS ≤ ${SUSTAINED_GOALS.peakRssMb} MB: ${pass(rss <= SUSTAINED_GOALS.peakRssMb)} (worst ${f(rss, 0)} MB)`,
    `every minute's p99 ≤ ${SUSTAINED_GOALS.p99Ms} ms: ${pass(p99 <= SUSTAINED_GOALS.p99Ms)} (worst ${f(p99, 1)} ms)`,
    `settlement kept up, its backlog bounded (below its limit, no admission waited, oldest ≤ ${SUSTAINED_GOALS.backlogAgeMs} ms, drained after the load): ${pass(bounded)} (largest ${depth}, oldest ${f(age, 0)} ms, ${pushback} admissions waited, drained ${result.drainMs === null ? 'not within 60 s' : `${f(result.drainMs, 0)} ms`} after the last answer)`,
    `throughput ${bounded ? 'counts' : 'does NOT count (the backlog was not bounded)'}: ${f(minutes.reduce((n, m) => n + m.load.requests, 0) / minutes.reduce((n, m) => n + m.load.durationMs / 1000, 0), 0)} req/s over the run`,
  ];
}
