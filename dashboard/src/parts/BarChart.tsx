import { formatMicro } from '../money';

export interface Bar {
  label: string;
  micro: bigint;
  requests: number;
}

/**
 * Horizontal bars (they stay readable on a phone): one row per label, its length the cost.
 * The figures are also the chart's text, so a screen reader gets a table, not a picture.
 */
export function BarChart({ bars, caption }: { bars: Bar[]; caption: string }) {
  const max = bars.reduce((m, b) => (b.micro > m ? b.micro : m), 0n);
  return (
    <table className="chart">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Group</th>
          <th scope="col">Cost</th>
          <th scope="col">Requests</th>
        </tr>
      </thead>
      <tbody>
        {bars.map((bar) => {
          const width = max === 0n ? 0 : Number((bar.micro * 1000n) / max) / 10;
          return (
            <tr key={bar.label}>
              <th scope="row">{bar.label}</th>
              <td>
                <svg className="bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
                  <rect x="0" y="0" width={Math.max(width, bar.micro > 0n ? 0.5 : 0)} height="10" />
                </svg>
                <span>{formatMicro(bar.micro.toString())}</span>
              </td>
              <td>{bar.requests.toLocaleString()}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
