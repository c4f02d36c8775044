import type { Config } from '../config';
import { AccountService } from '../domain/accounts/service';
import { PgAccountStore } from '../infra/pg-account-store';
import { systemClock } from '../domain/shared/clock';
import { ulidIds } from '../domain/shared/ids';
import { connectCommandDatabase } from './database';

/** `tollgate migrate`: applies pending migrations, writes the configured plans, and says what it did. */
export async function runMigrate(config: Config, out: NodeJS.WritableStream): Promise<void> {
  const db = await connectCommandDatabase(config);
  try {
    const applied = await db.orm.getMigrator().up();
    await new AccountService(new PgAccountStore(db.orm), systemClock, ulidIds(), undefined, config.limits).syncPlans();
    out.write(
      applied.length === 0
        ? 'Database is up to date: no pending migration.\n'
        : `Applied ${applied.length} migration(s): ${applied.map((m) => m.name).join(', ')}\n`,
    );
    out.write(`Plans written: ${config.limits.plans.map((p) => p.name).join(', ') || '(none configured)'}\n`);
  } finally {
    await db.close();
  }
}
