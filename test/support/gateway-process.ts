/**
 * A Tollgate alone in its own Node process, for tests that need plain Node module loading
 * (the OpenTelemetry exporter loads node:http with a dynamic import, which jest's module
 * sandbox refuses). Configured by its environment; sends `{port}` once listening and closes
 * (flushing what it buffers) on the message `stop`.
 */
import 'reflect-metadata';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { createTollgate } from '../../src/server';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const tollgate = await createTollgate({
    config,
    databaseUrl: process.env.DATABASE_URL!,
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }, pino.destination(2)),
  });
  const port = await tollgate.listen(0, '127.0.0.1');
  process.send?.({ port });
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'stop') return;
    void tollgate.close(2_000).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
