import type { AuthService } from '../domain/accounts/auth';
import type { Clock } from '../domain/shared/clock';
import { invalidToken, type ApiError } from '../domain/shared/errors';
import { TOPIC_SESSION_ENDED, type EventBus } from '../domain/shared/events';
import type { SessionPrincipal } from '../domain/shared/principal';

/** setTimeout's largest delay (about 24.8 days); a longer session is caught by the next check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Watched {
  ends: Set<(error: ApiError) => void>;
  timer: NodeJS.Timeout | null;
}

/**
 * Live feeds (graphql-ws subscriptions) end with the session that opened them: at sign-out on
 * any instance (the event bus carries it through Redis), at expiry (a timer), and when the
 * session disappears any other way (its user deleted, a row revoked by hand), found by a
 * periodic check of the sessions this instance serves feeds to. A feed that ends this way
 * fails with 401 `invalid_token`, so a client knows to sign in again rather than retry.
 */
export class SessionFeeds {
  private readonly watched = new Map<string, Watched>();
  private live = 0;
  private readonly unsubscribe: () => void;
  private readonly checkTimer: NodeJS.Timeout;

  constructor(
    private readonly auth: AuthService,
    bus: EventBus,
    private readonly clock: Clock,
    checkIntervalMs: number,
  ) {
    this.unsubscribe = bus.subscribe(TOPIC_SESSION_ENDED, (event) => this.end(event.sessionId));
    this.checkTimer = setInterval(() => void this.check().catch(() => undefined), checkIntervalMs);
    this.checkTimer.unref();
  }

  /** `source`, until the session ends: then the next read fails with `invalid_token` and `source` is returned. */
  feed<T>(session: SessionPrincipal, source: AsyncIterableIterator<T>): AsyncIterableIterator<T> {
    let endedWith: ApiError | null = null;
    let fail: (error: ApiError) => void = () => undefined;
    const ended = new Promise<never>((_resolve, reject) => (fail = reject));
    ended.catch(() => undefined); // read by next(); never unhandled
    let finished = false;
    // graphql-js does not return the source when a read fails, so the feed lets go of it itself.
    const finish = async (): Promise<IteratorResult<T>> => {
      if (!finished) {
        finished = true;
        stop();
        await source.return?.();
      }
      return { value: undefined, done: true };
    };
    const stop = this.watch(session, (error) => {
      endedWith = error;
      fail(error);
      // The feed has ended either way; a source that fails to close has nothing left to tell.
      finish().catch(() => undefined);
    });
    return {
      next: async () => {
        if (endedWith) throw endedWith;
        const result = await Promise.race([source.next(), ended]);
        if (endedWith) throw endedWith;
        return result;
      },
      return: finish,
      throw: async (error?: unknown) => {
        await finish();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  private watch(session: SessionPrincipal, end: (error: ApiError) => void): () => void {
    let entry = this.watched.get(session.sessionId);
    if (!entry) {
      const untilExpiry = session.expiresAt.getTime() - this.clock.nowMs();
      entry = {
        ends: new Set(),
        timer: untilExpiry <= MAX_TIMER_MS ? setTimeout(() => this.end(session.sessionId), Math.max(0, untilExpiry)) : null,
      };
      entry.timer?.unref();
      this.watched.set(session.sessionId, entry);
    }
    entry.ends.add(end);
    this.live++;
    return () => {
      this.live--;
      entry.ends.delete(end);
      if (entry.ends.size === 0 && this.watched.get(session.sessionId) === entry) this.forget(session.sessionId);
    };
  }

  /** Feeds open on this instance (a metric). */
  count(): number {
    return this.live;
  }

  private end(sessionId: string): void {
    const entry = this.watched.get(sessionId);
    if (!entry) return;
    this.forget(sessionId);
    const error = invalidToken('The session ended (signed out, expired or removed): sign in again.');
    for (const end of entry.ends) end(error);
  }

  private forget(sessionId: string): void {
    const entry = this.watched.get(sessionId);
    if (entry?.timer) clearTimeout(entry.timer);
    this.watched.delete(sessionId);
  }

  /** Ends the feeds of sessions that are no longer valid however they went (one query for all). */
  async check(): Promise<void> {
    if (this.watched.size === 0) return;
    const ids = [...this.watched.keys()];
    const live = await this.auth.liveSessionIds(ids);
    for (const id of ids) if (!live.has(id)) this.end(id);
  }

  close(): void {
    clearInterval(this.checkTimer);
    this.unsubscribe();
    for (const id of [...this.watched.keys()]) this.forget(id);
  }
}
