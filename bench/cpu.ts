/**
 * CPU per request side by side, in one run of `npm run bench` (BENCH_CPU=only: alone; 0: not):
 *   - direct: the load generator against the fake upstream (what every row is measured against);
 *   - the Node floor (bench/node-floor.mjs): the least per-request work any Node gateway does
 *     (node:http, JSON.parse the body, stringify a vendor request, undici, parse the answer,
 *     rewrite `model`, stringify it back; for streams, split SSE lines and re-encode each);
 *   - Tollgate as `npm start` starts it (bin/tollgate: its node flags and glibc settings);
 *   - Tollgate as plain `node dist/src/main.js start` (V8's and glibc's defaults);
 * at each BENCH_CPU_CONNECTIONS level (default 16 and 64), closed loop, JSON and streamed chat,
 * the accounts' keys in rotation. Slices of the four alternate, so all see the same machine.
 *
 * Before a body's first measurement each side serves that body unmeasured for WARM_BODY_MS at the
 * first connection level: the rows are steady state. Without it the first row of a body counted
 * Tollgate's JIT compiling that path (V8's compiler threads are the process's CPU; the floor's
 * few functions compile in a fraction of a second): 0.535 CPU ms a JSON request at 16
 * connections against 0.30 warm (performance-log.md, 2026-11-26, morning).
 *
 * CPU per request: the process's user + system time over its slices divided by the requests it
 * served (the slices' short warm-ups included), from /proc; for Tollgate plus its PostgreSQL: the backends
 * connected to the bench database only (pg_stat_activity, then /proc per backend), so other
 * databases' work on a shared server does not count (each Tollgate side has a database of its
 * own, migrated by itself). Peak RSS: VmHWM, reset before each slice.
 * Throughput of a Tollgate row counts only if its settlement backlog stayed bounded (no
 * admission waited for room in it: tollgate_settlement_pushback_waits_total, scraped).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { mergeLoadResults, runLoad, type LoadResult } from './load';
import { backendsCpu, cpuMs, cpuSince, resetPeakRss, residentMb } from './proc';
import { ADMIN_TOKEN, benchDatabase, provisionKey } from './provision';
import { gatewayEnv, ROOT, startCompiledGateway, stopGateway, type Gateway } from './sharing';

/** Issue #29's goals, checked by cpuVerdict. */
export const CPU_GOALS = { timesFloor: 3, flagsCostPercent: 5, peakRssMb: 150 };

export interface CpuOptions {
  databaseUrl: string;
  upstreamUrl: string;
  redisUrl: string;
  /** Measured seconds per side and measurement, over all slices. */
  seconds: number;
  connections: number[];
  bodies: ('json' | 'stream')[];
  accounts: number;
  /** A checkout (with its own bin/tollgate and dist/) measured beside this one, started the same way. */
  compareDir?: string;
  /** Only these sides (default: all but compare, which is added when compareDir is set). */
  sides?: SideName[];
  /** Alternating slices per side and measurement (default 4); more, shorter slices spread a busy machine's swings over both sides of an A/B. */
  slices?: number;
  /**
   * Open loop at this many requests a second per side instead of a closed loop: both sides of an
   * A/B then serve the same rate, so a starved side does not serve fewer requests per turn of its
   * event loop (which alone raises its CPU per request) than the other.
   */
  ratePerSecond?: number;
}

/** 'tollgate, compare' is another build's bin/tollgate (BENCH_CPU_COMPARE), for A/B runs of a change. */
type SideName = 'direct' | 'node floor' | 'tollgate, npm start' | 'tollgate, plain node' | 'tollgate, compare';

