import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { CreateKeyDocument, KeyPageDocument } from '../generated/graphql';
import { dollarsToMicro } from '../money';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { ErrorList } from '../parts/ErrorList';
import { KEY_FIELDS, KeyCard, LIMIT_PROBLEM } from './KeyCard';

/** Keys per page: a long list is paged by cursor, never cut off, and searchable by name or prefix. */
export const KEYS_PER_PAGE = 10;

type Shown = '' | 'active' | 'revoked';

export function KeysPage() {
  const [search, setSearch] = useState('');
  const [shown, setShown] = useState<Shown>('');
  // The cursors of the pages seen so far: Previous goes back through them.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors[cursors.length - 1] ?? null;
  const [{ data, error, fetching }, refresh] = useQuery({
    query: KeyPageDocument,
    variables: { first: KEYS_PER_PAGE, after, search: search.trim() || null, status: shown || null },
    context: KEYS_CONTEXT,
    requestPolicy: 'cache-and-network',
  });
  useLiveRefresh(refresh);
  const page = data?.keyPage;
  const keys = page?.data ?? [];
  const filtered = search.trim() !== '' || shown !== '';
  const restart = () => setCursors([null]);
  return (
    <>
      <CreateKey />
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <form className="inline" role="search" aria-label="Find keys" onSubmit={(e) => e.preventDefault()}>
          <label>
            Search keys
            <input
              type="search"
              value={search}
              placeholder="name or prefix"
              onChange={(e) => {
                setSearch(e.target.value);
                restart();
              }}
            />
          </label>
          <div className="field">
            <label htmlFor="keys-shown">Show</label>
            <select
              id="keys-shown"
              value={shown}
              onChange={(e) => {
                setShown(e.target.value as Shown);
                restart();
              }}
            >
              <option value="">all keys</option>
              <option value="active">active keys</option>
              <option value="revoked">revoked keys</option>
            </select>
          </div>
        </form>
        <ErrorList error={error} />
        {!data && fetching && <p role="status">Loading keys…</p>}
        {page && keys.length === 0 && <p>{filtered ? 'No key matches.' : 'No keys yet.'}</p>}
        <ul className="cards" aria-label="API keys">
          {keys.map((key) => (
            <KeyCard key={key.id} apiKey={key} />
          ))}
        </ul>
        {(cursors.length > 1 || page?.hasMore) && (
          <nav className="pager" aria-label="Pages of keys">
            <button type="button" className="secondary" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
              Previous keys
            </button>
            <span data-testid="keys-page">Page {cursors.length}</span>
            <button
              type="button"
              className="secondary"
              disabled={!page?.hasMore || !page.lastId}
              onClick={() => page?.lastId && setCursors((c) => [...c, page.lastId!])}
            >
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
