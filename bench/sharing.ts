/**
 * The cost of sharing limits, side by side in one run of `npm run bench`, for the COMPILED
 * build (`npm run build`, then `node dist/src/main.js`, as an operator runs it):
 *   - one instance with in-process limits,
 *   - one instance with its limits in Redis,
 *   - two instances on one Redis and one PostgreSQL, the load generator splitting its
 *     connections between them (what a load balancer would do),
 * each under SHARING_CONNECTIONS closed-loop connections of JSON chat and of streamed chat
 * against the mock upstream. Slices of direct (upstream only) and through-Tollgate load
 * alternate, as in the main bench, so both sides see the same machine. Every scenario starts
 * fresh gateway processes, so each one's peak resident memory (VmHWM) is that scenario's.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Redis } from 'ioredis';
import { mergeLoadResults, runLoad, type LoadResult } from './load';
import { cpuMs, resetPeakRss, residentMb } from './proc';
import { ADMIN_TOKEN, provisionKey } from './provision';

export const ROOT = join(__dirname, '..');
/**
 * The package's bin, which `npm start` execs with `start`: node with the gateway's memory
 * settings. BENCH_SHARING_START: another script to start instead, to compare settings.
 */
const BIN = process.env.BENCH_SHARING_START ?? join(ROOT, 'bin', 'tollgate');
/** Issue #19: one instance serving 64 connections of JSON or streamed chat stays at or under this. */
export const FOOTPRINT_LIMIT_MB = 150;

export interface SharingOptions {
  databaseUrl: string;
  upstreamUrl: string;
  redisUrl: string;
  /** Measured seconds per side (direct, through) and scenario, over all slices. */
  seconds: number;
  connections: number;
  accounts: number;
  bodies: ('json' | 'stream')[];
}

interface Scenario {
  name: string;
  instances: number;
  redis: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: '1 instance, in-process limits', instances: 1, redis: false },
  { name: '1 instance, limits in Redis', instances: 1, redis: true },
  { name: '2 instances, limits in Redis', instances: 2, redis: true },
];
const SLICES = 2;
const WARMUP_MS = 300;

export interface SharingRow {
  body: 'json' | 'stream';
  scenario: string;
  direct: LoadResult;
  through: LoadResult;
  /** Gateway CPU (all instances, user + system) per request served, ms. */
  cpuPerRequest: number;
  /**
   * Peak resident memory of each instance while serving the load (after start-up and
   * provisioning), MB. The first instance served the provisioning (so its GraphQL API is loaded,
   * which raises the live heap and so the old generation's peak: docs/performance.md; and it hashed
   * the users' passwords), and the first of the first scenario also ran the migrations; the others
   * did neither.
   */
  peakRssMb: number[];
}

/** `npm run build` (the server part): the scenarios run what an operator runs. */
export function buildGateway(): void {
  const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`npm run build failed (${built.status})`);
}

/** The lines of the start script that set node's environment and flags, for the report (their settings are what is measured). */
export function startLine(): string {
  return (
    readFileSync(BIN, 'utf8')
      .split('\n')
      .filter((line) => /^(exec |GLIBC_TUNABLES=|export )/.test(line))
      .join('; ') || '(no exec line)'
  );
}

/**
 * What the start script gives node (bin/tollgate): its default V8 flags (TOLLGATE_NODE_FLAGS
 * replaces them, as there) and its GLIBC_TUNABLES (the caller's appended, as there). For a
 * gateway started another way that must run as `npm start` runs it (the latency rows).
 */
export function startSettings(): { nodeFlags: string[]; glibcTunables: string } {
  const script = readFileSync(join(ROOT, 'bin', 'tollgate'), 'utf8');
  const flags = /\$\{TOLLGATE_NODE_FLAGS-([^}]*)\}/.exec(script);
  const tunables = /^GLIBC_TUNABLES="([^"$]*)/m.exec(script);
  if (!flags || !tunables) throw new Error('bin/tollgate no longer sets its node flags and GLIBC_TUNABLES as this bench reads them');
  const nodeFlags = process.env.TOLLGATE_NODE_FLAGS ?? flags[1]!;
  const inherited = process.env.GLIBC_TUNABLES;
  return {
    nodeFlags: nodeFlags.split(' ').filter(Boolean),
    glibcTunables: `${tunables[1]!}${inherited ? `:${inherited}` : ''}`,
  };
}

export interface Gateway {
  child: ChildProcess;
  url: string;
}

/**
 * `bin/tollgate start`, as `npm start` runs it (or `command`), on a free port; resolves once it
 * prints that it listens. The script execs node, so the child's pid is node's (for /proc).
 */
