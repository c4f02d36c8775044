import { useEffect, useRef } from 'react';
import type { RequestLogFieldsFragment } from '../generated/graphql';
import { formatMicro } from '../money';
import { formatTimeToSecond } from '../parts/time';

const count = (n: number) => n.toLocaleString('en-US');

/** What a request used, in the units it is priced by: tokens, images or seconds of video. */
export function usageInWords(r: RequestLogFieldsFragment): string {
  if (r.videoSeconds > 0) return `${count(r.videoSeconds)} s of video`;
  if (r.images > 0) return `${count(r.images)} image${r.images === 1 ? '' : 's'}`;
  return `${count(r.inputTokens)} in / ${count(r.outputTokens)} out tokens`;
}

const STATUS: Record<string, string> = { ok: 'ok', partial: 'partial (stopped early)', failed: 'failed' };
export const statusInWords = (status: string) => STATUS[status] ?? status;

/** One request, every figure the log keeps about it; focus moves here when it opens. */
export function RequestDetail({ record, keyName, onClose }: { record: RequestLogFieldsFragment; keyName: string; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [record.id]);
  const rows: [string, string][] = [
    ['Time', `${formatTimeToSecond(record.createdAt)} (${record.createdAt} UTC)`],
    ['Request id', record.requestId ?? '—'],
    ['Key', keyName],
    ['Model', record.model],
    ['Status', statusInWords(record.status)],
    ['Cost', formatMicro(record.costMicro)],
    ['Latency', `${count(record.latencyMs)} ms`],
    ['Input tokens', count(record.inputTokens)],
    ['of which read from the prompt cache', count(record.cachedInputTokens)],
    [
      'of which written to the prompt cache',
      `${count(record.cacheWrite5mInputTokens)} for 5 minutes, ${count(record.cacheWrite1hInputTokens)} for 1 hour`,
    ],
    ['Output tokens', count(record.outputTokens)],
    ['of which reasoning', count(record.reasoningTokens)],
    ['Images', count(record.images)],
    ['Video seconds', count(record.videoSeconds)],
  ];
  if (record.overageMicro !== '0') rows.push(['Beyond the hold (charged to no one)', formatMicro(record.overageMicro)]);
  return (
    <section aria-labelledby="request-detail-title" className="detail">
      <div className="card-head">
        <h2 id="request-detail-title" ref={heading} tabIndex={-1}>
          Request {record.requestId ?? record.id}
        </h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close details
        </button>
      </div>
      <dl className="pairs" data-testid="request-detail">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
