import { DeadlockException, type EntityManager } from '@mikro-orm/postgresql';

// Raw statements of the PostgreSQL adapters (src/infra/pg-*.ts); the domain runs none (lint).

/** Parameters of a raw statement (money as decimal strings, never JS numbers). */
export type SqlParam = string | number | null;

/** Rows of a raw statement run in `tx` (placeholders `?`). */
export async function sqlRows<T>(tx: EntityManager, sql: string, params: SqlParam[]): Promise<T[]> {
  return (await tx.execute(sql, params, 'all')) as unknown as T[];
}

/** PostgreSQL aborted this transaction as a deadlock victim (through MikroORM, or `pg` directly). */
export const isDeadlock = (error: unknown): boolean =>
  error instanceof DeadlockException || (error as { code?: unknown } | null)?.code === '40P01';

const MAX_DEADLOCK_ATTEMPTS = 3;

/**
 * Runs `attemptOnce` again when PostgreSQL aborts it as a deadlock victim: a deadlock rolls the
 * whole transaction back, so nothing of it was committed and running it again is safe.
 */
export async function retryDeadlocks<T>(attemptOnce: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptOnce();
    } catch (error) {
      if (!isDeadlock(error) || attempt >= MAX_DEADLOCK_ATTEMPTS) throw error;
    }
  }
}
