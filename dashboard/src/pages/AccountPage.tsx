import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { AccountPageDocument, SetAutoTopUpDocument } from '../generated/graphql';
import { useLiveRefresh } from '../live';
import { dollarsToMicro, formatMicro, microToDollarText } from '../money';
import { ErrorList } from '../parts/ErrorList';
import { Holds } from '../parts/Holds';
import { formatTime } from '../parts/time';

export function AccountPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: AccountPageDocument });
  useLiveRefresh(refresh);
  if (!data) return fetching ? <p role="status">Loading the account…</p> : <ErrorList error={error} />;
  const { account, me, autoTopUp } = data;
  const limits = account.tierLimits;
  return (
    <>
      <ErrorList error={error} />
      <section aria-labelledby="balance-title">
        <h2 id="balance-title">{account.name}</h2>
        <p>
          Signed in as <strong>{me.email}</strong>
          {me.plan ? ` (plan ${me.plan})` : ''}.
        </p>
        <dl className="figures">
          <div>
            <dt>Balance</dt>
            <dd data-testid="balance">{formatMicro(account.balanceMicro)}</dd>
          </div>
          <div>
            <dt>Reserved</dt>
            <dd data-testid="reserved">{formatMicro(account.reservedMicro)}</dd>
          </div>
          <div>
            <dt>Available</dt>
            <dd>{formatMicro(account.availableMicro)}</dd>
          </div>
          <div>
            <dt>Lifetime top-ups</dt>
            <dd>{formatMicro(account.lifetimeTopUpsMicro)}</dd>
          </div>
        </dl>
        <p className="muted">Available is the balance less what is reserved for work still running (see Holds in flight below).</p>
      </section>
      <Holds />
      <section aria-labelledby="tier-title">
        <h2 id="tier-title">Tier {account.tier}</h2>
        <p>{account.tierOverride === null ? 'Follows lifetime top-ups.' : 'Pinned by the operator.'}</p>
        <dl className="figures">
          <div>
            <dt>Requests per second</dt>
            <dd>{limits.requestsPerSecond.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Requests per minute</dt>
            <dd>{limits.requestsPerMinute.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Tokens per minute</dt>
            <dd>{limits.tokensPerMinute.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Concurrent requests</dt>
            <dd>{limits.concurrentRequests.toLocaleString()}</dd>
          </div>
        </dl>
        <p className="muted">Account created {formatTime(account.createdAt)}.</p>
      </section>
      <AutoTopUpSection setting={autoTopUp} />
    </>
  );
}

function AutoTopUpSection({ setting }: { setting: { enabled: boolean; thresholdMicro: string | null; amountMicro: string | null } }) {
  const [threshold, setThreshold] = useState(microToDollarText(setting.thresholdMicro ?? '5000000'));
  const [amount, setAmount] = useState(microToDollarText(setting.amountMicro ?? '20000000'));
  const [problems, setProblems] = useState<string[]>([]);
  const [result, save] = useMutation(SetAutoTopUpDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const thresholdMicro = dollarsToMicro(threshold);
    const amountMicro = dollarsToMicro(amount);
    const found = [
      ...(thresholdMicro === undefined ? ['Threshold must be an amount in dollars with at most 6 decimals, like 5 or 5.25.'] : []),
      ...(amountMicro === undefined ? ['Top-up amount must be an amount in dollars with at most 6 decimals, like 20.'] : []),
    ];
    setProblems(found);
    if (found.length === 0) await save({ input: { thresholdMicro, amountMicro } });
  };
  return (
    <section aria-labelledby="topup-title">
      <h2 id="topup-title">Automatic top-up</h2>
      <p data-testid="auto-top-up">
        {setting.enabled
          ? `On: when the balance falls below ${formatMicro(setting.thresholdMicro)}, add ${formatMicro(setting.amountMicro)}.`
          : 'Off.'}
      </p>
      <form onSubmit={submit} className="inline">
        <label>
          Threshold ($)
          <input inputMode="decimal" value={threshold} onChange={(e) => setThreshold(e.target.value)} />
        </label>
        <label>
          Top-up amount ($)
          <input inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} />
        </label>
        <button type="submit" disabled={result.fetching}>
          {setting.enabled ? 'Update automatic top-up' : 'Turn automatic top-up on'}
        </button>
        {setting.enabled && (
          <button type="button" className="secondary" disabled={result.fetching} onClick={() => save({ input: null })}>
            Turn automatic top-up off
          </button>
        )}
      </form>
      <ErrorList error={result.error} messages={problems} fields={{ thresholdMicro: 'Threshold', amountMicro: 'Top-up amount' }} />
    </section>
  );
}
