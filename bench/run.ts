/**
 * `npm run bench`: the latency Tollgate adds to chat completions (non-streaming "json" and
 * streaming "stream"), measured against a fake OpenAI upstream in its own process, on this
 * machine. Billing (reservation + settlement on PostgreSQL) and admission limits are on, as in
 * production. Reported, never asserted. Load comes from bench/load.ts (undici keep-alive
 * connections, latencies in floating ms, to the last byte of the response body).
 *
 * For each body type:
 *  1. Saturation (closed loop): at each BENCH_CONNECTIONS level, N workers each send the next
 *     request as soon as the previous one has finished, directly against the upstream and then
 *     through Tollgate. Gives capacity (req/s); its latencies are mostly queueing.
 *  2. Rate sweep (open loop): requests are due at fixed intervals (1/rate) whether or not earlier
 *     ones have finished (up to 64 in flight), and latency runs from the DUE time to the last byte,
 *     so a stall that delays later sends counts against them (corrected for coordinated omission).
 *     Each rate is run directly against the upstream and then through Tollgate; the latency
 *     Tollgate adds is through − direct at the same rate (p50 from p50, p99 from p99), which also
 *     cancels the load generator's own costs (timer lateness, client parsing).
 *  3. The bar (added p50 < 1 ms and added p99 < 5 ms) is reported as the highest swept rate where
 *     both hold.
 * Each measurement alternates BENCH_SLICES slices of direct and through-Tollgate load (each
 * slice with a 300 ms unmeasured warm-up) and merges each side's samples: this machine's speed
 * drifts by up to 2x over seconds (other tenants of the host), and alternating makes both sides
 * see the same drift. CPU ms/request is Tollgate's process CPU (user + system, /proc, 10 ms
 * ticks) over the through-Tollgate slices divided by the requests they served, warm-ups
 * included; "db" is the same for the backends of the bench database (pg_stat_activity, /proc). "GC pauses" are the gateway's
 * own young-generation (scavenge) and full GCs during the through-Tollgate slices: the pauses
 * behind part of its p99. The load generator, the upstream, the gateway and PostgreSQL share
 * this machine's CPUs.
 *
 * The floor: between the direct and the through-Tollgate slice, a slice through
 * bench/floor-process.ts, a bare Node proxy (node:http in, undici out; no parsing, keys, limits
 * or billing). What it adds over the direct call is what this machine charges any Node gateway
 * for the extra hops and wake-ups; what Tollgate adds beyond it is Tollgate's own work and the
 * contention that work causes. BENCH_FLOOR=0 leaves it out.
 *
 * First, a calibration (bench/hop.ts): what one loopback round trip between two processes costs
 * here, which a request through Tollgate pays once more than a direct one; each row repeats it
 * briefly ("hop µs"), so a row measured while the machine was slow shows it. Output: aligned text rows as the run goes,
 * then one markdown table of all rows, the bar lines and the calibration.
 *
 * Knobs:
 *  DATABASE_URL       PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 *                     a scratch database is created and dropped.
 *  BENCH_SECONDS      measured seconds per run (default 8).
 *  BENCH_CONNECTIONS  closed-loop concurrency levels (default "1,16"); the sweep's rates derive
 *                     from the through-Tollgate req/s at the highest level.
 *  BENCH_RATES        absolute open-loop rates, req/s, comma list (e.g. "500,1000,2000"),
 *                     overriding the default fractions 0.25, 0.5, 0.75, 0.9 of that saturation
 *                     rate (rounded to 10 req/s).
 *  BENCH_SLICES       alternating direct/through slices per measurement (default 4).
 *  BENCH_FROM_SOURCE  1: the latency rows' gateway runs the TypeScript sources (swc); default: the
 *                     compiled build (built first) with bin/tollgate's node flags and GLIBC_TUNABLES,
 *                     as `npm start` runs it, inside bench/gateway-process.ts (which observes its GCs).
 *  BENCH_BODIES       body types to run, comma list (default "json,stream").
 *  BENCH_PROFILE      set: the gateway and the floor proxy write CPU profiles to /tmp/prof.
 *  BENCH_HEAP_PROFILE set: the gateway writes a sampling heap profile of every allocation,
 *                     collected ones included (what drives the scavenges), to /tmp/prof.
 *  BENCH_ACCOUNTS     tier-5 accounts (one key each) per through-Tollgate run, in rotation (default 16:
 *                     tier 5 admits 1,000 requests a second and 30,000 a minute per account, and on a
 *                     fast host eight accounts' limits refused some of the bench's requests).
 *  BENCH_NODE_FLAGS   extra Node flags for the gateway and floor processes (e.g. "--trace-gc").
 *  BENCH_LOOP_DELAY   set: the gateway prints, each second, its event-loop delay when above 5 ms.
 *  BENCH_FLOOR        0: no floor slices (default: on).
 *  BENCH_LOG_LEVEL    the gateway's log level, to stderr (default silent; "info" logs every request
 *                     and slows the gateway).
 *  REDIS_URL          set: the gateway keeps its limits in Redis. The sharing comparison uses
 *                     it too (default redis://127.0.0.1:6379).
 *  BENCH_SHARING      0: no sharing comparison; "only": the sharing comparison alone.
 *  BENCH_SHARING_SECONDS      measured seconds per side and scenario there (default 6).
 *  BENCH_SHARING_CONNECTIONS  closed-loop connections there (default 64).
 *  BENCH_SHARING_NODE_FLAGS   node flags added there through NODE_OPTIONS (experiments).
 *  BENCH_SHARING_START        a script to start the instances with instead of bin/tollgate (to
 *                             compare memory settings: a copy of it with others).
 *  BENCH_SHARING_BUILD        0: use dist/ as it is (no build first; also for the sustained scenario).
 *  BENCH_CPU          0: no CPU comparison (bench/cpu.ts); "only": it alone. Default: on.
 *  BENCH_CPU_SECONDS  measured seconds per side and measurement there (default 16).
 *  BENCH_CPU_CONNECTIONS  closed-loop levels there (default "16,64").
 *  BENCH_CPU_COMPARE  a checkout with its own bin/tollgate and built dist/: measured there beside
 *                     this one (A/B of a change; build it first).
 *  BENCH_CPU_SIDES    only these sides, comma list of direct, floor, npm-start, plain, compare.
 *  BENCH_CPU_SLICES   alternating slices per side there (default 4; an A/B on a busy machine: more).
 *  BENCH_CPU_RATE     open loop at this rate per side there instead of the closed loop (an A/B on a
 *                     busy machine: both sides then serve the same requests per second).
 *  BENCH_CPU_WARM_SECONDS  unmeasured load per side before each body's rows there (default 5: steady state).
 *  BENCH_SUSTAINED    1: add the sustained scenario (bench/sustained.ts) at the end; "only": it
 *                     alone (`npm run bench:sustained`); default 0 (it takes BENCH_SUSTAINED_MINUTES).
 *  BENCH_SUSTAINED_MINUTES         minutes of load there (default 6).
 *  BENCH_SUSTAINED_ROUND_SECONDS   seconds per round, JSON and streamed in turn (default 60).
 *  BENCH_SUSTAINED_CONNECTIONS     closed-loop connections there (default 64).
 *
 * Last, the cost of sharing limits (bench/sharing.ts): the compiled build (built first) as one
 * instance with in-process limits, one with Redis limits and two on one Redis, side by side,
 * with each scenario's throughput, added latency, CPU per request and peak resident memory; then
 * the footprint of one instance (issue #19: at most 150 MB), started by bin/tollgate with
 * the memory settings an operator gets.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { measureHop } from './hop';
import { backendsCpu, cpuMs, cpuSince, residentMb } from './proc';
import { Client } from 'pg';
import { mergeLoadResults, runLoad, type LoadResult } from './load';
import { ADMIN_TOKEN, benchDatabase, provisionKey } from './provision';
import {
  buildGateway,
  footprintLines,
  runSharingComparison,
  sharingTable,
  sharingTextRow,
  startSettings,
  type SharingRow,
} from './sharing';
import { cpuTable, cpuTextRow, cpuVerdict, runCpuComparison, startNodeFloor, type CpuOptions, type CpuRow } from './cpu';
import { runSustained, sustainedTable, sustainedTextRow, sustainedVerdict, type SustainedOptions, type SustainedResult } from './sustained';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,16').split(',').map(Number);
const RATES = process.env.BENCH_RATES ? process.env.BENCH_RATES.split(',').map(Number) : undefined;
/** Alternating direct/through slices per measurement, each with its own unmeasured warm-up. */
const SLICES = Number(process.env.BENCH_SLICES ?? 4);
const SLICE_WARMUP_MS = 300;
const BODIES = (process.env.BENCH_BODIES ?? 'json,stream').split(',') as ('json' | 'stream')[];
const WITH_FLOOR = process.env.BENCH_FLOOR !== '0';
const SHARING_ONLY = process.env.BENCH_SHARING === 'only';
const SUSTAINED_ONLY = process.env.BENCH_SUSTAINED === 'only';
const CPU_ONLY = process.env.BENCH_CPU === 'only';
/** One scenario alone: the others are left out. */
const ALONE = SHARING_ONLY || SUSTAINED_ONLY || CPU_ONLY;
const WITH_CPU = CPU_ONLY || (process.env.BENCH_CPU !== '0' && !ALONE);
const WITH_SHARING = SHARING_ONLY || (process.env.BENCH_SHARING !== '0' && !ALONE);
const WITH_SUSTAINED = SUSTAINED_ONLY || (process.env.BENCH_SUSTAINED === '1' && !ALONE);
/** The latency rows and the sweep (bench/gateway-process.ts). */
const MAIN_ROWS = !ALONE;
const CPU_SECONDS = Number(process.env.BENCH_CPU_SECONDS ?? 16);
const CPU_CONNECTIONS = (process.env.BENCH_CPU_CONNECTIONS ?? '16,64').split(',').map(Number);
const CPU_SIDE_KEYS: Record<string, string> = {
  direct: 'direct',
  floor: 'node floor',
  'npm-start': 'tollgate, npm start',
  plain: 'tollgate, plain node',
  compare: 'tollgate, compare',
};
const SHARING_SECONDS = Number(process.env.BENCH_SHARING_SECONDS ?? 6);
const SHARING_CONNECTIONS = Number(process.env.BENCH_SHARING_CONNECTIONS ?? 64);
const SHARING_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SUSTAINED_MINUTES = Number(process.env.BENCH_SUSTAINED_MINUTES ?? 6);
const SUSTAINED_ROUND_SECONDS = Number(process.env.BENCH_SUSTAINED_ROUND_SECONDS ?? 60);
const SUSTAINED_CONNECTIONS = Number(process.env.BENCH_SUSTAINED_CONNECTIONS ?? 64);
const RATE_FRACTIONS = [0.25, 0.5, 0.75, 0.9];
const OPEN_LOOP_CONNECTIONS = 64;
const BAR = { p50: 1, p99: 5 };
/** Round trips of the per-row machine check (the calibration at the start makes 10,000). */
const HOP_ROUND_TRIPS_PER_ROW = 2_000;
const REGISTER = join(__dirname, '..', 'test', 'support', 'swc-register.js');

