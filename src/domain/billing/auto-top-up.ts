import type { AccountCredit } from '../accounts/store';
import type { Clock } from '../shared/clock';
import { badRequest, notFound } from '../shared/errors';
import type { IdGenerator } from '../shared/ids';
import type { PaymentPort } from './payments';

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

/** The account as the top-up lock's holder reads it. */
export interface TopUpAccount {
  balanceMicro: bigint;
  settings: AutoTopUpSettings;
}

/**
 * Where automatic top-up keeps its setting and takes its per-account lock; the PostgreSQL
 * adapter is src/infra/pg-auto-top-up-store.ts.
 */
export interface AutoTopUpStore {
  /**
   * Runs `work` holding the account's top-up lock, which any number of instances share, with the
   * account as read under it (null when there is no such account) and a credit that commits with
   * the lock's release. Waits for a taken lock at most `maxWaitMs` (retrying inside the adapter),
   * then answers busy without running `work`.
   */
  underTopUpLock<T>(
    accountId: string,
    maxWaitMs: number,
    work: (account: TopUpAccount | null, credit: (credit: AccountCredit) => Promise<boolean>) => Promise<T>,
  ): Promise<{ busy: true } | { busy: false; result: T }>;
  /** False when there is no such account. */
  saveSettings(accountId: string, settings: AutoTopUpSettings): Promise<boolean>;
}

export interface AutoTopUpDeps {
  topUps: AutoTopUpStore;
  payments: PaymentPort;
  ids: IdGenerator;
  clock: Clock;
}

/**
 * Tops the account up once when its balance is below its threshold.
 *
 * No double top-ups when several settlements cross the threshold at once, on any number of
 * instances: each attempt holds the account's top-up lock, re-reads the balance under it, and
 * only then calls the payment port and credits (ledger row `auto_top_up`, lifetime top-ups
 * raised) before the lock is released. The next holder sees the new balance and does nothing.
 */
export async function runAutoTopUp(deps: AutoTopUpDeps, accountId: string, maxWaitMs = 10_000): Promise<AutoTopUpOutcome> {
  const locked = await deps.topUps.underTopUpLock(accountId, maxWaitMs, async (account, credit): Promise<AutoTopUpOutcome> => {
    const { thresholdMicro, amountMicro } = account?.settings ?? { thresholdMicro: null, amountMicro: null };
    if (!account || thresholdMicro === null || amountMicro === null) return { status: 'not_needed' };
    if (account.balanceMicro >= thresholdMicro) return { status: 'not_needed' };
    const payment = await deps.payments.charge(accountId, amountMicro);
    if (!payment.ok) return { status: 'declined', message: payment.message ?? 'the payment was declined' };
    const note = `automatic top-up, payment ${payment.reference ?? 'without reference'}`;
    const credited = await credit({
      accountId,
      amountMicro,
      kind: 'auto_top_up',
      note,
      ledgerId: deps.ids.next('led'),
      at: deps.clock.now(),
    });
    if (!credited) throw notFound(`No account '${accountId}'.`);
    return { status: 'credited', amountMicro, reference: payment.reference };
  });
  return locked.busy ? { status: 'busy' } : locked.result;
}
