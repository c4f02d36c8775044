import type { MikroORM } from '@mikro-orm/postgresql';
import type { KeyLimitSpend, SpendLimitStore } from '../domain/billing/spend-limit-store';
import { KeyEvent } from '../domain/keys/entities';
import { retryDeadlocks, sqlRows } from './sql';

/**
 * The SpendLimitStore on PostgreSQL: the conditional UPDATE on `key_month_spend.limit_reached_at`
 * lets exactly one transaction through per key and month.
 */
export function pgSpendLimitStore(orm: MikroORM): SpendLimitStore {
  return {
    recordLimitReached(keyId, month, at, firstEvent) {
      // A deadlock rolls the mark and its event back together, so running it again is safe.
      return retryDeadlocks(() =>
        orm.em.fork().transactional(async (tx) => {
          await tx.execute('insert into key_month_spend (key_id, month) values (?, ?) on conflict do nothing', [keyId, month], 'run');
          const [row] = await sqlRows<{ settled_micro: string; reserved_micro: string; limit_micro: string | null }>(
            tx,
            `select s.settled_micro, s.reserved_micro, k.monthly_spend_limit_micro as limit_micro
               from key_month_spend s join api_keys k on k.id = s.key_id where s.key_id = ? and s.month = ?`,
            [keyId, month],
          );
          const limitMicro = row?.limit_micro == null ? null : BigInt(row.limit_micro);
          const spend: KeyLimitSpend = { limitMicro, spentMicro: BigInt(row?.settled_micro ?? '0') + BigInt(row?.reserved_micro ?? '0') };
          if (limitMicro === null) return { spend, event: null };
          const first = await sqlRows(
            tx,
            'update key_month_spend set limit_reached_at = ? where key_id = ? and month = ? and limit_reached_at is null returning key_id',
            [at.toISOString(), keyId, month],
          );
          if (first.length === 0) return { spend, event: null };
          const event = firstEvent({ limitMicro, spentMicro: spend.spentMicro });
          tx.create(KeyEvent, {
            id: event.id,
            key: event.keyId,
            account: event.accountId,
            kind: event.kind,
            actorUserId: event.actorUserId,
            data: event.data,
            createdAt: event.createdAt,
          });
          await tx.flush();
          return { spend, event };
        }),
      );
    },
  };
}
