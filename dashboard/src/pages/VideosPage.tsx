import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { VideosDocument, type VideoFieldsFragment } from '../generated/graphql';
import { useVideoUpdates } from '../live';
import { ErrorList } from '../parts/ErrorList';
import { LiveStatus } from '../parts/LiveStatus';
import { formatTime } from '../parts/time';

/**
 * The account's video jobs, newest first, 20 at a time with older ones on demand, each updated
 * as it changes (the `videoUpdated` subscription). The file itself is served only to an API key
 * (REST); a session cannot fetch it, so the page says how to, instead of offering a link that
 * would be refused.
 */
export function VideosPage() {
  const [updates, setUpdates] = useState<Map<string, VideoFieldsFragment>>(new Map());
  const [listed, setListed] = useState<Map<string, VideoFieldsFragment[]>>(new Map());
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<'' | VideoStatus>('');
  useVideoUpdates((video) => setUpdates((all) => new Map(all).set(video.id, video)));
  const refilter = () => {
    setCursors([null]);
    setListed(new Map());
  };

  const wanted = search.trim().toLowerCase();
  const filtered = wanted !== '' || status !== '';
  const listedIds = new Set([...listed.values()].flat().map((v) => v.id));
  // A job created since the list was read arrives live; it is shown when it fits the filter.
  const fresh = [...updates.values()]
    .filter((v) => !listedIds.has(v.id) && (status === '' || v.status === status) && v.prompt.toLowerCase().includes(wanted))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const onPage = (after: string | null, videos: VideoFieldsFragment[]) => setListed((all) => new Map(all).set(after ?? '', videos));
  const nothing = fresh.length === 0 && listed.get('')?.length === 0;
  return (
    <section aria-labelledby="videos-title">
      <h2 id="videos-title">Video jobs</h2>
      <p className="muted">Status and progress change here as the jobs run.</p>
      <LiveStatus />
      <form className="inline" role="search" aria-label="Find video jobs" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search prompts
          <input
            type="search"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              refilter();
            }}
          />
        </label>
        <div className="field">
          <label htmlFor="videos-status">Status</label>
          <select
            id="videos-status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as '' | VideoStatus);
              refilter();
            }}
          >
            <option value="">any status</option>
            {VIDEO_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </div>
      </form>
      {nothing && <p>{filtered ? 'No video job matches.' : 'No video jobs yet. Create one with an API key: POST /v1/videos.'}</p>}
      <ul className="cards" aria-label="Video jobs">
        {fresh.map((video) => (
          <VideoCard key={video.id} video={video} />
        ))}
        {cursors.map((after, i) => (
          <VideosPageOf
            key={`${after ?? 'first'} ${status} ${wanted}`}
            after={after}
            search={wanted || null}
            status={status || null}
            updates={updates}
            onLoaded={onPage}
            onMore={i === cursors.length - 1 ? (next) => setCursors((all) => [...all, next]) : null}
          />
        ))}
      </ul>
    </section>
  );
}

/** One page of 20 jobs older than `after`; the last page offers the next one. */
function VideosPageOf({
  after,
  search,
  status,
  updates,
  onLoaded,
  onMore,
}: {
  after: string | null;
  search: string | null;
  status: VideoStatus | null;
  updates: Map<string, VideoFieldsFragment>;
  onLoaded: (after: string | null, videos: VideoFieldsFragment[]) => void;
  onMore: ((after: string) => void) | null;
}) {
  const [{ data, error, fetching }] = useQuery({
    query: VideosDocument,
    variables: { after, search, status },
    requestPolicy: 'network-only',
  });
  const page = data?.videos;
  // The page above needs to know which jobs are listed, so that a live update of one is not shown twice.
  useEffect(() => {
    if (page) onLoaded(after, page.data);
  }, [page, after]);
  return (
    <>
      {error && (
        <li>
          <ErrorList error={error} />
        </li>
      )}
      {(page?.data ?? []).map((video) => (
        <VideoCard key={video.id} video={newer(video, updates.get(video.id))} />
      ))}
      {onMore && page?.hasMore && page.lastId && (
        <li className="more">
          <button type="button" className="secondary" disabled={fetching} onClick={() => onMore(page.lastId!)}>
            Show older video jobs
          </button>
        </li>
      )}
    </>
  );
}

const ORDER = ['queued', 'in_progress', 'completed', 'failed'];
type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';
const VIDEO_STATUSES: VideoStatus[] = ['queued', 'in_progress', 'completed', 'failed'];

/** Updates can arrive before or after the list; status only moves forward and progress only rises. */
function newer(listed: VideoFieldsFragment, update: VideoFieldsFragment | undefined): VideoFieldsFragment {
  if (!update) return listed;
  const rank = (v: VideoFieldsFragment) => ORDER.indexOf(v.status) * 1000 + v.progress;
  return rank(update) >= rank(listed) ? update : listed;
}

function VideoCard({ video }: { video: VideoFieldsFragment }) {
  const content = `${location.origin}/v1/videos/${video.id}/content`;
  return (
    <li className="card" aria-label={`Video ${video.id}`}>
      <div className="card-head">
        <h3>{video.prompt.length > 80 ? `${video.prompt.slice(0, 79)}…` : video.prompt}</h3>
        <span className={`badge status-${video.status}`} data-testid="video-status">
          {video.status.replace('_', ' ')}
        </span>
      </div>
      <p className="muted">
        <code>{video.id}</code> · {video.model} · {video.seconds} s · {video.resolution} · {video.ratio} · created{' '}
        {formatTime(video.createdAt)}
      </p>
      <label className="progress">
        Progress {video.progress}%
        <progress max={100} value={video.progress} />
      </label>
      {video.error && (
        <p className="error" role="alert">
          {video.error.code}: {video.error.message}
        </p>
      )}
      {video.status === 'completed' && (
        <div className="download">
          <p>
            Completed {formatTime(video.completedAt)}; the file is kept until {formatTime(video.expiresAt)}. Downloading needs an API key
            (the dashboard's session cannot fetch the file):
          </p>
          <code className="data">
            curl -H "Authorization: Bearer $TOLLGATE_API_KEY" -o {video.id}.mp4 {content}
          </code>
        </div>
      )}
    </li>
  );
}
