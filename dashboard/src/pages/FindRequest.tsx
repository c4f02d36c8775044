import { useState, type FormEvent } from 'react';
import { useClient } from 'urql';
import type { CombinedError } from '@urql/core';
import { RequestLogEntryDocument, type RequestLogFieldsFragment } from '../generated/graphql';
import { ErrorList } from '../parts/ErrorList';

/**
 * Finds one request by the id a caller has (the `x-request-id` of its answer, or the log's own
 * id), whatever its age or page: what support asks for first.
 */
export function FindRequest({ onFound }: { onFound: (record: RequestLogFieldsFragment) => void }) {
  const client = useClient();
  const [id, setId] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  const [busy, setBusy] = useState(false);
  const find = async (event: FormEvent) => {
    event.preventDefault();
    const wanted = id.trim();
    setBusy(true);
    // A log id looks like use_…; anything else is taken as a request id.
    const variables = wanted.startsWith('use_') ? { id: wanted } : { requestId: wanted };
    const answer = await client.query(RequestLogEntryDocument, variables, { requestPolicy: 'network-only' }).toPromise();
    setBusy(false);
    setError(answer.error ?? null);
    const record = answer.data?.requestLogEntry;
    setProblem(!answer.error && !record ? `No request of this account has the id ${wanted}.` : null);
    if (record) onFound(record);
  };
  return (
    <form className="inline" onSubmit={find} aria-label="Find a request">
      <label>
        Request id
        <input required value={id} onChange={(e) => setId(e.target.value)} placeholder="x-request-id" />
      </label>
      <button type="submit" className="secondary" disabled={busy}>
        Find this request
      </button>
      <ErrorList error={error} messages={problem ? [problem] : []} />
    </form>
  );
}
