import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient, useQuery } from 'urql';
import type { CombinedError } from '@urql/core';
import { KeysDocument, UsageRecordsDocument, type UsageRecordsQuery } from '../generated/graphql';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { formatMicro } from '../money';
import { BarChart, type Bar } from '../parts/BarChart';
import { ErrorList } from '../parts/ErrorList';

type UsageRecord = UsageRecordsQuery['usageRecords']['data'][number];
type Grouping = 'day' | 'model' | 'key';

/** The chart covers this many days back, read in pages of 100 records up to this many pages. */
const DAYS = 30;
const MAX_PAGES = 20;

export function SpendPage() {
  const client = useClient();
  const [records, setRecords] = useState<UsageRecord[] | null>(null);
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState<CombinedError | null>(null);
  const [grouping, setGrouping] = useState<Grouping>('day');
  const [keys] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  const loading = useRef(false);

  const load = useCallback(async () => {
    if (loading.current) return;
    loading.current = true;
    try {
      await readRecords();
    } finally {
      loading.current = false;
    }
  }, [client]);
  const readRecords = async () => {
    const from = new Date(Date.now() - DAYS * 86_400_000).toISOString();
    const all: UsageRecord[] = [];
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await client.query(UsageRecordsDocument, { first: 100, after, from }, { requestPolicy: 'network-only' }).toPromise();
      if (answer.error || !answer.data) {
        setError(answer.error ?? null);
        return;
      }
      all.push(...answer.data.usageRecords.data);
      after = answer.data.usageRecords.lastId;
      if (!answer.data.usageRecords.hasMore || after === null) {
        setTruncated(false);
        setError(null);
        setRecords(all);
        return;
      }
    }
    setTruncated(true);
    setError(null);
    setRecords(all);
  };
  useEffect(() => void load(), [load]);
  useLiveRefresh(() => void load());

  const keyNames = new Map((keys.data?.keys ?? []).map((k) => [k.id, k.name]));
  const bars = records ? group(records, grouping, keyNames) : [];
  const total = (records ?? []).reduce((sum, r) => sum + BigInt(r.costMicro), 0n);
  return (
    <>
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Usage, last {DAYS} days</h2>
        <ErrorList error={error} />
        {records === null && !error && <p role="status">Loading usage…</p>}
        {records && (
          <>
            <p data-testid="spend-total">
              {formatMicro(total.toString())} over {records.length.toLocaleString()} request{records.length === 1 ? '' : 's'}
              {truncated ? ` (the latest ${records.length} only)` : ''}.
            </p>
            <fieldset className="inline">
              <legend>Group by</legend>
              {(['day', 'model', 'key'] as const).map((g) => (
                <label key={g} className="choice">
                  <input type="radio" name="grouping" value={g} checked={grouping === g} onChange={() => setGrouping(g)} /> {g}
                </label>
              ))}
            </fieldset>
            {bars.length === 0 ? <p>No usage in this period.</p> : <BarChart bars={bars} caption={`Cost per ${grouping}`} />}
          </>
        )}
      </section>
    </>
  );
}

/** Sums cost and counts requests per UTC day, model or key; days in order, the rest by cost. */
function group(records: UsageRecord[], by: Grouping, keyNames: Map<string, string>): Bar[] {
  const bars = new Map<string, Bar>();
  for (const record of records) {
    const label =
      by === 'day' ? record.createdAt.slice(0, 10) : by === 'model' ? record.model : record.keyId ? keyNames.get(record.keyId) ?? record.keyId : '(no key)';
    const bar = bars.get(label) ?? { label, micro: 0n, requests: 0 };
    bar.micro += BigInt(record.costMicro);
    bar.requests += 1;
    bars.set(label, bar);
  }
  const list = [...bars.values()];
  return by === 'day' ? list.sort((a, b) => a.label.localeCompare(b.label)) : list.sort((a, b) => (b.micro > a.micro ? 1 : b.micro < a.micro ? -1 : 0));
}
