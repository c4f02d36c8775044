import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { KeyMonthSpendDocument, RevokeKeyDocument, UpdateKeyDocument, type KeyFieldsFragment } from '../generated/graphql';
import { KEYS_CONTEXT, useLiveRefresh, useWatchKey } from '../live';
import { dollarsToMicro, formatMicro, microRatio, microToDollarText } from '../money';
import { ErrorList } from '../parts/ErrorList';
import { formatTime } from '../parts/time';
import { KeyEvents } from './KeyEvents';

export const LIMIT_PROBLEM = 'Monthly limit must be an amount in dollars with at most 6 decimals, like 25 or 12.50.';
/** The API's field names in the key forms, in the forms' words. */
export const KEY_FIELDS = { monthlySpendLimitMicro: 'Monthly limit' };

type Mode = 'rename' | 'limit' | 'revoke' | null;

/**
 * One key: what it spent this month against its limit, its actions, and its events beside it.
 * A revoked key (here, or anywhere else: the card follows the key's live events) shows only what
 * it was; every action and any form left open disappear.
 */
export function KeyCard({ apiKey }: { apiKey: KeyFieldsFragment }) {
  const [mode, setMode] = useState<Mode>(null);
  const [eventsShown, setEventsShown] = useState(false);
  const revoked = apiKey.revokedAt !== null;
  useWatchKey(apiKey.id, !revoked);
  const limit = apiKey.monthlySpendLimitMicro;
  const toggle = (next: Mode) => setMode(mode === next ? null : next);
  return (
    <li className={revoked ? 'card revoked' : 'card'} aria-label={`Key ${apiKey.name}`}>
      <div className="card-head">
        <h3>{apiKey.name}</h3>
        <span className="badge" data-testid="key-state">
          {revoked ? 'revoked' : apiKey.kind}
        </span>
      </div>
      <p className="muted">
        <code>{apiKey.prefix}…</code> · created {formatTime(apiKey.createdAt)} · last used {formatTime(apiKey.lastUsedAt)}
        {apiKey.expiresAt ? ` · expires ${formatTime(apiKey.expiresAt)}` : ''}
      </p>
      {revoked && (
        <p className="revoked-note" data-testid="key-revoked">
          Revoked {formatTime(apiKey.revokedAt)}: requests with this key are refused.
        </p>
      )}
      <p data-testid="key-spend">
        This month: {formatMicro(apiKey.monthSpentMicro)}{' '}
        {limit === null ? '(no limit)' : revoked ? `(its limit was ${formatMicro(limit)})` : `of ${formatMicro(limit)}`}
      </p>
      {limit !== null && !revoked && <LimitStanding apiKey={apiKey} />}
      <div className="row">
        {!revoked && (
          <>
            <button type="button" className="secondary" aria-expanded={mode === 'rename'} onClick={() => toggle('rename')}>
              Rename
            </button>
            <button type="button" className="secondary" aria-expanded={mode === 'limit'} onClick={() => toggle('limit')}>
              Monthly limit
            </button>
          </>
        )}
        <button type="button" className="secondary" aria-expanded={eventsShown} onClick={() => setEventsShown(!eventsShown)}>
          Events
        </button>
        {!revoked && (
          <button type="button" className="danger" aria-expanded={mode === 'revoke'} onClick={() => toggle('revoke')}>
            Revoke
          </button>
        )}
      </div>
      {!revoked && mode === 'rename' && <RenameForm apiKey={apiKey} onDone={() => setMode(null)} />}
      {!revoked && mode === 'limit' && <LimitForm apiKey={apiKey} onDone={() => setMode(null)} />}
      {!revoked && mode === 'revoke' && <RevokeConfirm apiKey={apiKey} onDone={() => setMode(null)} />}
      {eventsShown && <KeyEvents apiKey={apiKey} onClose={() => setEventsShown(false)} />}
    </li>
  );
}

/**
 * Against the limit counts what is settled plus what requests in flight hold (the figure the
 * gateway checks), which the key's own settled figure alone would understate.
 */
function LimitStanding({ apiKey }: { apiKey: KeyFieldsFragment }) {
  const [{ data, error }, refresh] = useQuery({
    query: KeyMonthSpendDocument,
    variables: { keyId: apiKey.id },
    requestPolicy: 'cache-and-network',
    context: KEYS_CONTEXT,
  });
  useLiveRefresh(refresh);
  if (error && !data) return <ErrorList error={error} />;
  if (!data) return null;
  const spend = data.keyMonthSpend;
  const limit = spend.limitMicro ?? apiKey.monthlySpendLimitMicro!;
  return (
    <>
      <meter
        min={0}
        max={1}
        low={0.8}
        high={0.95}
        optimum={0}
        value={microRatio(spend.spentMicro, limit)}
        aria-label={`Spend of ${apiKey.name} against its limit`}
      />
      <p className="muted" data-testid="key-limit-standing">
        {formatMicro(spend.spentMicro)} counted against the limit ({formatMicro(spend.reservedMicro)} in flight),{' '}
        {formatMicro(spend.remainingMicro)} left until {formatTime(spend.resetsAt)}.
        {spend.limitReachedAt ? ` Limit reached ${formatTime(spend.limitReachedAt)}.` : ''}
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
      <ErrorList error={result.error} fields={{ name: 'New name' }} />
    </form>
  );
}

function LimitForm({ apiKey, onDone }: { apiKey: KeyFieldsFragment; onDone: () => void }) {
  const [dollars, setDollars] = useState(apiKey.monthlySpendLimitMicro === null ? '' : microToDollarText(apiKey.monthlySpendLimitMicro));
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
      <ErrorList error={result.error} messages={problems} fields={KEY_FIELDS} />
    </form>
  );
}

function RevokeConfirm({ apiKey, onDone }: { apiKey: KeyFieldsFragment; onDone: () => void }) {
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
        <button type="button" className="secondary" onClick={onDone}>
          Keep it
        </button>
      </div>
      <ErrorList error={result.error} />
    </div>
  );
}
