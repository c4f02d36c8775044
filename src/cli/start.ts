import { mkdir } from 'node:fs/promises';
import type { Config } from '../config';
import { Account } from '../domain/accounts/entities';
import { readDemoCredentials, seedDemoOnFirstStart, type DemoCredentials } from '../infra/demo-seed';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../infra/embedded-postgres';
import { createLogger } from '../infra/logger';
import { createTollgate } from '../server';
import { migrateInChildProcess } from './migrate-apart';

/** What the first lines of output tell the operator once the gateway listens. */
export type StartNotice =
  { kind: 'demo'; demo: DemoCredentials; fresh: boolean; dataDir: string } | { kind: 'no-accounts' } | { kind: 'none' };

export function welcomeText(port: number, notice: StartNotice): string {
  const base = `http://localhost:${port}`;
  const lines = [`Tollgate is listening on ${base}`];
  if (notice.kind === 'demo') {
    const { demo } = notice;
    lines.push(
      notice.fresh
        ? 'First start: seeded a demo account with $25 of sandbox credit.'
        : `Demo account (credentials in ${notice.dataDir}/demo-credentials.json):`,
      `  user:     ${demo.email}  password: ${demo.password}`,
      `  session:  ${demo.session_token}`,
      `  API key:  ${demo.api_key}`,
      'Try it:',
      `  curl -s ${base}/v1/models -H "Authorization: Bearer ${demo.api_key}"`,
    );
  } else if (notice.kind === 'no-accounts') {
    lines.push(
      'This database has no account yet. Create the first one with the same DATABASE_URL, for example:',
      '  npm run tollgate -- admin create-account --name "My team"',
      '(then add-funds and create-key; see docs/operator.md).',
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * `tollgate start`: the embedded PostgreSQL when DATABASE_URL is absent (seeded with a demo
 * account on its first start), the operator's own database otherwise (never seeded: a demo
 * user with a printed password does not belong in a real deployment). Resolves once listening;
 * SIGTERM/SIGINT drain and exit.
 */
export async function startGateway(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    await mkdir(config.dataDir, { recursive: true });
    embedded = await startEmbeddedPostgres(config.dataDir, (line) => log.debug({ postgres: line }));
    databaseUrl = embedded.url;
    log.info({ data_dir: config.dataDir, port: embedded.port }, 'embedded PostgreSQL started');
  }
  let tollgate;
  try {
    tollgate = await createTollgate({ config, databaseUrl, log, applyMigrations: migrateInChildProcess(databaseUrl, log) });
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  let notice: StartNotice = { kind: 'none' };
  if (embedded) {
    const seeded = await seedDemoOnFirstStart(tollgate.services, config.dataDir);
    const demo = seeded ?? (await readDemoCredentials(config.dataDir));
    if (demo) notice = { kind: 'demo', demo, fresh: seeded !== null, dataDir: config.dataDir };
  } else if ((await tollgate.services.orm.em.fork().count(Account, {})) === 0) {
    notice = { kind: 'no-accounts' };
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    await tollgate.close();
    await embedded?.stop();
    log.info(
      { signal },
      `stopped: requests drained; video workers, database connections${embedded ? ' and the embedded PostgreSQL' : ''} closed`,
    );
    process.exit(0);
  };
  // Before the welcome: whoever reads it may signal at once (a supervisor, a test).
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  let port: number;
  try {
    port = await tollgate.listen(config.port, config.host);
  } catch (error) {
    await tollgate.close(0);
    await embedded?.stop();
    throw listenFailure(error, config.host, config.port);
  }
  process.stdout.write(welcomeText(port, notice));
}

/** Why the gateway could not listen, in one line naming the variables to change. */
function listenFailure(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new Error(`port ${port} on ${host} is already in use (by another Tollgate?): stop it, or set PORT to a free port`);
  if (code === 'EACCES') return new Error(`not allowed to listen on port ${port} on ${host}: set PORT to a port above 1023`);
  if (code === 'EADDRNOTAVAIL') return new Error(`${host} is not an address of this machine: set HOST`);
  return error instanceof Error ? error : new Error(String(error));
}
