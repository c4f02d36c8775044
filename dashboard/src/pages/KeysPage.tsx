import { useEffect, useState, type FormEvent } from 'react';
import type { CombinedError } from '@urql/core';
import { useClient, useMutation, useQuery } from 'urql';
import {
  CreateKeyDocument, KeyEventsDocument, KeyMonthSpendDocument, KeyEventsLiveDocument, KeysDocument, RevokeKeyDocument, UpdateKeyDocument,
  type KeyEventFieldsFragment, type KeyFieldsFragment,
} from '../generated/graphql';
import { dollarsToMicro, formatMicro, microRatio } from '../money';
import { ErrorList } from '../parts/ErrorList';
import { LiveStatus } from '../parts/LiveStatus';
import { formatTime } from '../parts/time';

const LIMIT_PROBLEM = 'Monthly limit must be an amount in dollars with at most 6 decimals, like 25 or 12.50.';

export function KeysPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  const [eventsOf, setEventsOf] = useState<string | null>(null);
  // Each reload also re-reads every key's standing against its limit.
  const [generation, setGeneration] = useState(0);
  const reload = () => {
    setGeneration((g) => g + 1);
    refresh({ requestPolicy: 'network-only' });
  };
  const keys = data?.keys ?? [];
  const watched = keys.find((k) => k.id === eventsOf) ?? null;
  return (
    <>
      <CreateKey onCreated={reload} />
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <ErrorList error={error} />
        {!data && fetching && <p role="status">Loading keys…</p>}
        {data && keys.length === 0 && <p>No keys yet.</p>}
        <ul className="cards" aria-label="API keys">
          {keys.map((key) => (
            <KeyCard key={key.id} apiKey={key} generation={generation} onChanged={reload} onShowEvents={() => setEventsOf(key.id)} eventsShown={eventsOf === key.id} />
          ))}
        </ul>
        <button type="button" className="secondary" onClick={reload}>
          Refresh keys
        </button>
      </section>
      {watched && <KeyEvents apiKey={watched} onClose={() => setEventsOf(null)} />}
    </>
  );
}

/** Queries of the key list are refreshed by any mutation that returns a key, even into an empty list. */
const KEYS_CONTEXT = { additionalTypenames: ['ApiKey'] };

