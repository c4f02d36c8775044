/**
 * `npm run bench:routing` (and the last part of `npm run bench`; BENCH_ROUTING=0 leaves it out
 * there): what routing costs. One gateway serves three models from the same fake upstream:
 *  - `bench/direct`: no deployments list, so its vendor's provider directly (every model of a
 *    catalog written before routing);
 *  - `bench/routed`: two healthy deployments (routing's happy path: ordering, affinity key,
 *    breaker check, the failover iterator around the stream);
 *  - `bench/failover`: a first deployment that answers 503 at once to every request (never
 *    cooled: TOLLGATE_ROUTING_FAILURES_TO_COOL=0), then a healthy one: every request pays
 *    exactly one failed attempt.
 * Closed loop, slices of the three alternating (the machine's speed drifts), JSON and streamed
 * bodies. Reported: req/s, p50/p99 and the gateway's CPU ms per request of each; routed − direct
 * CPU (the happy path's cost, against the spread between slices of one model: noise), and
 * failover − routed p50/p99 (what one failed attempt adds).
 *
 * Knobs: DATABASE_URL; BENCH_ROUTING_SECONDS per model, body and level (default 6);
 * BENCH_ROUTING_CONNECTIONS (default "1,16": latency added is read at the lowest, CPU at the
 * highest); BENCH_ROUTING_SLICES (default 4); BENCH_ROUTING_BODIES (default "json,stream").
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeLoadResults, runLoad, type LoadResult } from './load';
import { cpuMs } from './proc';
import { ADMIN_TOKEN, benchDatabase, provisionKey } from './provision';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_ROUTING_SECONDS ?? 6);
/** Closed-loop levels: at 1 connection latency is the path's own (no queueing), at 16 the CPU per request is steadier. */
const CONNECTIONS = (process.env.BENCH_ROUTING_CONNECTIONS ?? '1,16').split(',').map(Number);
const SLICES = Number(process.env.BENCH_ROUTING_SLICES ?? 4);
const BODIES = (process.env.BENCH_ROUTING_BODIES ?? 'json,stream').split(',') as ('json' | 'stream')[];
const REGISTER = join(__dirname, '..', 'test', 'support', 'swc-register.js');
const MODELS = ['bench/direct', 'bench/routed', 'bench/failover'] as const;
type ModelName = (typeof MODELS)[number];
const SYSTEM = { role: 'system', content: 'Be brief.' };
const QUESTION = { role: 'user', content: 'Say something about foxes.' };

