import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { CreateKeyDocument, KeysDocument } from '../generated/graphql';
import { dollarsToMicro } from '../money';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { ErrorList } from '../parts/ErrorList';
import { KEY_FIELDS, KeyCard, LIMIT_PROBLEM } from './KeyCard';

/** Keys per page: a long list is paged, never cut off, and searchable by name or prefix. */
export const KEYS_PER_PAGE = 10;

type Shown = 'all' | 'active' | 'revoked';

export function KeysPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  useLiveRefresh(refresh);
  const [search, setSearch] = useState('');
  const [shown, setShown] = useState<Shown>('all');
  const [pageIndex, setPageIndex] = useState(0);
  const all = data?.keys ?? [];
  const wanted = search.trim().toLowerCase();
  // Active keys first (newest first within each), so what can still be used is on top.
  const keys = all
    .filter((k) => (shown === 'all' ? true : shown === 'active' ? k.revokedAt === null : k.revokedAt !== null))
    .filter((k) => wanted === '' || k.name.toLowerCase().includes(wanted) || k.prefix.toLowerCase().startsWith(wanted))
    .sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || b.createdAt.localeCompare(a.createdAt));
  const pages = Math.max(1, Math.ceil(keys.length / KEYS_PER_PAGE));
  const current = Math.min(pageIndex, pages - 1);
  const visible = keys.slice(current * KEYS_PER_PAGE, (current + 1) * KEYS_PER_PAGE);
  const revokedCount = all.filter((k) => k.revokedAt !== null).length;
  return (
    <>
      <CreateKey />
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <ErrorList error={error} />
        {!data && fetching && <p role="status">Loading keys…</p>}
        {data && all.length === 0 && <p>No keys yet.</p>}
        {all.length > 0 && (
          <form className="inline" role="search" aria-label="Find keys" onSubmit={(e) => e.preventDefault()}>
            <label>
              Search keys
              <input type="search" value={search} placeholder="name or prefix" onChange={(e) => { setSearch(e.target.value); setPageIndex(0); }} />
            </label>
            <div className="field">
              <label htmlFor="keys-shown">Show</label>
              <select id="keys-shown" value={shown} onChange={(e) => { setShown(e.target.value as Shown); setPageIndex(0); }}>
                <option value="all">all keys ({all.length})</option>
                <option value="active">active keys ({all.length - revokedCount})</option>
                <option value="revoked">revoked keys ({revokedCount})</option>
              </select>
            </div>
          </form>
        )}
        {data && all.length > 0 && keys.length === 0 && <p>No key matches.</p>}
        <ul className="cards" aria-label="API keys">
          {visible.map((key) => (
            <KeyCard key={key.id} apiKey={key} />
          ))}
        </ul>
        {keys.length > KEYS_PER_PAGE && (
          <nav className="pager" aria-label="Pages of keys">
            <button type="button" className="secondary" disabled={current === 0} onClick={() => setPageIndex(current - 1)}>
              Previous keys
            </button>
            <span role="status" data-testid="keys-range">
              Keys {current * KEYS_PER_PAGE + 1}–{current * KEYS_PER_PAGE + visible.length} of {keys.length}
            </span>
            <button type="button" className="secondary" disabled={current >= pages - 1} onClick={() => setPageIndex(current + 1)}>
              Next keys
            </button>
          </nav>
        )}
      </section>
    </>
  );
}

function CreateKey() {
  const [name, setName] = useState('');
  const [limit, setLimit] = useState('');
  const [problems, setProblems] = useState<string[]>([]);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [result, create] = useMutation(CreateKeyDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const micro = limit.trim() === '' ? null : dollarsToMicro(limit);
    if (micro === undefined) return setProblems([LIMIT_PROBLEM]);
    setProblems([]);
    const answer = await create({ input: { name, monthlySpendLimitMicro: micro } });
    if (answer.data) {
      setSecret({ name: answer.data.createKey.key.name, secret: answer.data.createKey.secret });
      setName('');
      setLimit('');
    }
  };
  return (
    <section aria-labelledby="create-title">
      <h2 id="create-title">Create a key</h2>
      <form onSubmit={submit} className="inline">
        <label>
          Key name
          <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Monthly limit ($, optional)
          <input inputMode="decimal" value={limit} onChange={(e) => setLimit(e.target.value)} placeholder="none" />
        </label>
        <button type="submit" disabled={result.fetching}>
          Create key
        </button>
      </form>
      <ErrorList error={result.error} messages={problems} fields={{ ...KEY_FIELDS, name: 'Key name' }} />
      {secret && <SecretOnce {...secret} onDone={() => setSecret(null)} />}
    </section>
  );
}

/** The secret exists only in this answer: it is shown once, with a copy button. */
function SecretOnce({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the secret and copy it by hand.');
    }
  };
  return (
    <div className="secret" role="region" aria-label="New key secret">
      <p>
        The secret of <strong>{name}</strong>. Copy it now: it is shown only this once.
      </p>
      <code data-testid="new-secret">{secret}</code>
      <div className="row">
        <button type="button" onClick={copy}>
          Copy secret
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          I have saved it
        </button>
      </div>
      <p role="status">{copied}</p>
    </div>
  );
}