export interface CpuRow {
  body: 'json' | 'stream';
  connections: number;
  side: SideName;
  load: LoadResult;
  /** The process's CPU per request served, ms (NaN for direct: the upstream's is not counted). */
  cpuPerRequest: number;
  /** The kernel's part of it (system calls: sockets). */
  systemPerRequest: number;
  /** Its PostgreSQL backends' CPU per request, ms (0 for the floor). */
  dbPerRequest: number;
  peakRssMb: number;
  /** Admissions that waited for room in the settlement backlog during the slices (Tollgate only). */
  pushbackWaits: number;
  /**
   * CPU + db ms per request of each slice, in order (NaN for direct): slice i of every side ran
   * within seconds of the others' slice i, so their ratio slice by slice is the least touched
   * by the host's drift over the run.
   */
  sliceTotals: number[];
}

const SLICES = 4;
const WARMUP_MS = 300;
/** Unmeasured load per side before a body's first measurement (BENCH_CPU_WARM_SECONDS; 0: none). */
const WARM_BODY_MS = Number(process.env.BENCH_CPU_WARM_SECONDS ?? 5) * 1000;

interface Side {
  name: SideName;
  url: string;
  pid: number | null;
  gateway: Gateway | null;
  tokens: string[];
  /** A client of the side's database, whose backends' CPU is the side's (null: no database). */
  monitor: Client | null;
}

async function pushbackWaits(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const match = /^tollgate_settlement_pushback_waits_total (\S+)$/m.exec(text);
  return match ? Number(match[1]) : 0;
}

export function startNodeFloor(upstreamOrigin: string, execArgv: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const undiciDir = dirname(require.resolve('undici/package.json'));
  const child = fork(join(__dirname, 'node-floor.mjs'), ['0', undiciDir], {
    execArgv,
    env: { ...process.env, FLOOR_UPSTREAM: upstreamOrigin, FLOOR_API_KEY: 'sk-bench' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }));
    child.once('exit', (code) => reject(new Error(`node-floor.mjs exited with ${code}`)));
  });
}

