import { useState } from 'react';
import { useQuery } from 'urql';
import { SpendDocument, type SpendQuery } from '../generated/graphql';
import { useLiveRefresh } from '../live';
import { formatMicro } from '../money';
import { lastDays, periodDays, type Period, type PeriodChoice } from '../period';
import { BarChart, METRICS, type Bar, type Metric } from '../parts/BarChart';
import { ErrorList } from '../parts/ErrorList';
import { PeriodPicker } from '../parts/PeriodPicker';

type Group = SpendQuery['spend']['groups'][number];
type SpendGrouping = 'day' | 'model' | 'key';

const GROUPINGS: { value: SpendGrouping; label: string }[] = [
  { value: 'day', label: 'Day' },
  { value: 'model', label: 'Model' },
  { value: 'key', label: 'Key' },
];

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Spend over a period of UTC days, computed by the server from its daily aggregates (so it is
 * exact at any volume): the total, and a chart of cost, requests or tokens per day (every day
 * of the period, zero-filled), per model or per key.
 */
export function SpendPage() {
  const [choice, setChoice] = useState<PeriodChoice>('30');
  const [period, setPeriod] = useState<Period>(() => lastDays(30));
  const [groupBy, setGroupBy] = useState<SpendGrouping>('day');
  const [metric, setMetric] = useState<Metric>('cost');
  const [{ data, error, fetching }, refresh] = useQuery({
    query: SpendDocument,
    variables: { from: period.from, to: period.to, groupBy },
    requestPolicy: 'cache-and-network',
  });
  useLiveRefresh(refresh);
  const report = data?.spend;
  const total = report?.total;
  // While a new grouping loads, the answer on screen is still the old one: it is labelled by its own grouping.
  const shownBy = (report?.groupBy ?? groupBy) as SpendGrouping;
  const bars: Bar[] = (report?.groups ?? []).map((g) => ({
    label: groupLabel(g, shownBy),
    micro: BigInt(g.costMicro),
    requests: g.requests,
    tokens: g.inputTokens + g.outputTokens,
  }));
  const grouping = GROUPINGS.find((g) => g.value === shownBy)!.label.toLowerCase();
  return (
    <>
      <section aria-labelledby="spend-period-title">
        <h2 id="spend-period-title">Period</h2>
        <PeriodPicker
          choice={choice}
          period={period}
          onChange={(c, p) => {
            setChoice(c);
            setPeriod(p);
          }}
        />
        <p className="muted" data-testid="spend-period">
          {period.from} to {period.to} ({count(periodDays(period))} days). Days are UTC days{report ? ` (${report.timeZone})` : ''}: each
          starts at 00:00 UTC.
        </p>
      </section>
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Spend</h2>
        <ErrorList error={error} />
        {!data && fetching && <p role="status">Loading spend…</p>}
        {total && (
          <>
            <p data-testid="spend-total">
              {formatMicro(total.costMicro)} over {count(total.requests)} request{total.requests === 1 ? '' : 's'}.
            </p>
            <dl className="figures">
              <div>
                <dt>Input tokens</dt>
                <dd>{count(total.inputTokens)}</dd>
              </div>
              <div>
                <dt>Output tokens</dt>
                <dd>{count(total.outputTokens)}</dd>
              </div>
              <div>
                <dt>Images</dt>
                <dd>{count(total.images)}</dd>
              </div>
              <div>
                <dt>Video seconds</dt>
                <dd>{count(total.videoSeconds)}</dd>
              </div>
              <div>
                <dt>Failed requests</dt>
                <dd>{count(total.failedRequests)}</dd>
              </div>
            </dl>
          </>
        )}
        <fieldset className="inline">
          <legend>Group by</legend>
          {GROUPINGS.map((g) => (
            <label key={g.value} className="choice">
              <input type="radio" name="grouping" value={g.value} checked={groupBy === g.value} onChange={() => setGroupBy(g.value)} />{' '}
              {g.label}
            </label>
          ))}
        </fieldset>
        <fieldset className="inline">
          <legend>Show</legend>
          {METRICS.map((m) => (
            <label key={m.value} className="choice">
              <input type="radio" name="metric" value={m.value} checked={metric === m.value} onChange={() => setMetric(m.value)} />{' '}
              {m.label}
            </label>
          ))}
        </fieldset>
        {report &&
          (bars.length === 0 ? (
            <p>No usage in this period.</p>
          ) : (
            <BarChart bars={bars} metric={metric} caption={`${METRICS.find((m) => m.value === metric)!.label} per ${grouping}`} />
          ))}
      </section>
    </>
  );
}

function groupLabel(group: Group, by: SpendGrouping): string {
  if (by === 'day') return group.day ?? '?';
  if (by === 'model') return group.model ?? '?';
  return group.keyId === null || group.keyId === undefined ? '(no key)' : (group.keyName ?? group.keyId);
}
