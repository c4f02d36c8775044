import { formatMicro } from '../money';
import { Scroll } from './Scroll';

export type Metric = 'cost' | 'requests' | 'tokens';

export const METRICS: { value: Metric; label: string }[] = [
  { value: 'cost', label: 'Cost' },
  { value: 'requests', label: 'Requests' },
  { value: 'tokens', label: 'Tokens' },
];

export interface Bar {
  label: string;
  micro: bigint;
  requests: number;
  /** Input plus output tokens. */
  tokens: number;
}

const count = (n: number) => n.toLocaleString('en-US');

const value = (bar: Bar, metric: Metric): bigint =>
  metric === 'cost' ? bar.micro : BigInt(Math.round(metric === 'requests' ? bar.requests : bar.tokens));

/**
 * Horizontal bars (they stay readable on a phone): one row per label, its length the chosen
 * metric. Every figure is also text in the table, so a screen reader gets a table, not a picture.
 */
export function BarChart({ bars, caption, metric = 'cost' }: { bars: Bar[]; caption: string; metric?: Metric }) {
  const max = bars.reduce((m, b) => (value(b, metric) > m ? value(b, metric) : m), 0n);
  return (
    <Scroll label={caption}>
      <table className="chart">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Group</th>
            <th scope="col">{METRICS.find((m) => m.value === metric)!.label}</th>
            {metric !== 'cost' && <th scope="col">Cost</th>}
            {metric !== 'requests' && <th scope="col">Requests</th>}
            {metric !== 'tokens' && <th scope="col">Tokens</th>}
          </tr>
        </thead>
        <tbody>
          {bars.map((bar) => {
            const v = value(bar, metric);
            const width = max === 0n ? 0 : Number((v * 1000n) / max) / 10;
            const shown = metric === 'cost' ? formatMicro(bar.micro.toString()) : count(metric === 'requests' ? bar.requests : bar.tokens);
            return (
              <tr key={bar.label}>
                <th scope="row">{bar.label}</th>
                <td>
                  <svg className="bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
                    <rect x="0" y="0" width={Math.max(width, v > 0n ? 0.5 : 0)} height="10" />
                  </svg>
                  <span>{shown}</span>
                </td>
                {metric !== 'cost' && <td>{formatMicro(bar.micro.toString())}</td>}
                {metric !== 'requests' && <td>{count(bar.requests)}</td>}
                {metric !== 'tokens' && <td>{count(bar.tokens)}</td>}
              </tr>
            );
          })}
        </tbody>
      </table>
    </Scroll>
  );
}
