/**
 * `npm run bench:instructions`: instructions per request, counted by valgrind (callgrind), for
 * an A/B of a change that a busy machine's CPU times cannot resolve. Wall-clock CPU per request
 * moves by 10–50 % from run to run on the shared two-core VM; an instruction count of the same
 * request path moves by about 1 %.
 *
 * Each build (this checkout, and INSTR_COMPARE=<checkout> beside it) is started as `npm start`
 * starts it (bin/tollgate's node flags and glibc settings) under `valgrind --tool=callgrind
 * --instr-atstart=no`, served INSTR_WARMUP_SECONDS of closed-loop load (JIT warm-up, leases,
 * pools), then counted over INSTR_SECONDS of load at INSTR_CONNECTIONS (default 16): every
 * thread's instructions (GC helpers included) between `callgrind_control -i on` and `-i off`,
 * divided by the requests answered in that window. Bodies: INSTR_BODIES (json,stream).
 * The count includes what the Node floor pays too (node:http, undici, JSON): compare builds,
 * not this figure with the floor's CPU time. PostgreSQL's part is not in it (another process).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from './load';
import { benchDatabase, provisionKey } from './provision';
import { gatewayEnv, ROOT, startCompiledGateway, stopGateway } from './sharing';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const WARMUP_SECONDS = Number(process.env.INSTR_WARMUP_SECONDS ?? 30);
const SECONDS = Number(process.env.INSTR_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.INSTR_CONNECTIONS ?? 16);
const BODIES = (process.env.INSTR_BODIES ?? 'json,stream').split(',') as ('json' | 'stream')[];

/** bin/tollgate's node flags and glibc settings, read from the script (what `npm start` runs). */
function startSettings(dir: string): { flags: string[]; glibc: string } {
  const script = readFileSync(join(dir, 'bin', 'tollgate'), 'utf8');
  const flags = /\$\{TOLLGATE_NODE_FLAGS-([^}]*)\}/.exec(script)?.[1] ?? '';
  const glibc = /^GLIBC_TUNABLES="([^$"]*)/m.exec(script)?.[1] ?? '';
  return { flags: flags.split(' ').filter(Boolean), glibc };
}

/** vgdb names its pipes after USER and HOST: callgrind_control runs with the gateway's environment (HOST is its listen address) to find them. */
function instrumentation(pid: number, state: 'on' | 'off', env: Record<string, string>): void {
  execFileSync('callgrind_control', ['-i', state, String(pid)], { stdio: 'ignore', env });
}

async function countBuild(label: string, dir: string, body: 'json' | 'stream', options: { databaseUrl: string; upstreamUrl: string }): Promise<{ requests: number; file: string }> {
  const out = `/tmp/tollgate-callgrind-${process.pid}-${Date.now()}.out`;
  const { flags, glibc } = startSettings(dir);
  const env = { ...gatewayEnv({ ...options, redisUrl: '' }, null), GLIBC_TUNABLES: glibc };
  const gateway = await startCompiledGateway(env, ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, ...flags, join(dir, 'dist', 'src', 'main.js'), 'start']);
  try {
    const token = await provisionKey(gateway.url);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const payload = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say something about foxes.' }], ...(body === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}) });
    const load = (seconds: number) => runLoad({ url: `${gateway.url}/v1/chat/completions`, headers, body: payload, connections: CONNECTIONS, durationMs: seconds * 1000, warmupMs: 0 });
    await load(WARMUP_SECONDS);
    instrumentation(gateway.child.pid!, 'on', env);
    const result = await load(SECONDS);
    instrumentation(gateway.child.pid!, 'off', env);
    if (result.errors > 0) console.log(`${label} ${body}: ${result.errors} errors in the window`);
    return { requests: result.totalRequests, file: out };
  } finally {
    await stopGateway(gateway);
  }
}

/** The instruction count callgrind wrote at exit (its `totals:` line: what was instrumented). */
function totalInstructions(file: string): number {
  const text = readFileSync(file, 'utf8');
  const match = /^totals: (\d+)/m.exec(text);
  if (!match) throw new Error(`no totals in ${file}`);
  return Number(match[1]);
}

async function main(): Promise<void> {
  const database = await benchDatabase(SERVER_URL);
  const upstreamChild = spawn(process.execPath, ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(__dirname, 'upstream-process.ts')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const upstream = await new Promise<{ url: string }>((resolve) => upstreamChild.once('message', (m) => resolve(m as { url: string })));
  const builds: [string, string][] = [['this build', ROOT], ...(process.env.INSTR_COMPARE ? [['compare', process.env.INSTR_COMPARE] as [string, string]] : [])];
  const lines: string[] = [];
  try {
    for (const body of BODIES) {
      const counts: number[] = [];
      for (const [label, dir] of builds) {
        const { requests, file } = await countBuild(label, dir, body, { databaseUrl: database.url, upstreamUrl: upstream.url });
        const perRequest = totalInstructions(file) / Math.max(1, requests);
        if (!process.env.INSTR_KEEP) rmSync(file);
        counts.push(perRequest);
        const line = `${body.padEnd(6)} | c=${CONNECTIONS} | ${label.padEnd(10)} | ${requests} requests counted | ${(perRequest / 1e6).toFixed(3)} M instructions per request`;
        lines.push(line);
        console.log(line);
      }
      if (counts.length === 2) {
        const line = `${body.padEnd(6)} | this build against compare: ${(((counts[0]! - counts[1]!) / counts[1]!) * 100).toFixed(1)} %`;
        lines.push(line);
        console.log(line);
      }
    }
  } finally {
    upstreamChild.disconnect();
    await database.drop();
  }
  console.log(['', ...lines].join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