export function startCompiledGateway(env: Record<string, string>, command: string[] = [BIN, 'start']): Promise<Gateway> {
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on http:\/\/localhost:(\d+)/.exec(output);
      if (!match) return;
      // Read on and forget (access log lines under BENCH_LOG_LEVEL): a full pipe would stall it.
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({ child, url: `http://127.0.0.1:${match[1]}` });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`compiled gateway exited with ${code}: ${output}`)));
  });
}

export function stopGateway(gateway: Gateway): Promise<void> {
  return new Promise((resolve) => {
    if (gateway.child.exitCode !== null) return resolve();
    gateway.child.once('exit', () => resolve());
    gateway.child.kill('SIGTERM');
  });
}

export function gatewayEnv(
  options: Pick<SharingOptions, 'databaseUrl' | 'upstreamUrl' | 'redisUrl'>,
  redisPrefix: string | null,
): Record<string, string> {
  // The runner's environment (NODE_OPTIONS, GLIBC_TUNABLES …) minus what each scenario sets itself.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined &&
        !/^(REDIS_URL|TOLLGATE_(?!NODE_FLAGS)|DATABASE_URL|OPENAI_|ANTHROPIC_|GOOGLE_|PORT$|HOST$)/.test(entry[0]),
    ),
  );
  // BENCH_SHARING_NODE_FLAGS: more node flags, for experiments (those NODE_OPTIONS accepts).
  const nodeOptions = [inherited.NODE_OPTIONS, process.env.BENCH_SHARING_NODE_FLAGS].filter(Boolean).join(' ');
  const env: Record<string, string> = {
    ...inherited,
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    NODE_ENV: 'production',
    DATABASE_URL: options.databaseUrl,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: options.upstreamUrl,
    TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    // BENCH_LOG_LEVEL=info: one access log line per request, as `npm start` writes by default.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
  };
  if (redisPrefix) Object.assign(env, { REDIS_URL: options.redisUrl, TOLLGATE_REDIS_KEY_PREFIX: redisPrefix });
  return env;
}

