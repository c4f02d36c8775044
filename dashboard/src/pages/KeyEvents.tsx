import { useEffect, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { KeyEventsDocument, type KeyEventFieldsFragment, type KeyFieldsFragment } from '../generated/graphql';
import { describeKeyEvent, eventActor } from '../events';
import { useKeyEvents, useMyUserId } from '../live';
import { ErrorList } from '../parts/ErrorList';
import { LiveStatus } from '../parts/LiveStatus';
import { formatTime } from '../parts/time';

/**
 * The events of one key, inside its card: the newest page, older pages on demand (nothing is cut
 * off silently), and each new event as it happens. Focus moves to the panel when it opens.
 */
export function KeyEvents({ apiKey, onClose }: { apiKey: KeyFieldsFragment; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const [live, setLive] = useState<KeyEventFieldsFragment[]>([]);
  useKeyEvents(apiKey.id, (event) => setLive((events) => (events.some((e) => e.id === event.id) ? events : [event, ...events])));
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const headingId = `events-${apiKey.id}`;
  return (
    <section className="events-panel" aria-labelledby={headingId}>
      <div className="card-head">
        <h4 id={headingId} ref={heading} tabIndex={-1}>
          Events of {apiKey.name}
        </h4>
        <button type="button" className="secondary" onClick={onClose}>
          Close events
        </button>
      </div>
      <LiveStatus />
      <ol className="events" aria-live="polite" aria-label={`Events of ${apiKey.name}`}>
        {live.map((event) => (
          <EventItem key={event.id} event={event} />
        ))}
        {cursors.map((after, i) => (
          <EventsPage
            key={after ?? 'first'}
            keyId={apiKey.id}
            after={after}
            hide={live}
            onMore={i === cursors.length - 1 ? (next) => setCursors((all) => [...all, next]) : null}
          />
        ))}
      </ol>
    </section>
  );
}

/** One page of 20 events, older than `after`; the last page offers the next one. */
function EventsPage({
  keyId,
  after,
  hide,
  onMore,
}: {
  keyId: string;
  after: string | null;
  hide: KeyEventFieldsFragment[];
  onMore: ((after: string) => void) | null;
}) {
  const [{ data, error, fetching }] = useQuery({ query: KeyEventsDocument, variables: { keyId, after }, requestPolicy: 'network-only' });
  const page = data?.keyEvents;
  const events = (page?.data ?? []).filter((e) => !hide.some((h) => h.id === e.id));
  return (
    <>
      {error && (
        <li>
          <ErrorList error={error} />
        </li>
      )}
      {events.map((event) => (
        <EventItem key={event.id} event={event} />
      ))}
      {after === null && page && page.data.length === 0 && hide.length === 0 && <li>No events yet.</li>}
      {onMore && page?.hasMore && page.lastId && (
        <li className="more">
          <button type="button" className="secondary" disabled={fetching} onClick={() => onMore(page.lastId!)}>
            Show older events
          </button>
        </li>
      )}
    </>
  );
}

function EventItem({ event }: { event: KeyEventFieldsFragment }) {
  const me = useMyUserId();
  return (
    <li data-kind={event.kind}>
      {describeKeyEvent(event)}{' '}
      <span className="muted">
        <time dateTime={event.createdAt}>{formatTime(event.createdAt)}</time>, {eventActor(event, me)}
      </span>
    </li>
  );
}
