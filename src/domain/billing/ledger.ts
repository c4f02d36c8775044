import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest } from '../shared/errors';
import { isWellFormedId } from '../shared/ids';
import { sqlRows, type SqlParam } from '../shared/sql';
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

/** Keyset pages on (account_id, id): ids are time-ordered ULIDs, so id order is time order. */
export async function listLedger(
  em: EntityManager,
  accountId: string,
  page: { limit: number; after: string | null; kind: LedgerKind | null },
): Promise<LedgerPage> {
  const where = ['account_id = ?'];
  const params: SqlParam[] = [accountId];
  if (page.kind !== null) {
    where.push('kind = ?');
    params.push(page.kind);
  }
  if (page.after !== null) {
    if (!isWellFormedId(page.after, 'led'))
      throw badRequest('The page cursor must be the id of a ledger entry of this account', { field: 'page.after' });
    where.push('id < ?');
    params.push(page.after);
  }
  const rows = await sqlRows<{
    id: string;
    kind: LedgerKind;
    amount_micro: string;
    key_id: string | null;
    note: string | null;
    created_at: Date;
  }>(
    em,
    `select id, kind, amount_micro::text as amount_micro, key_id, note, created_at from ledger_entries where ${where.join(' and ')} order by id desc limit ?`,
    [...params, page.limit + 1],
  );
  const data = rows.slice(0, page.limit).map((r) => ({
    id: r.id,
    kind: r.kind,
    amountMicro: BigInt(r.amount_micro),
    keyId: r.key_id,
    note: r.note,
    createdAt: new Date(r.created_at),
  }));
  return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: rows.length > page.limit };
}
