/** Child process of `npm run bench`: one Tollgate instance, alone in its process. */
import 'reflect-metadata';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createTollgate } from '../src/server';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const tollgate = await createTollgate({ config, databaseUrl: process.env.DATABASE_URL!, log: pino({ level: 'silent' }) });
  const port = await tollgate.listen(0, '127.0.0.1');
  process.send?.({ port });
  if (process.env.BENCH_LOOP_DELAY) {
    const { monitorEventLoopDelay } = require('node:perf_hooks');
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    setInterval(() => {
      if (h.max > 5e6) console.error(`loop delay max ${(h.max / 1e6).toFixed(1)} ms p99 ${(h.percentile(99) / 1e6).toFixed(2)} at ${new Date().toISOString()}`);
      h.reset();
    }, 1000).unref();
  }
  process.on('disconnect', () => void tollgate.close(2_000).finally(() => process.exit(0)));
}
void main();
