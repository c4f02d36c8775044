import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useClient, useQuery } from 'urql';
import {
  KeyEventsLiveDocument,
  MeDocument,
  VideoUpdatedDocument,
  type KeyEventFieldsFragment,
  type VideoFieldsFragment,
} from './generated/graphql';

/**
 * What the signed-in page hears live, in one place: the events of the active keys on screen
 * (each card asks for its key: a page of cards, not every key of a large account) and every
 * video update, over one graphql-ws connection. Each one bumps `generation`, and the figures on
 * screen (key cards, balance, holds, spend) re-read themselves on each bump. A text request's
 * charge publishes no event, so while the tab is visible the generation also moves every
 * REFRESH_MS: the page follows spend without a Refresh button.
 */
export const REFRESH_MS = 5_000;

type Listener<T> = (value: T) => void;

interface Activity {
  generation: number;
  myUserId: string | null;
  watch(keyId: string): () => void;
  keyEvents: Set<Listener<KeyEventFieldsFragment>>;
  videoUpdates: Set<Listener<VideoFieldsFragment>>;
}

const ActivityContext = createContext<Activity>({
  generation: 0,
  myUserId: null,
  watch: () => () => undefined,
  keyEvents: new Set(),
  videoUpdates: new Set(),
});

/** Queries that return keys are refreshed by any mutation that returns a key, even into an empty list. */
export const KEYS_CONTEXT = { additionalTypenames: ['ApiKey'] };

export function LiveActivity({ children }: { children: ReactNode }) {
  const client = useClient();
  const [generation, setGeneration] = useState(0);
  const listeners = useRef({
    keyEvents: new Set<Listener<KeyEventFieldsFragment>>(),
    videoUpdates: new Set<Listener<VideoFieldsFragment>>(),
  }).current;
  const [me] = useQuery({ query: MeDocument });
  const bump = () => setGeneration((g) => g + 1);

  // The keys on screen, counted (a key can be on screen twice: its card and its events).
  const watchers = useRef(new Map<string, number>()).current;
  const [watchedIds, setWatchedIds] = useState('');
  const watch = useCallback(
    (keyId: string) => {
      watchers.set(keyId, (watchers.get(keyId) ?? 0) + 1);
      setWatchedIds([...watchers.keys()].sort().join(' '));
      return () => {
        const left = (watchers.get(keyId) ?? 1) - 1;
        if (left > 0) watchers.set(keyId, left);
        else watchers.delete(keyId);
        setWatchedIds([...watchers.keys()].sort().join(' '));
      };
    },
    [watchers],
  );
  useEffect(() => {
    const subscriptions = watchedIds
      .split(' ')
      .filter(Boolean)
      .map((keyId) =>
        client.subscription(KeyEventsLiveDocument, { keyId }).subscribe((result) => {
          const event = result.data?.keyEvents;
          if (!event) return;
          for (const listener of listeners.keyEvents) listener(event);
          bump();
        }),
      );
    return () => subscriptions.forEach((s) => s.unsubscribe());
  }, [client, watchedIds, listeners]);

  useEffect(() => {
    const { unsubscribe } = client.subscription(VideoUpdatedDocument, {}).subscribe((result) => {
      const video = result.data?.videoUpdated;
      if (!video) return;
      for (const listener of listeners.videoUpdates) listener(video);
      // A finished job settles its charge: balance and spend change then.
      if (video.status === 'completed' || video.status === 'failed') bump();
    });
    return unsubscribe;
  }, [client, listeners]);

  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === 'visible' && bump(), REFRESH_MS);
    const onVisible = () => document.visibilityState === 'visible' && bump();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, []);

  const value = useMemo(
    () => ({ generation, myUserId: me.data?.me.id ?? null, watch, ...listeners }),
    [generation, me.data, watch, listeners],
  );
  return <ActivityContext.Provider value={value}>{children}</ActivityContext.Provider>;
}

/** The signed-in user's id (to tell "by you" from others in events). */
export function useMyUserId(): string | null {
  return useContext(ActivityContext).myUserId;
}

/** Re-reads a query (keeping what is shown until the answer) whenever something live happened. */
export function useLiveRefresh(refresh: (options: { requestPolicy: 'network-only' }) => void): void {
  const { generation } = useContext(ActivityContext);
  const seen = useRef(generation);
  const latest = useRef(refresh);
  latest.current = refresh;
  useEffect(() => {
    if (generation === seen.current) return;
    seen.current = generation;
    latest.current({ requestPolicy: 'network-only' });
  }, [generation]);
}

/** Keeps the live events of a key coming while the calling component is on screen (a revoked key has none to come). */
export function useWatchKey(keyId: string, active: boolean): void {
  const { watch } = useContext(ActivityContext);
  useEffect(() => (active ? watch(keyId) : undefined), [watch, keyId, active]);
}

/** Calls `listener` with each live event of the key. */
export function useKeyEvents(keyId: string, listener: Listener<KeyEventFieldsFragment>): void {
  const { keyEvents } = useContext(ActivityContext);
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => {
    const forKey: Listener<KeyEventFieldsFragment> = (event) => event.keyId === keyId && latest.current(event);
    keyEvents.add(forKey);
    return () => void keyEvents.delete(forKey);
  }, [keyEvents, keyId]);
}

/** Calls `listener` with each live video update of the account. */
export function useVideoUpdates(listener: Listener<VideoFieldsFragment>): void {
  const { videoUpdates } = useContext(ActivityContext);
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => {
    const each: Listener<VideoFieldsFragment> = (video) => latest.current(video);
    videoUpdates.add(each);
    return () => void videoUpdates.delete(each);
  }, [videoUpdates]);
}
