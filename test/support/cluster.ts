import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { createTestDatabase } from './database';
import { ADMIN_TOKEN } from './tollgate';

/**
 * Several real Tollgate processes (src/main.ts, as `npm start` runs it, through swc) on one
 * PostgreSQL database and one Redis, as a platform team runs them behind a load balancer.
 */

const ROOT = resolve(__dirname, '../..');
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Instance {
  url: string;
  process: ChildProcess;
  output(): string;
  /** SIGTERM (drains) and waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: the process dies mid-whatever, as in a crash. */
  kill(): Promise<void>;
}

export interface Cluster {
  databaseUrl: string;
  instances: Instance[];
  /** One more instance; `env` adds to the cluster's settings for this one. */
  start(env?: Record<string, string>): Promise<Instance>;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** Starts `count` instances; `env` adds to the shared settings (short lease TTL and sweep for fault tests). */
export async function startCluster(count: number, env: Record<string, string> = {}): Promise<Cluster> {
  const db = await createTestDatabase();
  const prefix = `tollgate:cluster-${randomBytes(4).toString('hex')}:`;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-'));
  const instances: Instance[] = [];
  const stopping = new Set<ChildProcess>();

  const start = async (extraEnv: Record<string, string> = {}): Promise<Instance> => {
    const child = spawn(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: db.url,
        REDIS_URL,
        TOLLGATE_REDIS_KEY_PREFIX: prefix,
        TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        TOLLGATE_DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
        ...env,
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    // A process that dies on its own is a finding: say so with what it printed.
    child.once('exit', (code, signal) => {
      if (!stopping.has(child)) process.stderr.write(`tollgate instance exited on its own (${code ?? signal}):\n${output.slice(-4000)}\n`);
    });
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`instance did not start in 60 s:\n${output}`)), 60_000);
      const look = () => {
        const match = /listening on http:\/\/localhost:(\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolveUrl(`http://127.0.0.1:${match[1]}`);
        }
      };
      child.stdout!.on('data', look);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`instance exited (${code}) before listening:\n${output}`));
      });
    });
    const instance: Instance = {
      url,
      process: child,
      output: () => output,
      stop: async () => {
        stopping.add(child);
        child.kill('SIGTERM');
        await exited(child);
      },
      kill: async () => {
        stopping.add(child);
        child.kill('SIGKILL');
        await exited(child);
      },
    };
    instances.push(instance);
    return instance;
  };

  // The first instance migrates the empty database; the others start on a migrated one.
  await start();
  await Promise.all(Array.from({ length: count - 1 }, () => start()));
  return {
    databaseUrl: db.url,
    instances,
    start,
    stop: async () => {
      await Promise.all(instances.map((i) => i.stop()));
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
}
