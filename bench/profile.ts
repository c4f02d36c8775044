/**
 * `npm run bench:profile`: where one instance's CPU goes under load, stage by stage.
 *
 * Starts the compiled build as `npm start` starts it (bin/tollgate; PROFILE_START=plain: plain
 * `node dist/src/main.js`), provisions the accounts, opens the inspector (SIGUSR1, on a free
 * port) and records a CPU profile (and, PROFILE_HEAP=1, an allocation sampling profile) over
 * PROFILE_SECONDS (default 20) of closed-loop load at PROFILE_CONNECTIONS (default 64) of
 * PROFILE_BODY (json or stream) chat, the accounts' keys in rotation. Writes the profiles to
 * /tmp/prof and prints:
 *  - the stages (docs/performance.md): each sample goes to the innermost frame of Tollgate's own
 *    code (or of a library it calls) on its stack, and that frame's file names its stage; a
 *    sample with none of those is the runtime's (node:http, sockets, undici, timers), which the
 *    Node floor pays too, or the garbage collector's;
 *  - the 30 functions with the most self time.
 * Samples are counts at the profiler's interval: the shares are what matters, not absolute time
 * (the inspector's session costs some CPU of its own).
 *
 * The inspector samples the main thread's wall time: on a busy machine a thread descheduled in a
 * system call (a loopback write wakes its reader) is counted there, so socket writes look larger
 * than their CPU. PROFILE_PERF=1 uses `perf record -e cpu-clock -g` instead (node flag
 * `--perf-basic-prof`): CPU-time samples of every thread (GC helpers, the kernel) summed by the
 * same stages, the kernel's part of each stage apart. PROFILE_TARGET=floor profiles the Node
 * floor (bench/node-floor.mjs) under the same load that way, for the floor's column.
 * PROFILE_WARM_SECONDS (default 3): unmeasured load first (at one connection the path takes
 * longer to be compiled). PROFILE_REDIS_URL: the gateway keeps its limits in that Redis.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startNodeFloor } from './cpu';
import { runLoad } from './load';
import { resetPeakRss } from './proc';
import { benchDatabase, provisionKey } from './provision';
import { buildGateway, gatewayEnv, ROOT, startCompiledGateway, startSettings, stopGateway } from './sharing';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 64);
const BODY = process.env.PROFILE_BODY === 'stream' ? 'stream' : 'json';
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 16);
const OUT = '/tmp/prof';
const WARM_MS = Number(process.env.PROFILE_WARM_SECONDS ?? 3) * 1000;
const REDIS_URL = process.env.PROFILE_REDIS_URL ?? '';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * The stage of a frame by its file, most specific first; null: not ours (look further up).
 * Libraries Tollgate calls count in the stage that calls them.
 */