function spawnChild<T>(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; message: T }> {
  const child = fork(join(__dirname, script), [], {
    execArgv: ['-r', REGISTER],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ child, message: message as T }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

function catalog(): unknown {
  const model = (id: string, deployments?: unknown[]) => ({
    kind: 'text',
    id,
    vendor: 'up_a',
    vendor_model_id: 'gpt-4o-mini',
    created: 1721260800,
    context_length: 128000,
    max_output_tokens: 4096,
    pricing: { input: '0.15', output: '0.60' },
    ...(deployments ? { deployments } : {}),
  });
  return {
    vendors: { up_a: { protocol: 'openai' }, up_b: { protocol: 'openai' }, up_down: { protocol: 'openai' } },
    models: [
      model('bench/direct'),
      model('bench/routed', [{ vendor: 'up_a' }, { vendor: 'up_b' }]),
      model('bench/failover', [
        { vendor: 'up_down', priority: 0 },
        { vendor: 'up_a', priority: 1 },
      ]),
    ],
  };
}

interface Measured {
  load: LoadResult;
  cpuPerRequest: number;
  /** CPU ms per request of each slice: their spread is the noise of this machine. */
  sliceCpu: number[];
}

export async function runRoutingBench(): Promise<string[]> {
  const database = await benchDatabase(SERVER_URL);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-routing-'));
  const file = join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify(catalog()));
  const healthy = await spawnChild<{ url: string }>('routing-upstream-process.ts', {});
  const failing = await spawnChild<{ url: string }>('routing-upstream-process.ts', { ROUTING_UPSTREAM_FAIL: '1' });
  const gateway = await spawnChild<{ port: number }>('gateway-process.ts', {
    DATABASE_URL: database.url,
    TOLLGATE_CATALOG: file,
    UP_A_API_KEY: 'sk-bench',
    UP_A_BASE_URL: healthy.message.url,
    UP_B_API_KEY: 'sk-bench',
    UP_B_BASE_URL: healthy.message.url,
    UP_DOWN_API_KEY: 'sk-bench',
    UP_DOWN_BASE_URL: failing.message.url,
    // The failing deployment is never cooled: every request pays its failed attempt.
    TOLLGATE_ROUTING_FAILURES_TO_COOL: '0',
    TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
  });
  const lines: string[] = [];
  const say = (line: string) => {
    console.log(line);
    lines.push(line);
  };
  try {
    const url = `http://127.0.0.1:${gateway.message.port}`;
    const tokens = await Promise.all(Array.from({ length: 8 }, () => provisionKey(url)));
    const headerSets = tokens.map((token) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` }));
    say(
      `Routing bench (busy machine: figures move between runs): closed loop at ${CONNECTIONS.join('/')} connections, ${SECONDS}s per model, body and level in ${SLICES} alternating slices`,
    );
    say('| body | c | model | req/s | p50 ms | p99 ms | CPU ms/req (slices) |');
    say('|---|---|---|---|---|---|---|');
    const verdicts: string[] = [];
    const lowest = Math.min(...CONNECTIONS);
    const highest = Math.max(...CONNECTIONS);
    for (const body of BODIES)
      for (const connections of CONNECTIONS) {
        const extra = body === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {};
        const parts = new Map<ModelName, { loads: LoadResult[]; cpu: number[] }>(MODELS.map((m) => [m, { loads: [], cpu: [] }]));
        // Slice -1 warms every path up (JIT, pools, leases) and is not counted.
        for (let slice = -1; slice < SLICES; slice++) {
          for (const model of MODELS) {
            const before = cpuMs(gateway.child.pid!);
            // Direct and routed: a system prompt and a question, so routing computes the conversation's
            // affinity key (one conversation, sticking to one deployment). Failover: the question
            // alone, with no affinity, so every request starts on the failing deployment.
            const messages = model === 'bench/failover' ? [QUESTION] : [SYSTEM, QUESTION];
            const result = await runLoad({
              url: `${url}/v1/chat/completions`,
              headers: headerSets[0]!,
              headerSets,
              body: JSON.stringify({ model, messages, ...extra }),
              connections,
              durationMs: (SECONDS * 1000) / SLICES,
              warmupMs: 300,
            });
            const after = cpuMs(gateway.child.pid!);
            if (slice < 0) continue;
            const part = parts.get(model)!;
            part.loads.push(result);
            part.cpu.push((after.user + after.system - before.user - before.system) / Math.max(1, result.totalRequests));
          }
        }
        const measured = new Map<ModelName, Measured>();
        for (const model of MODELS) {
          const part = parts.get(model)!;
          const load = mergeLoadResults(part.loads);
          const total = part.loads.reduce((n, l) => n + l.totalRequests, 0);
          const cpu = part.cpu.reduce((sum, c, i) => sum + c * part.loads[i]!.totalRequests, 0) / Math.max(1, total);
          measured.set(model, { load, cpuPerRequest: cpu, sliceCpu: part.cpu });
          say(
            `| ${body} | ${connections} | ${model} | ${load.requestsPerSecond.toFixed(0)}${load.errors ? ` (${load.errors} errors)` : ''} | ${load.p50.toFixed(2)} | ${load.p99.toFixed(2)} | ${cpu.toFixed(3)} (${part.cpu.map((c) => c.toFixed(3)).join(', ')}) |`,
          );
        }
        const direct = measured.get('bench/direct')!;
        const routed = measured.get('bench/routed')!;
        const failover = measured.get('bench/failover')!;
        const spread = (m: Measured) => Math.max(...m.sliceCpu) - Math.min(...m.sliceCpu);
        const noise = Math.max(spread(direct), spread(routed));
        const delta = routed.cpuPerRequest - direct.cpuPerRequest;
        if (connections === highest)
          verdicts.push(
            `${body}, c=${connections}: happy-path routing costs ${delta >= 0 ? '+' : ''}${delta.toFixed(3)} CPU ms/request against the direct path; slices of one model spread by up to ${noise.toFixed(3)} ms: ${Math.abs(delta) <= noise ? 'not distinguishable from noise' : 'MEASURABLE'}; one failed attempt costs ${(failover.cpuPerRequest - routed.cpuPerRequest).toFixed(3)} CPU ms more`,
          );
        if (connections === lowest)
          verdicts.push(
            `${body}, c=${connections}: one failed attempt (an immediate 503) adds p50 ${(failover.load.p50 - routed.load.p50).toFixed(2)} ms, p99 ${(failover.load.p99 - routed.load.p99).toFixed(2)} ms`,
          );
      }
    for (const verdict of verdicts) say(verdict);
  } finally {
    const exited = new Promise((resolve) => gateway.child.once('exit', resolve));
    gateway.child.disconnect();
    healthy.child.disconnect();
    failing.child.disconnect();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    await database.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (require.main === module && process.env.BENCH_ROUTING !== '0')
  void runRoutingBench().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
