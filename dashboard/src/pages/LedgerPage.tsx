import { useState } from 'react';
import { useQuery } from 'urql';
import { KeysDocument, LedgerDocument } from '../generated/graphql';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { formatMicro } from '../money';
import { ErrorList } from '../parts/ErrorList';
import { formatTimeToSecond } from '../parts/time';
import { Scroll } from '../parts/Scroll';

const KINDS: { value: string; label: string; one: string }[] = [
  { value: 'top_up', label: 'Top-ups', one: 'Top-up' },
  { value: 'auto_top_up', label: 'Automatic top-ups', one: 'Automatic top-up' },
  { value: 'charge', label: 'Charges', one: 'Charge' },
  { value: 'adjustment', label: 'Adjustments', one: 'Adjustment' },
];
export const ledgerKindInWords = (kind: string) => KINDS.find((k) => k.value === kind)?.one ?? kind.replace(/_/g, ' ');

/**
 * Every change of the balance, newest first, 50 to a page by cursor: top-ups, automatic
 * top-ups and charges (the balance is the sum of these rows).
 */
export function LedgerPage() {
  const [kind, setKind] = useState('');
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors[cursors.length - 1] ?? null;
  const [{ data, error, fetching }, refresh] = useQuery({
    query: LedgerDocument,
    variables: { after, kind: kind || null },
    requestPolicy: 'cache-and-network',
  });
  useLiveRefresh((options) => cursors.length === 1 && refresh(options));
  const [keys] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  const keyNames = new Map((keys.data?.keys ?? []).map((k) => [k.id, k.name]));
  const page = data?.ledger;
  const rows = page?.data ?? [];
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Changes of the balance</h2>
      <p className="muted">
        The balance is the sum of these rows: top-ups add to it, charges take from it. A charge is one settled request.
      </p>
      <form className="inline" aria-label="Ledger filter" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="ledger-kind">Show</label>
          <select
            id="ledger-kind"
            value={kind}
            onChange={(e) => {
              setKind(e.target.value);
              setCursors([null]);
            }}
          >
            <option value="">every change</option>
            {KINDS.map((k) => (
              <option key={k.value} value={k.value}>
                {k.label.toLowerCase()}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ErrorList error={error} />
      {!data && fetching && <p role="status">Loading the ledger…</p>}
      {data && rows.length === 0 && <p>Nothing here yet.</p>}
      {rows.length > 0 && (
        <Scroll label="Ledger, scrollable">
          <table aria-label="Ledger">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">What</th>
                <th scope="col">Amount</th>
                <th scope="col">Key</th>
                <th scope="col">Model</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatTimeToSecond(entry.createdAt)}</td>
                  <td>{ledgerKindInWords(entry.kind)}</td>
                  <td className={entry.amountMicro.startsWith('-') ? undefined : 'credit'}>
                    {entry.amountMicro.startsWith('-') ? '' : '+'}
                    {formatMicro(entry.amountMicro)}
                  </td>
                  <td>{entry.keyId ? (keyNames.get(entry.keyId) ?? entry.keyId) : '—'}</td>
                  <td>{entry.note ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {(cursors.length > 1 || page?.hasMore) && (
        <nav className="pager" aria-label="Pages of the ledger">
          <button type="button" className="secondary" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Newer changes
          </button>
          <span data-testid="ledger-page">Page {cursors.length}</span>
          <button
            type="button"
            className="secondary"
            disabled={!page?.hasMore || !page.lastId}
            onClick={() => page?.lastId && setCursors((c) => [...c, page.lastId!])}
          >
            Older changes
          </button>
        </nav>
      )}
    </section>
  );
}