const STAGES: [RegExp, string][] = [
  [/\/src\/rest\/auth|\/domain\/accounts\/auth|\/domain\/keys\//, 'authentication'],
  [/\/domain\/limits\/|\/infra\/redis-limit/, 'admission'],
  [
    /\/protocols\/[^/]+\/decode-|\/protocols\/(decode-fields|apply-field-policy|field-policy|cache-breakpoints)|\/generation\/(validate|rules|hints|vendor-only|prompt-size)|\/catalog\/|\/billing\/estimate|\/node_modules\/zod\//,
    'body decode and canonical rules',
  ],
  [/\/protocols\/[^/]+\/vendor-request/, 'vendor request encoding'],
  [/\/src\/providers\/|\/node_modules\/undici\//, 'vendor call (undici)'],
  [
    /\/protocols\/[^/]+\/(stream-decoder|encode-answer|stream-encoder)|\/protocols\/(collect|sse-parse|sse-write)/,
    'answer decoding and re-encoding',
  ],
  [/\/domain\/billing\/|\/infra\/pg-lease-store|\/infra\/sql-runner|\/node_modules\/pg[^/]*\//, 'settlement and its batching'],
  [/\/node_modules\/pino|\/node_modules\/sonic-boom|\/node_modules\/thread-stream/, 'the access log'],
  [/\/infra\/metric|\/node_modules\/prom-client\//, 'metrics'],
  [/\/domain\/generation\//, 'the pipeline'],
  [/\/src\/rest\//, 'the HTTP plane (text endpoints, errors, access log record)'],
  [/\/src\/|\/migrations\//, 'other Tollgate code'],
  [/\/node_modules\//, 'other libraries'],
];

/** Node's own HTTP and socket code: what the Node floor pays too. */
const RUNTIME_IO = /^node:(_http|http|net|_stream|stream|internal\/(streams|net|stream_base|http|timers|process\/task_queues))/;
const RUNTIME = 'runtime: node:http, sockets, timers (the floor pays these too)';

function stageOf(frame: CallFrame): string | null {
  if (!frame.url) return null;
  if (RUNTIME_IO.test(frame.url)) return RUNTIME;
  for (const [pattern, stage] of STAGES) if (pattern.test(frame.url)) return stage;
  return null;
}

export function summarize(profile: CpuProfile): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOfNode = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stageOfNode.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    let stage: string;
    if (frame.functionName === '(garbage collector)') stage = 'garbage collector';
    else if (frame.functionName === '(idle)' || frame.functionName === '(program)') stage = frame.functionName;
    else stage = stageOf(frame) ?? (parent.has(id) ? resolve(parent.get(id)!) : RUNTIME);
    stageOfNode.set(id, stage);
    return stage;
  };
  const stageTime = new Map<string, number>();
  const selfTime = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const stage = resolve(id);
    if (stage === '(idle)') return;
    busy += dt;
    stageTime.set(stage, (stageTime.get(stage) ?? 0) + dt);
    const frame = byId.get(id)!.callFrame;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules\/|src\/|dist\/)/, '$1')}:${frame.lineNumber + 1}`;
    selfTime.set(name, (selfTime.get(name) ?? 0) + dt);
  });
  const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)} %`;
  const lines = [`busy ${(busy / 1e6).toFixed(2)} s of samples (idle excluded)`, '', 'By stage:'];
  for (const [stage, t] of [...stageTime].sort((a, b) => b[1] - a[1])) lines.push(`  ${pct(t)}  ${stage}`);
  lines.push('', 'Top functions by self time:');
  for (const [name, t] of [...selfTime].sort((a, b) => b[1] - a[1]).slice(0, 30)) lines.push(`  ${pct(t)}  ${name}`);
  return lines;
}

/** V8's collector and its helper threads, by symbol (perf sees no JS frame there). */
const GC_SYMBOLS = /Scaveng|MarkCompact|ConcurrentMarking|Sweeper|MinorMC|Marking|Evacuat|GCTracer|Heap::/;

/** perf's sampling rate (perfRecord's -F), per second: a sample stands for 1000 / PERF_HZ ms of CPU. */
const PERF_HZ = 999;
const PERF_SAMPLE_MS = 1000 / PERF_HZ;

/**
 * `perf script -F comm,tid,ip,sym,dso` output summed by stage: each sample goes to the innermost
 * JS frame of Tollgate's code or of a library it calls (as summarize does); a sample whose leaf is
 * in the kernel counts as that stage's kernel part; samples with none of those frames are the
 * collector's, the kernel's or the runtime's.
 */
export function summarizePerf(text: string, requests: number): string[] {
  const stages = new Map<string, number>();
  let total = 0;
  for (const block of text.split('\n\n')) {
    const frames = block
      .split('\n')
      .slice(1)
      .map((line) => line.trim())
      .filter(Boolean);
    if (frames.length === 0) continue;
    total++;
    let stage: string | null = null;
    for (const frame of frames) {
      if (!frame.includes('JS:')) continue;
      const url = /(\/\S+\.m?js|node:\S+)/.exec(frame)?.[1] ?? '';
      stage = stageOf({ functionName: '', url: url.replace(/:\d+:\d+$/, ''), lineNumber: 0 });
      if (stage === RUNTIME) stage = null;
      if (stage) break;
    }
    const kernelLeaf = frames[0]!.includes('[kernel');
    if (!stage)
      stage = GC_SYMBOLS.test(frames.join(' ')) ? 'garbage collector' : kernelLeaf ? 'runtime: kernel (sockets, scheduling)' : RUNTIME;
    else if (kernelLeaf) stage += ' [kernel]';
    stages.set(stage, (stages.get(stage) ?? 0) + 1);
  }
  const msPerRequest = (n: number) => ((n * PERF_SAMPLE_MS) / requests).toFixed(4);
  const lines = [
    `${total} CPU-time samples (every thread, kernel included): ${msPerRequest(total)} CPU ms a request`,
    '',
    'By stage (share, and CPU ms a request):',
  ];
  for (const [stage, n] of [...stages].sort((a, b) => b[1] - a[1]))
    lines.push(`  ${((n / total) * 100).toFixed(1).padStart(5)} %  ${msPerRequest(n)}  ${stage}`);
  return lines;
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** Bytes allocated (sampled) by stage, as for CPU (innermost frame of ours decides), and by allocating function. */
export function summarizeHeap(head: HeapNode, requests: number): string[] {
  const byStage = new Map<string, number>();
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, inherited: string) => {
    const stage = stageOf(node.callFrame) ?? inherited;
    if (node.selfSize > 0) {
      total += node.selfSize;
      byStage.set(stage, (byStage.get(stage) ?? 0) + node.selfSize);
      const frame = node.callFrame;
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules\/|src\/|dist\/)/, '$1')}:${frame.lineNumber + 1}`;
      bySite.set(name, (bySite.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, stage);
  };
  walk(head, RUNTIME);
  const kb = (bytes: number) => `${(bytes / requests / 1024).toFixed(2).padStart(6)} KB/req`;
  const lines = [`allocated (sampled, collected objects included): ${kb(total)}`, '', 'By stage:'];
  for (const [stage, bytes] of [...byStage].sort((a, b) => b[1] - a[1])) lines.push(`  ${kb(bytes)}  ${stage}`);
  lines.push('', 'Top allocating functions:');
  for (const [name, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 30)) lines.push(`  ${kb(bytes)}  ${name}`);
  return lines;
}

/** Collections by kind from --trace-gc-nvp lines: count, pause, and what scavenges kept in the young generation and promoted per request. */
function summarizeGc(lines: string[], requests: number): string[] {
  const kinds = new Map<string, { n: number; pause: number; copied: number; promoted: number }>();
  for (const line of lines) {
    const field = (name: string) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    const kind = /\bgc=(\w+)/.exec(line)?.[1] ?? '?';
    const k = kinds.get(kind) ?? { n: 0, pause: 0, copied: 0, promoted: 0 };
    k.n++;
    k.pause += field('pause');
    k.copied += field('new_space_survived');
    k.promoted += field('promoted');
    kinds.set(kind, k);
  }
  return [...kinds].map(
    ([kind, k]) =>
      `gc ${kind}: ${k.n} (${((k.n / requests) * 1000).toFixed(2)} per 1,000 requests), pause ${((k.pause / requests) * 1000).toFixed(1)} µs/req, survived ${(k.copied / requests / 1024).toFixed(2)} KB/req, promoted ${(k.promoted / requests / 1024).toFixed(2)} KB/req`,
  );
}

/** Resident memory by kind (/proc) and V8's heap spaces (through the inspector), in MB. */
async function memoryReport(session: Awaited<ReturnType<typeof inspect>>, pid: number): Promise<string[]> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  const evaluated = await session.post('Runtime.evaluate', {
    expression:
      "JSON.stringify(process.mainModule.require('v8').getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size, s.space_used_size]))",
    returnByValue: true,
  });
  const spaces = JSON.parse(evaluated.result.value as string) as [string, number, number][];
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  const heap = spaces.reduce((sum, [, size]) => sum + size, 0);
  return [
    '',
    `memory now: RSS ${kb('VmRSS').toFixed(1)} MB (peak in the window ${kb('VmHWM').toFixed(1)}): anonymous ${kb('RssAnon').toFixed(1)}, file-backed ${kb('RssFile').toFixed(1)}; V8 heap committed ${mb(heap)} MB`,
    ...spaces
      .filter(([, size]) => size > 0)
      .map(([name, size, used]) => `  ${name.padEnd(28)} ${mb(size).padStart(6)} MB committed, ${mb(used).padStart(6)} MB used`),
  ];
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
async function inspect(port: number) {
  let targets: { webSocketDebuggerUrl: string }[] = [];
  for (let i = 0; i < 50 && targets.length === 0; i++) {
    targets = await fetch(`http://127.0.0.1:${port}/json/list`).then(
      (r) => r.json() as Promise<typeof targets>,
      () => [],
    );
    if (targets.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let next = 0;
  const pending = new Map<number, (result: any) => void>();
  const snapshotChunks: string[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; method?: string; params?: { chunk: string } };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
    else if (message.method === 'HeapProfiler.addHeapSnapshotChunk') snapshotChunks.push(message.params!.chunk);
  });
  const post = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    post,
    close: () => socket.close(),
    /** A heap snapshot (after the full collection it begins with), as V8's JSON text. */
    snapshot: async () => {
      snapshotChunks.length = 0;
      await post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      return snapshotChunks.join('');
    },
  };
}

