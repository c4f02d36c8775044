import type { MikroORM } from '@mikro-orm/postgresql';
import type { HoldClose, HoldClosed, HoldStore, HoldTake } from '../domain/billing/hold-store';
import type { RefusalReason } from '../domain/billing/hold-requests';
import { retryDeadlocks, sqlRows } from './sql';
import { extendHoldExpiry, releaseExpiredBatch } from './pg-hold-rows';

/** What tollgate_close_hold answers for a hold, and tollgate_apply_lease_ops for each operation (bigints as strings). */
export interface ClosedHoldRow {
  applied: boolean;
  account_id: string | null;
  plan_billed: boolean | null;
  balance_micro: string | null;
  threshold_micro: string | null;
}

const bigOrNull = (value: string | null): bigint | null => (value === null ? null : BigInt(value));

export const fromClosedHoldRow = (
  row: ClosedHoldRow,
): Pick<HoldClosed, 'applied' | 'accountId' | 'planBilled' | 'balanceMicro' | 'thresholdMicro'> => ({
  applied: row.applied,
  accountId: row.account_id,
  planBilled: row.plan_billed,
  balanceMicro: bigOrNull(row.balance_micro),
  thresholdMicro: bigOrNull(row.threshold_micro),
});

/** What tollgate_close_hold answers beyond a lease operation's result. */
interface CloseHoldRow extends ClosedHoldRow {
  charged_micro: string;
  overage_micro: string;
  hold_micro: string | null;
  key_id: string | null;
  model: string | null;
}

/**
 * Exact holds on PostgreSQL, one round trip each: tollgate_take_hold runs every conditional
 * UPDATE server-side, tollgate_close_hold claims the hold, gives back what it reserved and books
 * the charge, ledger row and usage record (migrations/functions/).
 */
export function pgHoldStore(orm: MikroORM): HoldStore {
  return {
    takeHold: (hold: HoldTake): Promise<RefusalReason | null> =>
      retryDeadlocks(async () => {
        const [row] = await sqlRows<{ refusal: RefusalReason | null }>(
          orm.em.fork(),
          'select tollgate_take_hold(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) as refusal',
          [
            hold.id,
            hold.accountId,
            hold.keyId,
            hold.planUserId,
            hold.month,
            hold.purpose,
            hold.model,
            hold.amountMicro.toString(),
            hold.expiresAt.toISOString(),
            hold.createdAt.toISOString(),
          ],
        );
        return row?.refusal ?? null;
      }),

    closeHold: (close: HoldClose): Promise<HoldClosed> =>
      retryDeadlocks(async () => {
        const u = close.usage;
        const [row] = await sqlRows<CloseHoldRow>(
          orm.em.fork(),
          'select * from tollgate_close_hold(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [
            close.holdId,
            close.status,
            close.costMicro.toString(),
            close.at.toISOString(),
            close.ledgerId,
            u?.id ?? null,
            u?.status ?? null,
            u?.requestId ?? null,
            u?.inputTokens ?? 0,
            u?.cachedInputTokens ?? 0,
            u?.cacheWrite5mInputTokens ?? 0,
            u?.cacheWrite1hInputTokens ?? 0,
            u?.outputTokens ?? 0,
            u?.reasoningTokens ?? 0,
            u?.images ?? 0,
            u?.videoSeconds ?? 0,
            u?.latencyMs ?? 0,
            u?.deployment ?? null,
          ],
        );
        return {
          ...fromClosedHoldRow(row!),
          chargedMicro: BigInt(row!.charged_micro),
          overageMicro: BigInt(row!.overage_micro),
          holdMicro: bigOrNull(row!.hold_micro),
          keyId: row!.key_id,
          model: row!.model,
        };
      }),

    extendExpiry: (holdId: string, expiresAt: Date): Promise<boolean> => extendHoldExpiry(orm.em.fork(), holdId, expiresAt),

    // A deadlock rolls the whole batch back, so running it again is safe.
    releaseExpired: (now: Date, limit: number): Promise<number> =>
      retryDeadlocks(() => orm.em.fork().transactional((tx) => releaseExpiredBatch(tx, now, limit))),
  };
}
