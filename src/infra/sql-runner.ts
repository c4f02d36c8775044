import { Pool } from 'pg';
import type { Logger } from 'pino';

/** SQL as named (prepared) statements, answered as rows. */
export interface SqlRunner {
  rows<T>(name: string, text: string, values: unknown[]): Promise<T[]>;
}

/**
 * The request path's own small pool of plain `pg` connections (budget leases), beside
 * MikroORM's: named statements are prepared once per connection, and nothing between the
 * call and the wire but `pg` itself.
 */
export function pgSqlRunner(databaseUrl: string, log: Logger, max = 4): SqlRunner & { close(): Promise<void> } {
  const pool = new Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', (err) => log.warn({ err }, 'idle billing connection failed'));
  return {
    rows: async <T>(name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as T[],
    close: () => pool.end(),
  };
}