/** Live objects of a heap snapshot counted by constructor: the largest counts, and their shallow bytes. */
function summarizeSnapshot(text: string, inFlight: number): string[] {
  const snapshot = JSON.parse(text) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const objectType = snapshot.snapshot.meta.node_types[0].indexOf('object');
  const byName = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    if (snapshot.nodes[i + typeAt] !== objectType) continue;
    const name = snapshot.strings[snapshot.nodes[i + nameAt]!]!;
    const entry = byName.get(name) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snapshot.nodes[i + sizeAt]!;
    byName.set(name, entry);
  }
  return [
    `Live objects by constructor (${inFlight} requests in flight), the 40 commonest:`,
    ...[...byName]
      .sort((a, b) => b[1].count - a[1].count)
      .slice(0, 40)
      .map(([name, e]) => `  ${String(e.count).padStart(8)}  ${(e.bytes / 1024).toFixed(0).padStart(7)} KB  ${name.slice(0, 80)}`),
  ];
}

/** PROFILE_PERF=1 (or PROFILE_TARGET=floor): CPU-time samples with perf rather than the inspector's wall-time ones. */
const PERF = process.env.PROFILE_PERF === '1' || process.env.PROFILE_TARGET === 'floor';

/** `perf record` of a process for `seconds`; resolves with the perf script text once done. */
function perfRecord(pid: number, seconds: number, out: string): Promise<string> {
  const perf = spawn(
    'perf',
    ['record', '-F', String(PERF_HZ), '-e', 'cpu-clock', '-g', '-p', String(pid), '-o', out, '--', 'sleep', String(seconds)],
    { stdio: 'ignore' },
  );
  return new Promise((resolve, reject) => {
    perf.once('error', reject);
    perf.once('exit', () =>
      resolve(
        execFileSync('perf', ['script', '-i', out, '-F', 'comm,tid,ip,sym,dso'], {
          maxBuffer: 1 << 30,
          stdio: ['ignore', 'pipe', 'ignore'],
        }).toString(),
      ),
    );
  });
}

