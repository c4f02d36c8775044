import { badRequest } from '../shared/errors';
import { isWellFormedId } from '../shared/ids';
import type { LedgerKind } from './entities';

/** The account's ledger, read newest first: every balance change (top-ups, charges, automatic top-ups). */
export interface LedgerEntryView {
  id: string;
  kind: LedgerKind;
  /** Signed: top-ups positive, charges negative. */
  amountMicro: bigint;
  keyId: string | null;
  /** For a charge, the model charged. */
  note: string | null;
  createdAt: Date;
}

export interface LedgerPage {
  data: LedgerEntryView[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

export const LEDGER_KINDS: readonly LedgerKind[] = ['top_up', 'auto_top_up', 'charge', 'adjustment'];

/** The port the ledger is read through (adapter: src/infra/pg-usage-reads.ts). */
export interface LedgerReads {
  /**
   * The account's entries newest first (ids are time-ordered ULIDs, so id order is time order),
   * only of `kind` when it is set, only those before the entry `before` when it is set; at most `limit`.
   */
  ledgerEntries(accountId: string, query: { kind: LedgerKind | null; before: string | null; limit: number }): Promise<LedgerEntryView[]>;
}

/** Keyset pages on (account_id, id); the cursor is the id of the page's last entry. */
export async function listLedger(
  reads: LedgerReads,
  accountId: string,
  page: { limit: number; after: string | null; kind: LedgerKind | null },
): Promise<LedgerPage> {
  if (page.after !== null && !isWellFormedId(page.after, 'led'))
    throw badRequest('The page cursor must be the id of a ledger entry of this account', { field: 'page.after' });
  const rows = await reads.ledgerEntries(accountId, { kind: page.kind, before: page.after, limit: page.limit + 1 });
  const data = rows.slice(0, page.limit);
  return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: rows.length > page.limit };
}