/** Closed loop over several targets at once (one per instance), the connections split between them. */
async function loadAcross(urls: string[], tokens: string[], body: string, connections: number, durationMs: number): Promise<LoadResult> {
  const headerSets = tokens.map((token) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` }));
  const parts = await Promise.all(
    urls.map((url, i) =>
      runLoad({
        url,
        headers: headerSets[0]!,
        headerSets,
        body,
        connections: Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0),
        durationMs,
        warmupMs: WARMUP_MS,
      }),
    ),
  );
  // The parts ran at the same time: their rates add up (mergeLoadResults adds durations).
  return { ...mergeLoadResults(parts), requestsPerSecond: parts.reduce((sum, part) => sum + part.requestsPerSecond, 0), durationMs };
}

async function runScenario(options: SharingOptions, bodyType: 'json' | 'stream', scenario: Scenario): Promise<SharingRow> {
  const prefix = scenario.redis ? `tollgate:bench-${randomBytes(4).toString('hex')}:` : null;
  const gateways: Gateway[] = [];
  try {
    // One after the other: the first applies the migrations the others then find done.
    for (let i = 0; i < scenario.instances; i++) gateways.push(await startCompiledGateway(gatewayEnv(options, prefix)));
    const tokens = await Promise.all(Array.from({ length: options.accounts }, () => provisionKey(gateways[0]!.url)));
    // The peak from here on: serving chat, not start-up (migrations) or provisioning (password hashing).
    for (const g of gateways) resetPeakRss(g.child.pid!);
    const extra = bodyType === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {};
    const messages = [{ role: 'user', content: 'Say something about foxes.' }];
    const directBody = JSON.stringify({ model: 'gpt-4o-mini', messages, ...extra });
    const throughBody = JSON.stringify({ model: 'openai/gpt-4o-mini', messages, ...extra });
    const sliceMs = (options.seconds * 1000) / SLICES;
    const directParts: LoadResult[] = [];
    const throughParts: LoadResult[] = [];
    let cpu = 0;
    for (let slice = 0; slice < SLICES; slice++) {
      directParts.push(
        await loadAcross([`${options.upstreamUrl}/chat/completions`], ['sk-bench'], directBody, options.connections, sliceMs),
      );
      const before = gateways.map((g) => cpuMs(g.child.pid!));
      throughParts.push(
        await loadAcross(
          gateways.map((g) => `${g.url}/v1/chat/completions`),
          tokens,
          throughBody,
          options.connections,
          sliceMs,
        ),
      );
      gateways.forEach((g, i) => {
        const after = cpuMs(g.child.pid!);
        cpu += after.user - before[i]!.user + after.system - before[i]!.system;
      });
    }
    const through = mergeSlices(throughParts);
    return {
      body: bodyType,
      scenario: scenario.name,
      direct: mergeSlices(directParts),
      through,
      cpuPerRequest: cpu / Math.max(1, through.totalRequests),
      peakRssMb: gateways.map((g) => residentMb(g.child.pid!)),
    };
  } finally {
    await Promise.all(gateways.map(stopGateway));
    if (prefix) await dropKeys(options.redisUrl, prefix);
  }
}

/** Slices run one after the other: their rate is requests over their summed durations. */
function mergeSlices(slices: LoadResult[]): LoadResult {
  const merged = mergeLoadResults(slices);
  return { ...merged, requestsPerSecond: merged.requests / (merged.durationMs / 1000) };
}

async function dropKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

export async function runSharingComparison(options: SharingOptions, onRow: (row: SharingRow) => void): Promise<SharingRow[]> {
  const rows: SharingRow[] = [];
  for (const body of options.bodies) {
    for (const scenario of SCENARIOS) {
      const row = await runScenario(options, body, scenario);
      rows.push(row);
      onRow(row);
    }
  }
  return rows;
}

const f2 = (n: number) => n.toFixed(2);

/** " (HTTP 429 rate_limited ×3)" when Tollgate answered errors. */
const errorKinds = (r: LoadResult) =>
  r.errors
    ? ` (${Object.entries(r.errorKinds)
        .map(([kind, n]) => `${kind} ×${n}`)
        .join(', ')})`
    : '';

export function sharingTextRow(row: SharingRow): string {
  const { direct, through } = row;
  return [
    row.body.padEnd(6),
    row.scenario.padEnd(30),
    `tollgate ${through.requestsPerSecond.toFixed(0).padStart(6)} req/s p50 ${f2(through.p50).padStart(7)} p99 ${f2(through.p99).padStart(7)} ms`,
    `direct ${direct.requestsPerSecond.toFixed(0).padStart(6)} req/s`,
    `added p50 ${f2(through.p50 - direct.p50).padStart(6)} p99 ${f2(through.p99 - direct.p99).padStart(6)} ms`,
    `cpu ${row.cpuPerRequest.toFixed(3)} ms/req`,
    `peak RSS ${row.peakRssMb.map((mb) => mb.toFixed(0)).join(' + ')} MB`,
    `errors ${through.errors}/${direct.errors}${errorKinds(through)}`,
  ].join(' | ');
}

/**
 * Issue #19's question, from the rows of one body: the highest peak of each kind of instance
 * (the one that served the provisioning, and a plain one) over the scenarios, against the limit.
 */
export function footprintLines(rows: SharingRow[], connections: number): string[] {
  const lines = [
    `Footprint: peak RSS of one instance at ${connections} connections, the compiled build started by ${relative(ROOT, BIN)}: \`${startLine()}\` (limit ${FOOTPRINT_LIMIT_MB} MB):`,
  ];
  for (const body of [...new Set(rows.map((row) => row.body))]) {
    const ofBody = rows.filter((row) => row.body === body);
    const provisioner = Math.max(...ofBody.map((row) => row.peakRssMb[0]!));
    const plain = ofBody.flatMap((row) => row.peakRssMb.slice(1));
    const worst = Math.max(provisioner, ...plain);
    const verdict = worst <= FOOTPRINT_LIMIT_MB ? `within ${FOOTPRINT_LIMIT_MB} MB` : `OVER ${FOOTPRINT_LIMIT_MB} MB`;
    const plainText = plain.length > 0 ? `, a plain instance ${Math.max(...plain).toFixed(0)} MB` : '';
    lines.push(
      `- ${body}: the instance that served the provisioning (GraphQL loaded, passwords hashed) ${provisioner.toFixed(0)} MB${plainText}: ${verdict}`,
    );
  }
  return lines;
}

export function sharingTable(rows: SharingRow[], connections: number): string {
  const header = [
    'body',
    'scenario (compiled build)',
    `req/s (c=${connections})`,
    'p50 ms',
    'p99 ms',
    'added p50',
    'added p99',
    'direct req/s',
    'CPU ms/req',
    'peak RSS MB',
    'errors (tollgate/direct)',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < 2 ? '---|' : '--:|')).join('')}`];
  for (const row of rows) {
    const { direct, through } = row;
    lines.push(
      `| ${[
        row.body,
        row.scenario,
        through.requestsPerSecond.toFixed(0),
        f2(through.p50),
        f2(through.p99),
        f2(through.p50 - direct.p50),
        f2(through.p99 - direct.p99),
        direct.requestsPerSecond.toFixed(0),
        row.cpuPerRequest.toFixed(3),
        row.peakRssMb.map((mb) => mb.toFixed(0)).join(' + '),
        `${through.errors}/${direct.errors}`,
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
