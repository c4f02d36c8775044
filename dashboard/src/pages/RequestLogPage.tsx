import { useState } from 'react';
import { useQuery } from 'urql';
import { downloadRequestLogCsv } from '../csv';
import { KeysDocument, RequestLogDocument, SpendModelsDocument, type RequestLogFieldsFragment } from '../generated/graphql';
import { KEYS_CONTEXT, useLiveRefresh } from '../live';
import { formatMicro } from '../money';
import { lastDays, periodInstants, type Period, type PeriodChoice } from '../period';
import { ErrorList } from '../parts/ErrorList';
import { PeriodPicker } from '../parts/PeriodPicker';
import { formatTimeToSecond } from '../parts/time';
import { FindRequest } from './FindRequest';
import { RequestDetail, statusInWords, usageInWords } from './RequestLogRow';
import { Scroll } from '../parts/Scroll';

interface Filter {
  keyId: string;
  model: string;
  status: string;
  choice: PeriodChoice;
  period: Period;
}

const STATUSES = ['ok', 'partial', 'failed'];

/**
 * One row per request, newest first, 50 to a page: filters narrow it, Next and Previous walk it
 * by cursor (the server never counts or skips rows), a row opens its details.
 */
export function RequestLogPage() {
  const [filter, setFilter] = useState<Filter>({ keyId: '', model: '', status: '', choice: '30', period: lastDays(30) });
  const [exporting, setExporting] = useState(false);
  const [exportProblem, setExportProblem] = useState<string | null>(null);
  // The cursors of the pages seen so far: Previous goes back through them.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [openId, setOpenId] = useState<string | null>(null);
  // A request found by its id, which may be on no page shown.
  const [found, setFound] = useState<RequestLogFieldsFragment | null>(null);
  const [keys] = useQuery({ query: KeysDocument, context: KEYS_CONTEXT });
  const keyNames = new Map((keys.data?.keys ?? []).map((k) => [k.id, k.name]));
  const instants = periodInstants(filter.period);
  const after = cursors[cursors.length - 1] ?? null;
  const logFilter = {
    from: instants.from,
    to: instants.to,
    keyId: filter.keyId || null,
    model: filter.model || null,
    status: filter.status || null,
  };
  const [{ data, error, fetching }, refresh] = useQuery({
    query: RequestLogDocument,
    variables: { after, filter: logFilter },
    requestPolicy: 'cache-and-network',
  });
  // The models offered are the ones used in the period (from the server's spend by model).
  const [models] = useQuery({ query: SpendModelsDocument, variables: { from: filter.period.from, to: filter.period.to } });
  const exportCsv = async () => {
    setExporting(true);
    setExportProblem(await downloadRequestLogCsv(logFilter, `requests-${filter.period.from}-to-${filter.period.to}.csv`));
    setExporting(false);
  };
  // Only the newest page changes as requests arrive; an older page stays as it was read.
  useLiveRefresh((options) => cursors.length === 1 && refresh(options));
  const change = (next: Partial<Filter>) => {
    setFilter((f) => ({ ...f, ...next }));
    setCursors([null]);
    setOpenId(null);
  };
  const page = data?.requestLog;
  const rows = page?.data ?? [];
  const open = rows.find((r) => r.id === openId) ?? (found?.id === openId ? found : null);
  const keyLabel = (r: RequestLogFieldsFragment) => (r.keyId ? (r.keyName ?? keyNames.get(r.keyId) ?? r.keyId) : '(no key)');
  return (
    <>
      <section aria-labelledby="filters-title">
        <h2 id="filters-title">Which requests</h2>
        <PeriodPicker choice={filter.choice} period={filter.period} onChange={(choice, period) => change({ choice, period })} />
        <form className="inline" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
          <div className="field">
            <label htmlFor="log-key">Key</label>
            <select id="log-key" value={filter.keyId} onChange={(e) => change({ keyId: e.target.value })}>
              <option value="">every key</option>
              {(keys.data?.keys ?? []).map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name}
                  {k.revokedAt ? ' (revoked)' : ''}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="log-model">Model</label>
            <select id="log-model" value={filter.model} onChange={(e) => change({ model: e.target.value })}>
              <option value="">every model</option>
              {(models.data?.spend.groups ?? [])
                .map((g) => g.model)
                .filter((m): m is string => !!m)
                .sort()
                .map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="log-status">Status</label>
            <select id="log-status" value={filter.status} onChange={(e) => change({ status: e.target.value })}>
              <option value="">any status</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {statusInWords(s)}
                </option>
              ))}
            </select>
          </div>
          <button type="button" className="secondary" onClick={exportCsv} disabled={exporting}>
            {exporting ? 'Preparing the CSV…' : 'Download these requests as CSV'}
          </button>
        </form>
        <ErrorList messages={exportProblem ? [exportProblem] : []} />
        <FindRequest
          onFound={(record) => {
            setFound(record);
            setOpenId(record.id);
          }}
        />
        <p className="muted">
          From {filter.period.from} to {filter.period.to}, UTC days. Times below are in your time zone.
        </p>
      </section>
      <section aria-labelledby="log-title">
        <h2 id="log-title">Requests</h2>
        <ErrorList error={error} />
        {!data && fetching && <p role="status">Loading requests…</p>}
        {data && rows.length === 0 && <p>No requests in this period.</p>}
        {rows.length > 0 && (
          <Scroll label="Request log, scrollable">
            <table aria-label="Request log">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Key</th>
                  <th scope="col">Model</th>
                  <th scope="col">Status</th>
                  <th scope="col">Used</th>
                  <th scope="col">Cost</th>
                  <th scope="col">Latency</th>
                  <th scope="col">Request</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id} className={r.id === openId ? 'chosen' : undefined}>
                    <td>{formatTimeToSecond(r.createdAt)}</td>
                    <td>{keyLabel(r)}</td>
                    <td>{r.model}</td>
                    <td>{statusInWords(r.status)}</td>
                    <td>{usageInWords(r)}</td>
                    <td>{formatMicro(r.costMicro)}</td>
                    <td>{r.latencyMs.toLocaleString('en-US')} ms</td>
                    <td>
                      <button
                        type="button"
                        className="link"
                        onClick={() => setOpenId(r.id)}
                        aria-label={`Details of request ${r.requestId ?? r.id}`}
                      >
                        {r.requestId ?? r.id}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
        )}
        {(cursors.length > 1 || page?.hasMore) && (
          <nav className="pager" aria-label="Pages of requests">
            <button type="button" className="secondary" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
              Newer requests
            </button>
            <span data-testid="log-page">Page {cursors.length}</span>
            <button
              type="button"
              className="secondary"
              disabled={!page?.hasMore || !page.lastId}
              onClick={() => page?.lastId && setCursors((c) => [...c, page.lastId!])}
            >
              Older requests
            </button>
          </nav>
        )}
      </section>
      {open && <RequestDetail record={open} keyName={keyLabel(open)} onClose={() => setOpenId(null)} />}
    </>
  );
}
