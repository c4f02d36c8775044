import type { MikroORM } from '@mikro-orm/postgresql';
import { creditAccount } from '../accounts/service';
import type { Clock } from '../shared/clock';
import { badRequest } from '../shared/errors';
import type { IdGenerator } from '../shared/ids';
import type { PaymentPort } from './payments';
import { sqlRows } from '../shared/sql';

/** Account setting; both null means automatic top-up is off. */
export interface AutoTopUpSettings {
  thresholdMicro: bigint | null;
  amountMicro: bigint | null;
}

export const MAX_AUTO_TOP_UP_THRESHOLD_MICRO = 100_000_000_000n; // $100,000
export const MIN_AUTO_TOP_UP_AMOUNT_MICRO = 1_000_000n; // $1
export const MAX_AUTO_TOP_UP_AMOUNT_MICRO = 100_000_000_000n; // $100,000

/** Threshold 0..$100,000 and amount $1..$100,000, or null (off). */
export function validateAutoTopUp(settings: { thresholdMicro: bigint; amountMicro: bigint } | null): AutoTopUpSettings {
  if (settings === null) return { thresholdMicro: null, amountMicro: null };
  if (settings.thresholdMicro < 0n || settings.thresholdMicro > MAX_AUTO_TOP_UP_THRESHOLD_MICRO) {
    throw badRequest('Top-up threshold must be between $0 and $100,000', { field: 'autoTopUp.threshold' });
  }
  if (settings.amountMicro < MIN_AUTO_TOP_UP_AMOUNT_MICRO || settings.amountMicro > MAX_AUTO_TOP_UP_AMOUNT_MICRO) {
    throw badRequest('Top-up amount must be between $1 and $100,000', { field: 'autoTopUp.amount' });
  }
  return settings;
}

export type AutoTopUpOutcome =
  | { status: 'credited'; amountMicro: bigint; reference: string | null }
  /** Balance at or above the threshold (someone else topped up first), or the setting is off. */
  | { status: 'not_needed' }
  | { status: 'declined'; message: string }
  /** Another instance kept the account's top-up lock longer than we were willing to wait. */
  | { status: 'busy' };

const LOCK_RETRY_MS = 15;

/**
 * Tops the account up once when its balance is below its threshold.
 *
 * No double top-ups when several settlements cross the threshold at once, on any number of
 * instances: each attempt runs in a transaction holding a PostgreSQL advisory lock for the
 * account (`pg_try_advisory_xact_lock`), re-reads the balance under it, and only then calls
 * the payment port and credits (ledger row `auto_top_up`, lifetime top-ups raised, through
 * `creditAccount`) before commit releases the lock. The next holder sees the new balance and
 * does nothing. The advisory lock is not a row lock, so reservations and settlements of the
 * account go on while the payment call runs. An attempt that finds the lock taken does not
 * wait inside a transaction (it would pin a pool connection); it retries shortly, because the
 * holder may have read the balance before our settlement committed.
 */
export async function runAutoTopUp(
  deps: { orm: MikroORM; ids: IdGenerator; clock: Clock; payments: PaymentPort },
  accountId: string,
  maxWaitMs = 10_000,
): Promise<AutoTopUpOutcome> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const outcome = await attemptAutoTopUp(deps, accountId);
    if (outcome.status !== 'busy' || Date.now() >= deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS + Math.random() * LOCK_RETRY_MS));
  }
}

async function attemptAutoTopUp(deps: { orm: MikroORM; ids: IdGenerator; clock: Clock; payments: PaymentPort }, accountId: string): Promise<AutoTopUpOutcome> {
  return deps.orm.em.fork().transactional(async (tx): Promise<AutoTopUpOutcome> => {
    const [lock] = await sqlRows<{ locked: boolean }>(tx, 'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked', [`tollgate:auto-top-up:${accountId}`]);
    if (!lock?.locked) return { status: 'busy' };
    const [account] = await sqlRows<{ balance_micro: string; auto_top_up_threshold_micro: string | null; auto_top_up_amount_micro: string | null }>(
      tx,
      'select balance_micro, auto_top_up_threshold_micro, auto_top_up_amount_micro from accounts where id = ?',
      [accountId],
    );
    if (!account || account.auto_top_up_threshold_micro === null || account.auto_top_up_amount_micro === null) return { status: 'not_needed' };
    if (BigInt(account.balance_micro) >= BigInt(account.auto_top_up_threshold_micro)) return { status: 'not_needed' };
    const amountMicro = BigInt(account.auto_top_up_amount_micro);
    const payment = await deps.payments.charge(accountId, amountMicro);
    if (!payment.ok) return { status: 'declined', message: payment.message ?? 'the payment was declined' };
    await creditAccount(tx, deps.ids, deps.clock, accountId, amountMicro, 'auto_top_up', `automatic top-up, payment ${payment.reference ?? 'without reference'}`);
    return { status: 'credited', amountMicro, reference: payment.reference };
  });
}