/** BENCH_PROFILE: CPU profiles in /tmp/prof; BENCH_NODE_FLAGS: more flags (`--trace-gc`, say). For the gateway and the floor proxy alike. */
function proxyFlags(): string[] {
  return [
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []),
    ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
  ];
}

const GATEWAY_BUILD =
  process.env.BENCH_FROM_SOURCE === '1' ? 'from source (swc)' : "the compiled build with npm start's node flags and glibc settings";

/** Where the latency rows' gateway keeps its limits: it inherits REDIS_URL, and a Redis round trip per request shows at one connection. */
const LIMITS_WHERE = process.env.REDIS_URL ? 'limits in Redis at REDIS_URL' : 'limits in the process: REDIS_URL unset';

/** The gateway of the latency rows runs as `npm start` runs it: bin/tollgate's node flags and glibc settings (unless from source). */
function gatewaySettings(script: string): { flags: string[]; env: Record<string, string> } {
  if (script !== 'gateway-process.ts' || process.env.BENCH_FROM_SOURCE === '1') return { flags: [], env: {} };
  const { nodeFlags, glibcTunables } = startSettings();
  return { flags: nodeFlags, env: { GLIBC_TUNABLES: glibcTunables } };
}

function spawnChild<T>(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; message: T }> {
  const settings = gatewaySettings(script);
  const child = fork(join(__dirname, script), [], {
    execArgv: ['-r', REGISTER, ...settings.flags, ...(script === 'upstream-process.ts' ? [] : proxyFlags())],
    env: { ...process.env, ...settings.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ child, message: message as T }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** Tier-5 accounts (one key each) per through-Tollgate run, in rotation (see bench/provision.ts). */
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 16);

interface Target {
  url: string;
  /** Used in rotation, one per request. */
  tokens: string[];
  body: unknown;
}

function load(target: Target, connections: number, ratePerSecond: number | undefined, durationMs: number): Promise<LoadResult> {
  const headersFor = (token: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });
  return runLoad({
    url: target.url,
    headers: headersFor(target.tokens[0]!),
    headerSets: target.tokens.map(headersFor),
    body: JSON.stringify(target.body),
    connections,
    durationMs,
    warmupMs: SLICE_WARMUP_MS,
    ratePerSecond,
  });
}

/** The gateway's GC pauses over some slices (bench/gateway-process.ts observes its own). */
interface GcPauses {
  scavenges: number;
  scavengeMs: number;
  scavengeMaxMs: number;
  fullGcs: number;
  fullGcMs: number;
}

/** Reads (and resets) the gateway's GC counters. */
function readGc(child: ChildProcess): Promise<GcPauses> {
  return new Promise((resolve) => {
    const onMessage = (message: { type?: string } & GcPauses) => {
      if (message.type !== 'gc') return;
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.send({ type: 'gc-read' });
  });
}

const gcText = (gc: GcPauses) =>
  `${gc.scavenges} scavenges (mean ${(gc.scavengeMs / Math.max(1, gc.scavenges)).toFixed(1)}, max ${gc.scavengeMaxMs.toFixed(1)} ms), ${gc.fullGcs} full (${gc.fullGcMs.toFixed(0)} ms)`;

interface Row {
  body: 'json' | 'stream';
  /** "closed c=16" or "open 1200/s". */
  load: string;
  open: boolean;
  direct: LoadResult;
  through: LoadResult;
  /** Through the bare proxy (bench/floor-process.ts); absent with BENCH_FLOOR=0. */
  floor?: LoadResult;
  /** Through the team's Node floor (bench/node-floor.mjs: parses and re-encodes); absent with BENCH_FLOOR=0. */
  nodeFloor?: LoadResult;
  cpuPerRequest: number;
  /** The kernel's part of cpuPerRequest (sockets, wake-ups). */
  systemPerRequest: number;
  /** PostgreSQL's CPU per request through Tollgate (ms; every postgres process on the machine). */
  dbPerRequest: number;
  /** The gateway's GC pauses during the through-Tollgate slices. */
  gc: GcPauses;
  /** A process-to-process round trip just before the row (µs): how fast the machine was then. */
  hopUs: number;
}

const ms = (value: number, width = 7) => value.toFixed(2).padStart(width);
/** Open loop: the rate actually sent; closed loop: responses per second. */
const rate = (result: LoadResult, open: boolean) => (open ? result.achievedRate : result.requestsPerSecond);

/** " (tollgate: HTTP 429 ×38)" when there were errors. */
function errorKinds(through: LoadResult, direct: LoadResult): string {
  const list = (r: LoadResult) =>
    Object.entries(r.errorKinds)
      .map(([kind, count]) => `${kind} ×${count}`)
      .join(', ');
  const parts = [through.errors ? `tollgate: ${list(through)}` : '', direct.errors ? `direct: ${list(direct)}` : ''].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

function textRow(row: Row): string {
  const { direct, through } = row;
  const side = (name: string, r: LoadResult) =>
    `${name} ${rate(r, row.open).toFixed(0).padStart(6)} req/s p50 ${ms(r.p50)} p99 ${ms(r.p99)} ms`;
  return [
    row.body.padEnd(6),
    row.load.padEnd(13),
    side('direct', direct),
    side('tollgate', through),
    `added p50 ${ms(through.p50 - direct.p50, 6)} p99 ${ms(through.p99 - direct.p99, 6)} ms`,
    ...(row.floor ? [`floor added p50 ${ms(row.floor.p50 - direct.p50, 6)} p99 ${ms(row.floor.p99 - direct.p99, 6)} ms`] : []),
    ...(row.nodeFloor
      ? [`node floor added p50 ${ms(row.nodeFloor.p50 - direct.p50, 6)} p99 ${ms(row.nodeFloor.p99 - direct.p99, 6)} ms`]
      : []),
    `cpu ${row.cpuPerRequest.toFixed(3)} ms/req (system ${row.systemPerRequest.toFixed(3)}) db ${row.dbPerRequest.toFixed(3)}`,
    `gc ${gcText(row.gc)}`,
    `errors ${through.errors}/${direct.errors}${errorKinds(through, direct)}`,
    `hop ${row.hopUs.toFixed(0)} µs`,
    ...(row.open ? [`send lag p99 ${ms(through.sendLagP99, 5)}/${ms(direct.sendLagP99, 5)} ms`] : []),
  ].join(' | ');
}

function markdownTable(rows: Row[]): string {
  const header = [
    'body',
    'load',
    'direct req/s',
    'direct p50',
    'direct p99',
    'tollgate req/s',
    'tollgate p50',
    'tollgate p99',
    'added p50',
    'added p99',
    'floor added p50',
    'floor added p99',
    'node floor added p50',
    'node floor added p99',
    'CPU ms/req',
    'GC pauses',
    'errors (tollgate/direct)',
    'hop µs',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((h, i) => (i < 2 ? '---|' : '--:|')).join('')}`];
  for (const row of rows) {
    const { direct, through } = row;
    const cells = [
      row.body,
      row.load,
      rate(direct, row.open).toFixed(0),
      direct.p50.toFixed(2),
      direct.p99.toFixed(2),
      rate(through, row.open).toFixed(0),
      through.p50.toFixed(2),
      through.p99.toFixed(2),
      (through.p50 - direct.p50).toFixed(2),
      (through.p99 - direct.p99).toFixed(2),
      row.floor ? (row.floor.p50 - direct.p50).toFixed(2) : '',
      row.floor ? (row.floor.p99 - direct.p99).toFixed(2) : '',
      row.nodeFloor ? (row.nodeFloor.p50 - direct.p50).toFixed(2) : '',
      row.nodeFloor ? (row.nodeFloor.p99 - direct.p99).toFixed(2) : '',
      row.cpuPerRequest.toFixed(3),
      gcText(row.gc),
      `${through.errors}/${direct.errors}`,
      row.hopUs.toFixed(0),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The bar line of one body type, from its sweep rows (ascending rates): for Tollgate, or for the floor proxy. */
function barLine(body: string, sweep: { rate: number; row: Row }[], side: 'through' | 'floor' = 'through'): string {
  const viaOf = (row: Row) => (side === 'floor' ? row.floor! : row.through);
  const holds = ({ row }: { row: Row }) => viaOf(row).p50 - row.direct.p50 < BAR.p50 && viaOf(row).p99 - row.direct.p99 < BAR.p99;
  const passing = sweep.filter(holds);
  const prefix = `${body}${side === 'floor' ? ' through the floor proxy' : ''}: bar (added p50 < ${BAR.p50} ms, p99 < ${BAR.p99} ms)`;
  if (passing.length === 0) return `${prefix} holds nowhere in the sweep`;
  const best = passing.at(-1)!;
  const notes: string[] = [];
  const failingBelow = sweep.filter((s) => s.rate < best.rate && !holds(s)).map((s) => s.rate);
  if (failingBelow.length) notes.push(`but not at ${failingBelow.join(', ')} req/s`);
  if (viaOf(best.row).errors > 0) notes.push(`${viaOf(best.row).errors} errors at that rate`);
  // The added p99 is a difference of two tails: when the direct one is itself long, the machine
  // stalled during that row, and the difference says little.
  if (best.row.direct.p99 > BAR.p99)
    notes.push(`the direct p99 there was ${best.row.direct.p99.toFixed(1)} ms, so the machine stalled in that row: read it with care`);
  return `${prefix} holds up to ${best.rate} req/s${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

async function main(): Promise<void> {
  let database = await benchDatabase(SERVER_URL);

  const upstream = await spawnChild<{ url: string }>('upstream-process.ts', {});
  // The latency rows' gateway runs the compiled build with npm start's settings (BENCH_FROM_SOURCE=1: the sources).
  if (process.env.BENCH_FROM_SOURCE !== '1' && process.env.BENCH_SHARING_BUILD !== '0') buildGateway();
  const gateway = await spawnChild<{ port: number }>('gateway-process.ts', {
    DATABASE_URL: database.url,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: upstream.message.url,
    TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
  });
  const gatewayUrl = `http://127.0.0.1:${gateway.message.port}`;
  // PostgreSQL's share: the backends of the bench database (others may share the server).
  const monitor = new Client({ connectionString: database.url });
  await monitor.connect();
  const floor = WITH_FLOOR ? await spawnChild<{ port: number }>('floor-process.ts', { FLOOR_UPSTREAM: upstream.message.url }) : null;
  const nodeFloor = WITH_FLOOR ? await startNodeFloor(new URL(upstream.message.url).origin) : null;
  let retired = false;
  /** Stops the latency rows' gateway and floors (once). */
  const retireLatencyRows = async () => {
    if (retired) return;
    retired = true;
    await monitor.end();
    const exits = [gateway.child, floor?.child, nodeFloor?.child].map((child) =>
      child && child.exitCode === null ? new Promise((r) => child.once('exit', r)) : undefined,
    );
    gateway.child.disconnect();
    floor?.child.disconnect();
    nodeFloor?.child.disconnect();
    await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 5_000))]);
  };
  try {
    const messages = [{ role: 'user', content: 'Say something about foxes.' }];
    const rows: Row[] = [];
    const bars: string[] = [];
    const gatewayPid = gateway.child.pid!;
    console.log(
      `Tollgate bench: ${SECONDS}s per run (+0.5s warm-up), closed loop at connections ${CONNECTIONS.join('/')}, ` +
        `open loop at ${RATES ? `${RATES.join('/')} req/s` : `${RATE_FRACTIONS.join('/')} of saturation`} (${OPEN_LOOP_CONNECTIONS} connections), billing + limits on (${LIMITS_WHERE}); Tollgate: ${GATEWAY_BUILD}`,
    );
    const hop = await measureHop();
    const hopLine = `machine: a loopback round trip between two processes takes ${hop.roundTripUs.toFixed(0)} µs (${hop.cpuUsPerRoundTrip.toFixed(0)} µs of the sender's CPU); a request through Tollgate makes one such round trip more than a direct one`;
    console.log(hopLine);
    for (const bodyType of MAIN_ROWS ? BODIES : []) {
      const stream = bodyType === 'stream';
      const extra = stream ? { stream: true, stream_options: { include_usage: true } } : {};
      const direct: Target = {
        url: `${upstream.message.url}/chat/completions`,
        tokens: ['sk-bench'],
        body: { model: 'gpt-4o-mini', messages, ...extra },
      };
      const measure = async (label: string, connections: number, ratePerSecond?: number): Promise<Row> => {
        const through: Target = {
          url: `${gatewayUrl}/v1/chat/completions`,
          tokens: await Promise.all(Array.from({ length: ACCOUNTS }, () => provisionKey(gatewayUrl))),
          body: { model: 'openai/gpt-4o-mini', messages, ...extra },
        };
        const hopUs = (await measureHop(HOP_ROUND_TRIPS_PER_ROW)).roundTripUs;
        // Slices of direct and through runs alternate, so both sides see the same machine: its
        // speed drifts (other tenants of the host) over seconds, by up to 2x.
        const sliceMs = (SECONDS * 1000) / SLICES;
        const floorTarget: Target = { ...direct, url: `http://127.0.0.1:${floor?.message.port}/v1/chat/completions` };
        const directParts: LoadResult[] = [];
        const floorParts: LoadResult[] = [];
        const nodeFloorTarget: Target = { ...direct, url: `http://127.0.0.1:${nodeFloor?.port}/v1/chat/completions` };
        const nodeFloorParts: LoadResult[] = [];
        const throughParts: LoadResult[] = [];
        let user = 0;
        let system = 0;
        let db = 0;
        const gc: GcPauses = { scavenges: 0, scavengeMs: 0, scavengeMaxMs: 0, fullGcs: 0, fullGcMs: 0 };
        for (let slice = 0; slice < SLICES; slice++) {
          directParts.push(await load(direct, connections, ratePerSecond, sliceMs));
          if (floor) floorParts.push(await load(floorTarget, connections, ratePerSecond, sliceMs));
          if (nodeFloor) nodeFloorParts.push(await load(nodeFloorTarget, connections, ratePerSecond, sliceMs));
          await readGc(gateway.child);
          const cpuBefore = cpuMs(gatewayPid);
          const dbBefore = await backendsCpu(monitor);
          throughParts.push(await load(through, connections, ratePerSecond, sliceMs));
          const cpuAfter = cpuMs(gatewayPid);
          const sliceGc = await readGc(gateway.child);
          gc.scavenges += sliceGc.scavenges;
          gc.scavengeMs += sliceGc.scavengeMs;
          gc.scavengeMaxMs = Math.max(gc.scavengeMaxMs, sliceGc.scavengeMaxMs);
          gc.fullGcs += sliceGc.fullGcs;
          gc.fullGcMs += sliceGc.fullGcMs;
          db += cpuSince(dbBefore, await backendsCpu(monitor));
          user += cpuAfter.user - cpuBefore.user;
          system += cpuAfter.system - cpuBefore.system;
        }
        const directResult = mergeLoadResults(directParts);
        const throughResult = mergeLoadResults(throughParts);
        const served = Math.max(1, throughResult.totalRequests);
        const systemPerRequest = system / served;
        const cpuPerRequest = user / served + systemPerRequest;
        const dbPerRequest = db / served;
        const row: Row = {
          body: bodyType,
          load: label,
          open: ratePerSecond !== undefined,
          direct: directResult,
          through: throughResult,
          floor: floor ? mergeLoadResults(floorParts) : undefined,
          nodeFloor: nodeFloor ? mergeLoadResults(nodeFloorParts) : undefined,
          cpuPerRequest,
          systemPerRequest,
          dbPerRequest,
          gc,
          hopUs,
        };
        rows.push(row);
        console.log(textRow(row));
        return row;
      };

      let saturation = 0;
      for (const connections of [...CONNECTIONS].sort((a, b) => a - b)) {
        const row = await measure(`closed c=${connections}`, connections);
        saturation = row.through.requestsPerSecond;
      }
      const rates = RATES ?? RATE_FRACTIONS.map((fraction) => Math.max(10, Math.round((fraction * saturation) / 10) * 10));
      const sweep: { rate: number; row: Row }[] = [];
      for (const ratePerSecond of [...new Set(rates)].sort((a, b) => a - b)) {
        sweep.push({ rate: ratePerSecond, row: await measure(`open ${ratePerSecond}/s`, OPEN_LOOP_CONNECTIONS, ratePerSecond) });
      }
      bars.push(barLine(bodyType, sweep));
      console.log(bars.at(-1));
      if (WITH_FLOOR) {
        bars.push(barLine(bodyType, sweep, 'floor'));
        console.log(bars.at(-1));
      }
    }
    const rss = `tollgate peak RSS ${residentMb(gatewayPid).toFixed(0)} MB (${GATEWAY_BUILD}, over every scenario above)`;
    if (MAIN_ROWS) console.log(rss);
    // The tables below start their own gateways, on a fresh database, and the latency rows'
    // processes stop: their database holds the rows' millions of records, and the autovacuum that
    // follows them would land in some slices of the CPU table and not in others.
    if (MAIN_ROWS && (WITH_CPU || WITH_SHARING || WITH_SUSTAINED)) {
      await retireLatencyRows();
      await database.drop();
      database = await benchDatabase(SERVER_URL);
    }
    let sharing: SharingRow[] = [];
    if ((WITH_CPU || WITH_SHARING || WITH_SUSTAINED) && process.env.BENCH_FROM_SOURCE === '1' && process.env.BENCH_SHARING_BUILD !== '0')
      buildGateway();
    let cpu: CpuRow[] = [];
    if (WITH_CPU) {
      console.log(
        `\nCPU per request side by side, compiled build, closed loop at ${CPU_CONNECTIONS.join('/')} connections, ${CPU_SECONDS}s per side: direct, the Node floor (bench/node-floor.mjs), Tollgate as npm start starts it, Tollgate on plain node:`,
      );
      const cpuOptions = {
        databaseUrl: database.url,
        upstreamUrl: upstream.message.url,
        redisUrl: SHARING_REDIS_URL,
        seconds: CPU_SECONDS,
        connections: CPU_CONNECTIONS,
        bodies: BODIES,
        accounts: ACCOUNTS,
        compareDir: process.env.BENCH_CPU_COMPARE,
        sides: process.env.BENCH_CPU_SIDES?.split(',').map((key) => CPU_SIDE_KEYS[key] ?? key) as CpuOptions['sides'],
        slices: process.env.BENCH_CPU_SLICES ? Number(process.env.BENCH_CPU_SLICES) : undefined,
        ratePerSecond: process.env.BENCH_CPU_RATE ? Number(process.env.BENCH_CPU_RATE) : undefined,
      };
      cpu = await runCpuComparison(cpuOptions, (row) => console.log(cpuTextRow(row)));
    }
    if (WITH_SHARING) {
      console.log(
        `\nThe cost of sharing limits, compiled build, closed loop at ${SHARING_CONNECTIONS} connections, ${SHARING_SECONDS}s per side:`,
      );
      sharing = await runSharingComparison(
        {
          databaseUrl: database.url,
          upstreamUrl: upstream.message.url,
          redisUrl: SHARING_REDIS_URL,
          seconds: SHARING_SECONDS,
          connections: SHARING_CONNECTIONS,
          accounts: ACCOUNTS,
          bodies: BODIES,
        },
        (row) => console.log(sharingTextRow(row)),
      );
    }
    let sustained: SustainedResult | null = null;
    const sustainedOptions: SustainedOptions = {
      databaseUrl: database.url,
      upstreamUrl: upstream.message.url,
      redisUrl: SHARING_REDIS_URL,
      minutes: SUSTAINED_MINUTES,
      roundSeconds: SUSTAINED_ROUND_SECONDS,
      connections: SUSTAINED_CONNECTIONS,
      accounts: ACCOUNTS,
    };
    if (WITH_SUSTAINED) {
      console.log(`\nSustained load, compiled build, closed loop at ${SUSTAINED_CONNECTIONS} connections for ${SUSTAINED_MINUTES} min:`);
      sustained = await runSustained(sustainedOptions, (minute) => console.log(sustainedTextRow(minute)));
    }
    console.log('');
    if (MAIN_ROWS) {
      console.log(markdownTable(rows));
      console.log('');
    }
    if (cpu.length > 0) {
      console.log(cpuTable(cpu));
      console.log('');
      for (const line of cpuVerdict(cpu)) console.log(`- ${line}`);
      console.log('');
    }
    if (sharing.length > 0) {
      console.log(sharingTable(sharing, SHARING_CONNECTIONS));
      console.log('');
      for (const line of footprintLines(sharing, SHARING_CONNECTIONS)) console.log(line);
      console.log('');
    }
    if (sustained) {
      console.log(sustainedTable(sustained, sustainedOptions));
      console.log('');
      for (const line of sustainedVerdict(sustained)) console.log(`- ${line}`);
      console.log('');
    }
    for (const bar of bars) console.log(`- ${bar}`);
    console.log(`- ${hopLine}`);
    if (MAIN_ROWS) console.log(`- ${rss}`);
  } finally {
    await retireLatencyRows();
    upstream.child.disconnect();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