function CreateKey({ onCreated }: { onCreated: () => void }) {
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
      onCreated();
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
      <ErrorList error={result.error} messages={problems} />
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

type Mode = 'rename' | 'limit' | 'revoke' | null;

function KeyCard({ apiKey, generation, onChanged, onShowEvents, eventsShown }: { apiKey: KeyFieldsFragment; generation: number; onChanged: () => void; onShowEvents: () => void; eventsShown: boolean }) {
  const [mode, setMode] = useState<Mode>(null);
  const revoked = apiKey.revokedAt !== null;
  const limit = apiKey.monthlySpendLimitMicro;
  return (
    <li className={revoked ? 'card revoked' : 'card'} aria-label={`Key ${apiKey.name}`}>
      <div className="card-head">
        <h3>{apiKey.name}</h3>
        <span className="badge">{revoked ? 'revoked' : apiKey.kind}</span>
      </div>
      <p className="muted">
        <code>{apiKey.prefix}…</code> · created {formatTime(apiKey.createdAt)} · last used {formatTime(apiKey.lastUsedAt)}
        {apiKey.expiresAt ? ` · expires ${formatTime(apiKey.expiresAt)}` : ''}
        {revoked ? ` · revoked ${formatTime(apiKey.revokedAt)}` : ''}
      </p>
      <p data-testid="key-spend">
        This month: {formatMicro(apiKey.monthSpentMicro)} {limit === null ? '(no limit)' : `of ${formatMicro(limit)}`}
      </p>
      {limit !== null && !revoked && <LimitStanding key={`${generation}/${limit}`} apiKey={apiKey} />}
      {!revoked && (
        <div className="row">
          <button type="button" className="secondary" aria-expanded={mode === 'rename'} onClick={() => setMode(mode === 'rename' ? null : 'rename')}>
            Rename
          </button>
          <button type="button" className="secondary" aria-expanded={mode === 'limit'} onClick={() => setMode(mode === 'limit' ? null : 'limit')}>
            Monthly limit
          </button>
          <button type="button" className="secondary" aria-pressed={eventsShown} onClick={onShowEvents}>
            Events
          </button>
          <button type="button" className="danger" aria-expanded={mode === 'revoke'} onClick={() => setMode(mode === 'revoke' ? null : 'revoke')}>
            Revoke
          </button>
        </div>
      )}
      {revoked && (
        <div className="row">
          <button type="button" className="secondary" aria-pressed={eventsShown} onClick={onShowEvents}>
            Events
          </button>
        </div>
      )}
      {mode === 'rename' && <RenameForm apiKey={apiKey} onDone={() => { setMode(null); onChanged(); }} />}
      {mode === 'limit' && <LimitForm apiKey={apiKey} onDone={() => { setMode(null); onChanged(); }} />}
      {mode === 'revoke' && <RevokeConfirm apiKey={apiKey} onDone={() => { setMode(null); onChanged(); }} onCancel={() => setMode(null)} />}
    </li>
  );
}

/**
 * Against the limit counts what is settled plus what requests in flight hold (the figure the
 * gateway checks), which the key's own settled figure alone would understate.
 */
function LimitStanding({ apiKey }: { apiKey: KeyFieldsFragment }) {
  const [{ data, error }] = useQuery({ query: KeyMonthSpendDocument, variables: { keyId: apiKey.id }, requestPolicy: 'network-only' });
  if (error) return <ErrorList error={error} />;
  if (!data) return null;
  const spend = data.keyMonthSpend;
  const limit = spend.limitMicro ?? apiKey.monthlySpendLimitMicro!;
  return (
    <>
      <meter min={0} max={1} low={0.8} high={0.95} optimum={0} value={microRatio(spend.spentMicro, limit)} aria-label={`Spend of ${apiKey.name} against its limit`} />
      <p className="muted" data-testid="key-limit-standing">
        {formatMicro(spend.spentMicro)} counted against the limit ({formatMicro(spend.reservedMicro)} in flight), {formatMicro(spend.remainingMicro)} left until{' '}
        {formatTime(spend.resetsAt)}.{spend.limitReachedAt ? ` Limit reached ${formatTime(spend.limitReachedAt)}.` : ''}
      </p>
    </>
  );
}

function RenameForm({ apiKey, onDone }: { apiKey: KeyFieldsFragment; onDone: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const [result, update] = useMutation(UpdateKeyDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const answer = await update({ id: apiKey.id, input: { name } });
    if (answer.data) onDone();
  };
  return (
    <form onSubmit={submit} className="inline">
      <label>
        New name
        <input autoFocus required value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <button type="submit" disabled={result.fetching}>
        Save name
      </button>
      <ErrorList error={result.error} />
    </form>
  );
}

function LimitForm({ apiKey, onDone }: { apiKey: KeyFieldsFragment; onDone: () => void }) {
  const [dollars, setDollars] = useState(apiKey.monthlySpendLimitMicro === null ? '' : formatMicro(apiKey.monthlySpendLimitMicro).replace(/[$,]/g, ''));
  const [problems, setProblems] = useState<string[]>([]);
  const [result, update] = useMutation(UpdateKeyDocument);
  const save = async (micro: string | null) => {
    const answer = await update({ id: apiKey.id, input: { monthlySpendLimitMicro: micro } });
    if (answer.data) onDone();
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const micro = dollarsToMicro(dollars);
    if (micro === undefined) return setProblems([LIMIT_PROBLEM]);
    setProblems([]);
    await save(micro);
  };
  return (
    <form onSubmit={submit} className="inline">
      <label>
        Monthly limit ($)
        <input autoFocus inputMode="decimal" value={dollars} onChange={(e) => setDollars(e.target.value)} />
      </label>
      <button type="submit" disabled={result.fetching}>
        Set limit
      </button>
      {apiKey.monthlySpendLimitMicro !== null && (
        <button type="button" className="secondary" disabled={result.fetching} onClick={() => save(null)}>
          Remove limit
        </button>
      )}
      <ErrorList error={result.error} messages={problems} />
    </form>
  );
}

function RevokeConfirm({ apiKey, onDone, onCancel }: { apiKey: KeyFieldsFragment; onDone: () => void; onCancel: () => void }) {
  const [result, revoke] = useMutation(RevokeKeyDocument);
  const confirm = async () => {
    const answer = await revoke({ id: apiKey.id });
    if (answer.data) onDone();
  };
  return (
    <div className="confirm" role="group" aria-label={`Revoke ${apiKey.name}`}>
      <p>Revoking is final: requests with this key are refused from now on.</p>
      <div className="row">
        <button type="button" className="danger" onClick={confirm} disabled={result.fetching}>
          Revoke {apiKey.name} now
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Keep it
        </button>
      </div>
      <ErrorList error={result.error} />
    </div>
  );
}

/** The newest events of one key, then each new one as it happens (the `keyEvents` subscription). */
function KeyEvents({ apiKey, onClose }: { apiKey: KeyFieldsFragment; onClose: () => void }) {
  const [{ data, error }] = useQuery({ query: KeyEventsDocument, variables: { keyId: apiKey.id }, requestPolicy: 'network-only' });
  const [live, setLive] = useState<KeyEventFieldsFragment[]>([]);
  const [liveError, setLiveError] = useState<CombinedError | null>(null);
  const client = useClient();
  useEffect(() => {
    setLive([]);
    setLiveError(null);
    const { unsubscribe } = client.subscription(KeyEventsLiveDocument, { keyId: apiKey.id }).subscribe((result) => {
      if (result.error) setLiveError(result.error);
      const event = result.data?.keyEvents;
      if (event) setLive((events) => (events.some((e) => e.id === event.id) ? events : [event, ...events]));
    });
    return unsubscribe;
  }, [client, apiKey.id]);
  const loaded = data?.keyEvents.data ?? [];
  const events = [...live, ...loaded.filter((e) => !live.some((l) => l.id === e.id))];
  return (
    <section aria-labelledby="events-title">
      <div className="card-head">
        <h2 id="events-title">Events of {apiKey.name}</h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close events
        </button>
      </div>
      <p className="muted">New events appear here as they happen.</p>
      <LiveStatus />
      <ErrorList error={error ?? liveError} />
      <ol className="events" aria-live="polite" aria-label={`Events of ${apiKey.name}`}>
        {events.map((event) => (
          <li key={event.id}>
            <strong>{event.kind}</strong> <span className="muted">{formatTime(event.createdAt)}</span>
            {Object.keys(event.data).length > 0 && <code className="data">{JSON.stringify(event.data)}</code>}
          </li>
        ))}
      </ol>
      {data && events.length === 0 && <p>No events yet.</p>}
    </section>
  );
}
