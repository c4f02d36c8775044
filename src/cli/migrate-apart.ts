import { spawn } from 'node:child_process';
import type { Logger } from 'pino';
import type { ApplyMigrations } from '../infra/database';

/**
 * Pending migrations applied by `tollgate migrate` in a child process, for `tollgate start`.
 * MikroORM's migrator (umzug, its command-line parser, ajv and the migration classes) runs once
 * at a start, but a module once loaded stays in memory for the life of the process: applied in
 * the gateway's own process, it would be held by every instance that migrated its database
 * (docs/performance.md, "Load only what serving uses"). The child is the same program with the
 * same node flags and environment, pointed at the same database; its failure is the start's.
 */
export function migrateInChildProcess(databaseUrl: string, log: Logger): ApplyMigrations {
  return async () => {
    // The inspector's port is the parent's: a child asking for it would fail to start.
    const nodeFlags = process.execArgv.filter((flag) => !flag.startsWith('--inspect'));
    const child = spawn(process.execPath, [...nodeFlags, require.resolve('../main'), 'migrate'], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    // `tollgate migrate` reports a failure as one line, `tollgate: <reason>`: the start's own.
    if (code !== 0) throw new Error(stderr.trim().replace(/^tollgate: /, '') || `tollgate migrate exited with code ${code}`);
    log.info({ migrations: stdout.trim() }, 'database migrated by tollgate migrate');
  };
}
