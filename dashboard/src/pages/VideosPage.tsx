import { useEffect, useState } from 'react';
import { useClient, useQuery } from 'urql';
import type { CombinedError } from '@urql/core';
import { VideosDocument, VideoUpdatedDocument, type VideoFieldsFragment } from '../generated/graphql';
import { ErrorList } from '../parts/ErrorList';
import { LiveStatus } from '../parts/LiveStatus';
import { formatTime } from '../parts/time';

/**
 * The account's video jobs, each updated as it changes (the `videoUpdated` subscription).
 * The file itself is served only to an API key (REST); a session cannot fetch it, so the page
 * says how to, instead of offering a link that would be refused.
 */
export function VideosPage() {
  const client = useClient();
  const [{ data, error }, refresh] = useQuery({ query: VideosDocument, requestPolicy: 'network-only' });
  const [updates, setUpdates] = useState<Map<string, VideoFieldsFragment>>(new Map());
  const [liveError, setLiveError] = useState<CombinedError | null>(null);
  useEffect(() => {
    const { unsubscribe } = client.subscription(VideoUpdatedDocument, {}).subscribe((result) => {
      if (result.error) setLiveError(result.error);
      const video = result.data?.videoUpdated;
      if (video) setUpdates((all) => new Map(all).set(video.id, video));
    });
    return unsubscribe;
  }, [client]);

  const listed = data?.videos.data ?? [];
  const fresh = [...updates.values()].filter((v) => !listed.some((l) => l.id === v.id)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const videos = [...fresh, ...listed.map((v) => newer(v, updates.get(v.id)))];
  return (
    <section aria-labelledby="videos-title">
      <h2 id="videos-title">Video jobs</h2>
      <p className="muted">Status and progress change here as the jobs run.</p>
      <LiveStatus />
      <ErrorList error={error ?? liveError} />
      {data && videos.length === 0 && <p>No video jobs yet. Create one with an API key: POST /v1/videos.</p>}
      <ul className="cards" aria-label="Video jobs">
        {videos.map((video) => (
          <VideoCard key={video.id} video={video} />
        ))}
      </ul>
      <button type="button" className="secondary" onClick={() => refresh({ requestPolicy: 'network-only' })}>
        Refresh videos
      </button>
    </section>
  );
}

const ORDER = ['queued', 'in_progress', 'completed', 'failed'];

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
        <code>{video.id}</code> · {video.model} · {video.seconds} s · {video.resolution} · {video.ratio} · created {formatTime(video.createdAt)}
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
            Completed {formatTime(video.completedAt)}; the file is kept until {formatTime(video.expiresAt)}. Downloading needs an API key (the dashboard's
            session cannot fetch the file):
          </p>
          <code className="data">curl -H "Authorization: Bearer $TOLLGATE_API_KEY" -o {video.id}.mp4 {content}</code>
        </div>
      )}
    </li>
  );
}
