#!/usr/bin/env node
import { mkdir } from 'node:fs/promises';
import pino from 'pino';
import { ConfigError, loadConfig } from './config';
import { readDemoCredentials, seedDemoOnFirstStart, type DemoCredentials } from './infra/demo-seed';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './infra/embedded-postgres';
import { createTollgate } from './server';

function printWelcome(port: number, demo: DemoCredentials | null, fresh: boolean, dataDir: string): void {
  const base = `http://localhost:${port}`;
  const lines = [`Tollgate is listening on ${base}`];
  if (demo) {
    lines.push(
      fresh ? 'First start: seeded a demo account with $25 of sandbox credit.' : `Demo account (credentials in ${dataDir}/demo-credentials.json):`,
      `  user:     ${demo.email}  password: ${demo.password}`,
      `  session:  ${demo.session_token}`,
      `  API key:  ${demo.api_key}`,
      'Try it:',
      `  curl -s ${base}/v1/models -H "Authorization: Bearer ${demo.api_key}"`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: undefined });
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    await mkdir(config.dataDir, { recursive: true });
    embedded = await startEmbeddedPostgres(config.dataDir, (line) => log.debug({ postgres: line }));
    databaseUrl = embedded.url;
    log.info({ data_dir: config.dataDir, port: embedded.port }, 'embedded PostgreSQL started');
  }
  const tollgate = await createTollgate({ config, databaseUrl, log });
  const seeded = await seedDemoOnFirstStart(tollgate.services, config.dataDir);
  const port = await tollgate.listen(config.port, config.host);
  printWelcome(port, seeded ?? (embedded ? await readDemoCredentials(config.dataDir) : null), seeded !== null, config.dataDir);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    await tollgate.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `Configuration error: ${error.message}` : error instanceof Error ? error.message : String(error);
  process.stderr.write(`tollgate: ${message}\n`);
  if (!(error instanceof ConfigError) && process.env.LOG_LEVEL === 'debug') console.error(error);
  process.exit(1);
});
