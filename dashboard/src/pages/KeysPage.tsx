import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { CreateKeyDocument, KeysDocument } from '../generated/graphql';
import { dollarsToMicro } from '../money';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { ErrorList } from '../parts/ErrorList';
import { KEY_FIELDS, KeyCard, LIMIT_PROBLEM } from './KeyCard';

export function KeysPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  useLiveRefresh(refresh);
  const keys = data?.keys ?? [];
  return (
    <>
      <CreateKey />
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <ErrorList error={error} />
        {!data && fetching && <p role="status">Loading keys…</p>}
        {data && keys.length === 0 && <p>No keys yet.</p>}
        <ul className="cards" aria-label="API keys">
          {keys.map((key) => (
            <KeyCard key={key.id} apiKey={key} />
          ))}
        </ul>
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

