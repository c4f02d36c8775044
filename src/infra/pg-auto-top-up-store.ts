import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Account } from '../domain/accounts/entities';
import type { AccountCredit } from '../domain/accounts/store';
import type { AutoTopUpSettings, AutoTopUpStore, TopUpAccount } from '../domain/billing/auto-top-up';
import { LedgerEntry } from '../domain/billing/entities';
import { sqlRows } from './sql';

const LOCK_RETRY_MS = 15;

/**
 * Automatic top-up on PostgreSQL. The account's top-up lock is a transaction-scoped advisory
 * lock (`pg_try_advisory_xact_lock`), so commit releases it and it is not a row lock:
 * reservations and settlements of the account go on while the payment call runs. An attempt
 * that finds the lock taken does not wait inside a transaction (it would pin a pool connection);
 * it retries shortly, because the holder may have read the balance before our settlement
 * committed. There is no deadlock retry around the locked work: it calls the payment provider,
 * and running it again would charge twice.
 */
export function pgAutoTopUpStore(orm: MikroORM): AutoTopUpStore {
  async function attempt<T>(
    accountId: string,
    work: (account: TopUpAccount | null, credit: (credit: AccountCredit) => Promise<boolean>) => Promise<T>,
  ): Promise<{ busy: true } | { busy: false; result: T }> {
    return orm.em.fork().transactional(async (tx) => {
      const [lock] = await sqlRows<{ locked: boolean }>(tx, 'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked', [
        `tollgate:auto-top-up:${accountId}`,
      ]);
      if (!lock?.locked) return { busy: true } as const;
      const account = await tx.findOne(Account, accountId, { fields: ['balanceMicro', 'autoTopUpThresholdMicro', 'autoTopUpAmountMicro'] });
      const read = account && {
        balanceMicro: account.balanceMicro,
        settings: { thresholdMicro: account.autoTopUpThresholdMicro, amountMicro: account.autoTopUpAmountMicro },
      };
      return { busy: false, result: await work(read, (credit) => creditAccount(tx, credit)) } as const;
    });
  }

  return {
    async underTopUpLock(accountId, maxWaitMs, work) {
      const deadline = Date.now() + maxWaitMs;
      for (;;) {
        const outcome = await attempt(accountId, work);
        if (!outcome.busy) return { busy: false, result: outcome.result };
        if (Date.now() >= deadline) return { busy: true };
        await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS + Math.random() * LOCK_RETRY_MS));
      }
    },

    async saveSettings(accountId: string, settings: AutoTopUpSettings): Promise<boolean> {
      const updated = await orm.em
        .fork()
        .nativeUpdate(
          Account,
          { id: accountId },
          { autoTopUpThresholdMicro: settings.thresholdMicro, autoTopUpAmountMicro: settings.amountMicro },
        );
      return updated > 0;
    },
  };
}

/**
 * Adds money to an account inside the caller's transaction: the balance and (for top-ups) the
 * lifetime total that drives the tier in one conditional UPDATE, then the ledger row; false
 * (nothing written) when there is no such account. Automatic top-ups (above) and the account
 * store's operator top-ups (pg-account-store.ts) both credit through it.
 */
export async function creditAccount(tx: EntityManager, credit: AccountCredit): Promise<boolean> {
  const { accountId, amountMicro, kind } = credit;
  const lifetime = kind === 'top_up' || kind === 'auto_top_up' ? amountMicro : 0n;
  // tx.execute runs inside the caller's transaction (tx.getConnection().execute would not).
  const updated = await tx.execute(
    'update accounts set balance_micro = balance_micro + ?, lifetime_top_ups_micro = lifetime_top_ups_micro + ? where id = ?',
    [amountMicro.toString(), lifetime.toString(), accountId],
    'run',
  );
  if ((updated as { affectedRows?: number }).affectedRows === 0) return false;
  tx.create(LedgerEntry, { id: credit.ledgerId, account: accountId, kind, amountMicro, note: credit.note, createdAt: credit.at });
  await tx.flush();
  return true;
}