export async function runCpuComparison(options: CpuOptions, onRow: (row: CpuRow) => void): Promise<CpuRow[]> {
  const wanted = new Set<SideName>(
    options.sides ?? [
      'direct',
      'node floor',
      'tollgate, npm start',
      'tollgate, plain node',
      ...(options.compareDir ? (['tollgate, compare'] as const) : []),
    ],
  );
  const env = gatewayEnv(options, null);
  // Every Tollgate side has a fresh database of its own, so a side's PostgreSQL CPU is its own: an
  // idle side's lease renewals, job polls and last batch do not land in another side's slices.
  // Fresh for npm start's side too, so that the sides differ in their node flags alone: it used to
  // share the bench database, which in a whole `npm run bench` holds the latency rows' records. The
  // compared build's migrations (and so its SQL functions) may also differ.
  const withFlagsDb = await benchDatabase(options.databaseUrl);
  const withFlags = await startCompiledGateway({ ...env, DATABASE_URL: withFlagsDb.url });
  const plainEnv = { ...env };
  delete plainEnv.GLIBC_TUNABLES;
  const plainDb = wanted.has('tollgate, plain node') ? await benchDatabase(options.databaseUrl) : null;
  const plain = plainDb
    ? await startCompiledGateway({ ...plainEnv, DATABASE_URL: plainDb.url }, [
        process.execPath,
        join(ROOT, 'dist', 'src', 'main.js'),
        'start',
      ])
    : null;
  const compareDb = options.compareDir && wanted.has('tollgate, compare') ? await benchDatabase(options.databaseUrl) : null;
  const compare =
    options.compareDir && compareDb
      ? await startCompiledGateway({ ...env, DATABASE_URL: compareDb.url }, [join(options.compareDir, 'bin', 'tollgate'), 'start'])
      : null;
  const floor = wanted.has('node floor') ? await startNodeFloor(new URL(options.upstreamUrl).origin) : null;
  const monitor = new Client({ connectionString: withFlagsDb.url });
  await monitor.connect();
  const compareMonitor = compareDb ? new Client({ connectionString: compareDb.url }) : null;
  await compareMonitor?.connect();
  const plainMonitor = plainDb ? new Client({ connectionString: plainDb.url }) : null;
  await plainMonitor?.connect();
  try {
    const provision = (gateway: Gateway) => Promise.all(Array.from({ length: options.accounts }, () => provisionKey(gateway.url)));
    const tokens = await provision(withFlags);
    const gatewaySide = (name: SideName, gateway: Gateway, sideTokens = tokens, sideMonitor = monitor): Side => ({
      name,
      url: `${gateway.url}/v1/chat/completions`,
      pid: gateway.child.pid!,
      gateway,
      tokens: sideTokens,
      monitor: sideMonitor,
    });
    const sides: Side[] = (<Side[]>[
      { name: 'direct', url: `${options.upstreamUrl}/chat/completions`, pid: null, gateway: null, tokens: ['sk-bench'], monitor: null },
      ...(floor
        ? [
            {
              name: 'node floor' as const,
              url: `http://127.0.0.1:${floor.port}/v1/chat/completions`,
              pid: floor.child.pid!,
              gateway: null,
              tokens: ['sk-bench'],
              monitor: null,
            },
          ]
        : []),
      gatewaySide('tollgate, npm start', withFlags),
      ...(plain ? [gatewaySide('tollgate, plain node', plain, await provision(plain), plainMonitor!)] : []),
      ...(compare ? [gatewaySide('tollgate, compare', compare, await provision(compare), compareMonitor!)] : []),
    ]).filter((side) => wanted.has(side.name));
    const messages = [{ role: 'user', content: 'Say something about foxes.' }];
    const rows: CpuRow[] = [];
    for (const body of options.bodies) {
      const extra = body === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {};
      const request = (side: Side) => JSON.stringify({ model: side.gateway ? 'openai/gpt-4o-mini' : 'gpt-4o-mini', messages, ...extra });
      const headersOf = (side: Side) =>
        side.tokens.map((token) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` }));
      if (WARM_BODY_MS > 0)
        for (const side of sides)
          await runLoad({
            url: side.url,
            headers: headersOf(side)[0]!,
            headerSets: headersOf(side),
            body: request(side),
            connections: options.connections[0]!,
            durationMs: WARM_BODY_MS,
            warmupMs: 0,
          });
      for (const connections of options.connections) {
        const acc = sides.map(() => ({ parts: [] as LoadResult[], cpu: 0, system: 0, db: 0, rss: 0, waits: 0, slices: [] as number[] }));
        const slices = options.slices ?? SLICES;
        for (let slice = 0; slice < slices; slice++) {
          // Each slice starts one side later: a side's slice is otherwise always preceded by the
          // same one, whose leftovers (PostgreSQL's background writes, the floor's warm caches)
          // would weigh on it alone and bias the comparison.
          for (let k = 0; k < sides.length; k++) {
            const i = (k + slice) % sides.length;
            const side = sides[i]!;
            const headerSets = headersOf(side);
            if (side.pid) resetPeakRss(side.pid);
            const waitsBefore = side.gateway ? await pushbackWaits(side.gateway.url) : 0;
            const cpuBefore = side.pid ? cpuMs(side.pid) : null;
            const dbBefore = side.monitor ? await backendsCpu(side.monitor) : null;
            const part = await runLoad({
              url: side.url,
              headers: headerSets[0]!,
              headerSets,
              body: request(side),
              connections,
              durationMs: (options.seconds * 1000) / slices,
              warmupMs: WARMUP_MS,
              ...(options.ratePerSecond ? { ratePerSecond: options.ratePerSecond } : {}),
            });
            acc[i]!.parts.push(part);
            let sliceMs = NaN;
            if (side.pid && cpuBefore) {
              const after = cpuMs(side.pid);
              sliceMs = after.user + after.system - cpuBefore.user - cpuBefore.system;
              acc[i]!.cpu += sliceMs;
              acc[i]!.system += after.system - cpuBefore.system;
              acc[i]!.rss = Math.max(acc[i]!.rss, residentMb(side.pid));
            }
            if (dbBefore && side.monitor) {
              const db = cpuSince(dbBefore, await backendsCpu(side.monitor));
              acc[i]!.db += db;
              sliceMs += db;
            }
            acc[i]!.slices.push(sliceMs / Math.max(1, part.totalRequests));
            if (side.gateway) acc[i]!.waits += (await pushbackWaits(side.gateway.url)) - waitsBefore;
          }
        }
        for (const [i, side] of sides.entries()) {
          const merged = mergeLoadResults(acc[i]!.parts);
          const load = { ...merged, requestsPerSecond: merged.requests / (merged.durationMs / 1000) };
          const served = Math.max(1, load.totalRequests);
          const row: CpuRow = {
            body,
            connections,
            side: side.name,
            load,
            cpuPerRequest: side.pid ? acc[i]!.cpu / served : NaN,
            systemPerRequest: side.pid ? acc[i]!.system / served : NaN,
            dbPerRequest: acc[i]!.db / served,
            peakRssMb: side.pid ? acc[i]!.rss : NaN,
            pushbackWaits: acc[i]!.waits,
            sliceTotals: acc[i]!.slices,
          };
          rows.push(row);
          onRow(row);
        }
      }
    }
    return rows;
  } finally {
    await monitor.end();
    await compareMonitor?.end();
    await plainMonitor?.end();
    floor?.child.disconnect();
    await Promise.all([withFlags, plain, compare].map((gateway) => (gateway ? stopGateway(gateway) : undefined)));
    await Promise.all([withFlagsDb.drop(), compareDb?.drop(), plainDb?.drop()]);
  }
}

const f = (n: number, digits = 2) => (Number.isNaN(n) ? '' : n.toFixed(digits));
const total = (row: CpuRow) => row.cpuPerRequest + row.dbPerRequest;
const floorOf = (rows: CpuRow[], row: CpuRow) =>
  rows.find((r) => r.body === row.body && r.connections === row.connections && r.side === 'node floor');

export function cpuTextRow(row: CpuRow): string {
  const counted = row.pushbackWaits === 0;
  return [
    row.body.padEnd(6),
    `c=${row.connections}`.padEnd(5),
    row.side.padEnd(20),
    `${f(row.load.requestsPerSecond, 0).padStart(6)} req/s${counted ? '' : ' (backlog NOT bounded)'}`,
    `p50 ${f(row.load.p50).padStart(7)} p99 ${f(row.load.p99).padStart(7)} ms`,
    row.side === 'direct'
      ? ''
      : `cpu ${f(row.cpuPerRequest, 3)} (system ${f(row.systemPerRequest, 3)}) + db ${f(row.dbPerRequest, 3)} ms/req`,
    row.side === 'direct' ? '' : `peak RSS ${f(row.peakRssMb, 0)} MB`,
    `errors ${row.load.errors}${
      row.load.errors
        ? ` (${Object.entries(row.load.errorKinds)
            .map(([k, n]) => `${k} ×${n}`)
            .join(', ')})`
        : ''
    }`,
  ]
    .filter(Boolean)
    .join(' | ');
}

export function cpuTable(rows: CpuRow[]): string {
  const header = [
    'body',
    'conns',
    'side',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU ms/req',
    'of it system',
    'db ms/req',
    'total ms/req',
    '× floor',
    'peak RSS MB',
    'errors',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < 3 ? '---|' : '--:|')).join('')}`];
  for (const row of rows) {
    const floor = floorOf(rows, row);
    const times = row.side.startsWith('tollgate') && floor ? f(total(row) / total(floor), 1) : '';
    const rate = `${f(row.load.requestsPerSecond, 0)}${row.pushbackWaits > 0 ? ' (backlog not bounded: not counted)' : ''}`;
    const cells = [
      row.body,
      row.connections,
      row.side,
      rate,
      f(row.load.p50),
      f(row.load.p99),
      f(row.cpuPerRequest, 3),
      f(row.systemPerRequest, 3),
      row.side.startsWith('tollgate') ? f(row.dbPerRequest, 3) : '',
      row.side === 'direct' ? '' : f(total(row), 3),
      times,
      f(row.peakRssMb, 0),
      row.load.errors,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * `row` against `other` slice by slice: the median of their slices' ratios, and the lowest and
 * highest (how far the host moved them); null without paired slices.
 */
export function sliceRatios(row: CpuRow, other: CpuRow): { median: number; low: number; high: number; n: number } | null {
  const ratios = row.sliceTotals
    .map((ms, i) => ms / other.sliceTotals[i]!)
    .filter((ratio) => Number.isFinite(ratio))
    .sort((a, b) => a - b);
  if (ratios.length === 0) return null;
  const mid = ratios.length >> 1;
  const median = ratios.length % 2 === 1 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
  return { median, low: ratios[0]!, high: ratios[ratios.length - 1]!, n: ratios.length };
}

const percentChange = (ratio: number) => `${ratio >= 1 ? '+' : ''}${f((ratio - 1) * 100, 1)} %`;

/** How a ratio moved slice by slice, as a clause: the median of n slices and their range. */
function bySlice(row: CpuRow, other: CpuRow, as: (ratio: number) => string): string {
  const r = sliceRatios(row, other);
  return r ? ` (slice by slice: median ${as(r.median)} of ${r.n}, ${as(r.low)} to ${as(r.high)})` : '';
}

/** One line per goal and measurement: CPU against the floor, the flags' cost, the footprint. */
export function cpuVerdict(rows: CpuRow[]): string[] {
  const lines: string[] = [];
  const pass = (ok: boolean) => (ok ? 'met' : 'NOT MET');
  for (const row of rows.filter((r) => r.side === 'tollgate, npm start')) {
    const floor = floorOf(rows, row);
    const plain = rows.find((r) => r.body === row.body && r.connections === row.connections && r.side === 'tollgate, plain node');
    const compare = rows.find((r) => r.body === row.body && r.connections === row.connections && r.side === 'tollgate, compare');
    if (compare)
      lines.push(
        `${row.body} c=${row.connections}: this build ${f(total(row), 3)} ms/req (${f(row.cpuPerRequest, 3)} + db ${f(row.dbPerRequest, 3)}) against the compared build's ${f(total(compare), 3)} (${f(compare.cpuPerRequest, 3)} + db ${f(compare.dbPerRequest, 3)}): ${percentChange(total(row) / total(compare))}${bySlice(row, compare, percentChange)}`,
      );
    if (!floor || !plain) continue;
    const times = total(row) / total(floor);
    const flagsRatio = total(row) / total(plain);
    lines.push(
      `${row.body} c=${row.connections}: Tollgate + PostgreSQL ${f(total(row), 3)} ms/req = ${f(times, 1)}× the Node floor's ${f(total(floor), 3)} (goal ≤ ${CPU_GOALS.timesFloor}×: ${pass(times <= CPU_GOALS.timesFloor)})${bySlice(row, floor, (ratio) => `${f(ratio, 2)}×`)}; npm start's flags ${percentChange(flagsRatio)} against plain node's ${f(total(plain), 3)} (goal ≤ ${CPU_GOALS.flagsCostPercent} %: ${pass((flagsRatio - 1) * 100 <= CPU_GOALS.flagsCostPercent)})${bySlice(row, plain, percentChange)}; peak RSS ${f(row.peakRssMb, 0)} MB (plain node ${f(plain.peakRssMb, 0)}, floor ${f(floor.peakRssMb, 0)})${row.connections >= 64 ? ` (goal ≤ ${CPU_GOALS.peakRssMb} MB: ${pass(row.peakRssMb <= CPU_GOALS.peakRssMb)})` : ''}${row.pushbackWaits > 0 ? '; settlement backlog NOT bounded (admissions waited): throughput not counted' : ''}`,
    );
  }
  return lines;
}
