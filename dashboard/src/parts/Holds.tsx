import { useQuery } from 'urql';
import { HoldsDocument, KeysDocument } from '../generated/graphql';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { formatMicro } from '../money';
import { ErrorList } from './ErrorList';
import { formatTime } from './time';
import { Scroll } from './Scroll';

/** What each kind of hold is, for a person who did not read the billing docs. */
const PURPOSES: Record<string, { name: string; explains: string }> = {
  text: { name: 'Text request', explains: 'a text request still running; settled to its exact cost when it ends' },
  image: { name: 'Image request', explains: 'an image request still running; settled to its exact cost when it ends' },
  video: { name: 'Video job', explains: 'a video job until it completes; charged for the seconds made, the rest given back' },
  lease: {
    name: 'Budget lease',
    explains:
      'money the gateway sets aside for a key so its text requests are admitted without a database write each; what they do not use is given back about a second after the last one',
  },
};

export function holdPurpose(purpose: string): { name: string; explains: string } {
  return PURPOSES[purpose] ?? { name: purpose, explains: 'money reserved until the work settles' };
}

/**
 * The holds in flight, each explained in words: they are the account's "Reserved" figure, money
 * set aside before work runs so that it can never overspend, given back or charged when it ends.
 */
export function Holds() {
  const [holds, refresh] = useQuery({ query: HoldsDocument, requestPolicy: 'cache-and-network' });
  const [keys] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  useLiveRefresh(refresh);
  const keyNames = new Map((keys.data?.keys ?? []).map((k) => [k.id, k.name]));
  const list = holds.data?.holds ?? [];
  const kinds = [...new Set(list.map((h) => h.purpose))];
  return (
    <section aria-labelledby="holds-title">
      <h2 id="holds-title">Holds in flight</h2>
      <p className="muted">
        Before a request or job runs, its highest possible price is reserved from the balance (and from the key's monthly limit); when it
        ends, the exact cost is charged and the rest is given back. These reservations make up Reserved above.
      </p>
      {holds.error && !holds.data && <ErrorList error={holds.error} />}
      {holds.data && list.length === 0 && <p>No holds right now: nothing is reserved.</p>}
      {list.length > 0 && (
        <>
          <Scroll label="Holds in flight, scrollable">
            <table aria-label="Holds in flight">
              <thead>
                <tr>
                  <th scope="col">What</th>
                  <th scope="col">Model</th>
                  <th scope="col">Key</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Since</th>
                </tr>
              </thead>
              <tbody>
                {list.map((h) => (
                  <tr key={h.id}>
                    <td>
                      {holdPurpose(h.purpose).name}
                      {h.planBilled ? ' (from the plan allowance)' : ''}
                    </td>
                    <td>{h.model || '—'}</td>
                    <td>{h.keyId ? (keyNames.get(h.keyId) ?? h.keyId) : '—'}</td>
                    <td>{formatMicro(h.amountMicro)}</td>
                    <td>{formatTime(h.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <dl className="explain">
            {kinds.map((kind) => (
              <div key={kind}>
                <dt>{holdPurpose(kind).name}</dt>
                <dd>{holdPurpose(kind).explains}.</dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </section>
  );
}