/** PROFILE_TARGET=floor: the Node floor under the same load, profiled with perf (the stage table's floor column). */
async function profileFloor(upstreamUrl: string): Promise<void> {
  // PROFILE_GC_TRACE=1: V8's line per collection too, on the floor's stdout (PROFILE_FLOOR_FLAGS:
  // node flags for it, e.g. npm start's young generation, to compare its collections with ours).
  const floor = await startNodeFloor(new URL(upstreamUrl).origin, [
    '--perf-basic-prof',
    ...(process.env.PROFILE_GC_TRACE ? ['--trace-gc-nvp'] : []),
    ...(process.env.PROFILE_FLOOR_FLAGS ?? '').split(' ').filter(Boolean),
  ]);
  try {
    const body = JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say something about foxes.' }],
      ...(BODY === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
    const load = (durationMs: number) =>
      runLoad({
        url: `http://127.0.0.1:${floor.port}/v1/chat/completions`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body,
        connections: CONNECTIONS,
        durationMs,
        warmupMs: 0,
      });
    await load(WARM_MS);
    mkdirSync(OUT, { recursive: true });
    const recorded = perfRecord(floor.child.pid!, SECONDS, join(OUT, `floor-${BODY}-c${CONNECTIONS}-${Date.now()}.perf.data`));
    const result = await load(SECONDS * 1000);
    console.log(
      `node floor, ${BODY} at c=${CONNECTIONS}, ${SECONDS} s: ${result.requestsPerSecond.toFixed(0)} req/s, ${result.errors} errors`,
    );
    for (const line of summarizePerf(await recorded, result.totalRequests)) console.log(line);
  } finally {
    floor.child.disconnect();
  }
}

async function main(): Promise<void> {
  if (process.env.PROFILE_TARGET === 'floor') {
    const upstreamChild = spawn(
      process.execPath,
      ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(__dirname, 'upstream-process.ts')],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    const upstream = await new Promise<{ url: string }>((resolve) => upstreamChild.once('message', (m) => resolve(m as { url: string })));
    await profileFloor(upstream.url).finally(() => upstreamChild.disconnect());
    return;
  }
  if (process.env.BENCH_SHARING_BUILD !== '0') buildGateway();
  const database = await benchDatabase(SERVER_URL);
  const upstreamChild = spawn(
    process.execPath,
    ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(__dirname, 'upstream-process.ts')],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const upstream = await new Promise<{ url: string }>((resolve) => upstreamChild.once('message', (m) => resolve(m as { url: string })));
  const inspectorPort = await freePort();
  const options = { databaseUrl: database.url, upstreamUrl: upstream.url, redisUrl: REDIS_URL };
  const plain = process.env.PROFILE_START === 'plain';
  const env = gatewayEnv(options, REDIS_URL ? `tollgate:profile-${Date.now()}:` : null);
  // PROFILE_GC_TRACE=1: V8's line per collection (--trace-gc-nvp) during the load, summed.
  const gcTrace = `${process.env.PROFILE_GC_TRACE ? ' --trace-gc-nvp' : ''}${PERF ? ' --perf-basic-prof' : ''}`;
  // npm start's own flags, read from bin/tollgate (TOLLGATE_NODE_FLAGS replaces them, as there), plus the profile's.
  const flags = `${startSettings().nodeFlags.join(' ')} --inspect-port=127.0.0.1:${inspectorPort}${gcTrace}`;
  const gateway = plain
    ? await startCompiledGateway(env, [
        process.execPath,
        `--inspect-port=127.0.0.1:${inspectorPort}`,
        ...gcTrace.split(' ').filter(Boolean),
        join(ROOT, 'dist', 'src', 'main.js'),
        'start',
      ])
    : await startCompiledGateway({ ...env, TOLLGATE_NODE_FLAGS: flags });
  try {
    const tokens = await Promise.all(Array.from({ length: ACCOUNTS }, () => provisionKey(gateway.url)));
    const headerSets = tokens.map((token) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` }));
    const messages = [{ role: 'user', content: 'Say something about foxes.' }];
    const body = JSON.stringify({
      model: 'openai/gpt-4o-mini',
      messages,
      ...(BODY === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
    const load = (durationMs: number) =>
      runLoad({
        url: `${gateway.url}/v1/chat/completions`,
        headers: headerSets[0]!,
        headerSets,
        body,
        connections: CONNECTIONS,
        durationMs,
        warmupMs: 0,
      });
    await load(WARM_MS); // warm: compiled code, leases, pools
    const gcLines: string[] = [];
    if (process.env.PROFILE_GC_TRACE)
      gateway.child.stdout!.on('data', (chunk: Buffer) =>
        gcLines.push(
          ...String(chunk)
            .split('\n')
            .filter((line) => line.includes('gc=')),
        ),
      );
    process.kill(gateway.child.pid!, 'SIGUSR1');
    const session = await inspect(inspectorPort);
    // PROFILE_CPU=0: no V8 CPU profile (its sampler costs CPU of its own: measuring with perf, say).
    const cpuProfile = process.env.PROFILE_CPU !== '0' && !PERF;
    if (cpuProfile) {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    }
    // PROFILE_HEAP=promoted: only what outlived the young generation (collected by a scavenge: left
    // out), that is what a request makes the old generation hold and a full collection free.
    if (process.env.PROFILE_HEAP)
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: process.env.PROFILE_HEAP !== 'promoted',
      });
    // PROFILE_RETAINED=1: what requests in flight hold: sampled allocations still alive after a
    // full collection taken while the load runs (the sampler forgets collected objects).
    let retained: HeapNode | null = null;
    if (process.env.PROFILE_RETAINED) {
      await session.post('HeapProfiler.startSampling', { samplingInterval: 1024 });
      setTimeout(
        () => {
          void (async () => {
            await session.post('HeapProfiler.collectGarbage');
            retained = (await session.post('HeapProfiler.stopSampling')).profile.head;
          })();
        },
        SECONDS * 1000 - 1_000,
      );
    }
    // PROFILE_SNAPSHOT=1: a heap snapshot halfway through the load, live objects counted by
    // constructor: a count well above the requests in flight is state something holds too long.
    let snapshotLines: string[] = [];
    if (process.env.PROFILE_SNAPSHOT)
      setTimeout(
        () =>
          void session.snapshot().then((text) => {
            writeFileSync(join(OUT, `snapshot-${Date.now()}.heapsnapshot`), text);
            snapshotLines = summarizeSnapshot(text, CONNECTIONS);
          }),
        (SECONDS * 1000) / 2,
      );
    // PROFILE_MEMORY=1: where the resident memory is, sampled near the end of the load.
    let memory: string[] = [];
    if (process.env.PROFILE_MEMORY) {
      resetPeakRss(gateway.child.pid!);
      setTimeout(() => void memoryReport(session, gateway.child.pid!).then((lines) => (memory = lines)), SECONDS * 1000 - 1_500);
    }
    const perfText = PERF
      ? (mkdirSync(OUT, { recursive: true }),
        perfRecord(gateway.child.pid!, SECONDS, join(OUT, `${BODY}-c${CONNECTIONS}-${Date.now()}.perf.data`)))
      : null;
    const result = await load(SECONDS * 1000);
    const profile = cpuProfile ? (await session.post('Profiler.stop')).profile : null;
    mkdirSync(OUT, { recursive: true });
    const stamp = `${BODY}-c${CONNECTIONS}-${plain ? 'plain' : 'npm-start'}-${Date.now()}`;
    if (profile) writeFileSync(join(OUT, `${stamp}.cpuprofile`), JSON.stringify(profile));
    const heap = process.env.PROFILE_HEAP ? (await session.post('HeapProfiler.stopSampling')).profile : null;
    if (heap) writeFileSync(join(OUT, `${stamp}.heapprofile`), JSON.stringify(heap));
    session.close();
    console.log(
      `${BODY} at c=${CONNECTIONS}, ${SECONDS} s: ${result.requestsPerSecond.toFixed(0)} req/s, ${result.errors} errors; profile in ${join(OUT, `${stamp}.cpuprofile`)}`,
    );
    if (profile) for (const line of summarize(profile as CpuProfile)) console.log(line);
    if (perfText) for (const line of summarizePerf(await perfText, result.totalRequests)) console.log(line);
    if (process.env.PROFILE_GC_TRACE) {
      // The raw lines too (V8's name=value pairs per collection: sizes, rates, each phase's time).
      writeFileSync(join(OUT, `${stamp}.gc.txt`), gcLines.join('\n'));
      for (const line of ['', ...summarizeGc(gcLines, result.totalRequests), `raw: ${join(OUT, `${stamp}.gc.txt`)}`]) console.log(line);
    }
    if (heap) for (const line of ['', ...summarizeHeap(heap.head as HeapNode, result.totalRequests)]) console.log(line);
    for (const line of memory) console.log(line);
    for (const line of snapshotLines) console.log(line);
    if (retained)
      for (const line of [
        '',
        `Retained with ${CONNECTIONS} requests in flight (per request in flight, caches included):`,
        ...summarizeHeap(retained, CONNECTIONS),
      ])
        console.log(line);
  } finally {
    await stopGateway(gateway);
    upstreamChild.disconnect();
    await database.drop();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
