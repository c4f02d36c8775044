/**
 * Child process of `npm run bench`: one Tollgate instance, alone in its process. By default the
 * compiled build (dist/, as `npm start` runs it; the runner builds it and gives this process
 * bin/tollgate's node flags and glibc settings); BENCH_FROM_SOURCE=1: the TypeScript sources.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import pino from 'pino';
import type * as ConfigModule from '../src/config';
import type * as ServerModule from '../src/server';

const FROM = process.env.BENCH_FROM_SOURCE === '1' ? join(__dirname, '..', 'src') : join(__dirname, '..', 'dist', 'src');
const { loadConfig } = require(join(FROM, 'config')) as typeof ConfigModule;
const { createTollgate } = require(join(FROM, 'server')) as typeof ServerModule;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const tollgate = await createTollgate({
    config,
    databaseUrl: process.env.DATABASE_URL!,
    log: pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }, pino.destination(2)),
  });
  const port = await tollgate.listen(0, '127.0.0.1');
  process.send?.({ port });
  if (process.env.BENCH_LOOP_DELAY) {
    const { monitorEventLoopDelay } = require('node:perf_hooks');
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    setInterval(() => {
      if (h.max > 5e6)
        console.error(
          `loop delay max ${(h.max / 1e6).toFixed(1)} ms p99 ${(h.percentile(99) / 1e6).toFixed(2)} at ${new Date().toISOString()}`,
        );
      h.reset();
    }, 1000).unref();
  }
  // GC pauses, read by the runner around each through-Tollgate slice ('gc-read' resets them).
  const noPauses = () => ({ scavenges: 0, scavengeMs: 0, scavengeMaxMs: 0, fullGcs: 0, fullGcMs: 0 });
  const gc = noPauses();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        gc.scavenges++;
        gc.scavengeMs += entry.duration;
        gc.scavengeMaxMs = Math.max(gc.scavengeMaxMs, entry.duration);
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.fullGcs++;
        gc.fullGcMs += entry.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'gc-read') return;
    process.send?.({ type: 'gc', ...gc });
    Object.assign(gc, noPauses());
  });
  // BENCH_HEAP_PROFILE: every allocation site, collected objects included (what drives the scavenges).
  let writeHeapProfile = async () => undefined as void;
  if (process.env.BENCH_HEAP_PROFILE) {
    const { Session } = require('node:inspector') as typeof import('node:inspector');
    const session = new Session();
    session.connect();
    const post = (method: string, params?: object) =>
      new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
    await post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    writeHeapProfile = async () => {
      const { profile } = await post('HeapProfiler.stopSampling');
      require('node:fs').mkdirSync('/tmp/prof', { recursive: true });
      require('node:fs').writeFileSync(`/tmp/prof/gateway-${process.pid}.heapprofile`, JSON.stringify(profile));
    };
  }
  process.on('disconnect', () => void writeHeapProfile().finally(() => tollgate.close(2_000).finally(() => process.exit(0))));
}
void main();
