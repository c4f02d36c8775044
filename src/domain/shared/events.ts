import { EventEmitter } from 'node:events';
import type { KeyEventKind } from '../keys/entities';
import type { VideoStatus } from '../videos/entities';

/*
 * Publish/subscribe between parts of Tollgate (and, with the Redis adapter, between instances).
 * Every topic and the payload it carries is declared once, here, so a publisher and its
 * subscribers cannot disagree about a payload's shape. Payloads are plain data: they cross
 * instances as JSON (Dates and bigints are kept by the Redis adapter).
 */

/** A key's change, as both planes show it: GraphQL subscriptions, key-cache invalidation, leases. */
export interface KeyEventView {
  id: string;
  keyId: string;
  accountId: string;
  kind: KeyEventKind;
  createdAt: Date;
  actorUserId: string | null;
  data: Record<string, unknown>;
}

/** A video job as both planes show it. */
export interface VideoView {
  id: string;
  accountId: string;
  status: VideoStatus;
  model: string;
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
  progress: number;
  /** Epoch milliseconds. */
  createdAt: number;
  completedAt: number | null;
  expiresAt: number | null;
  error: { code: string; message: string } | null;
  /** Charged, micro-dollars (a decimal string: events cross instances as JSON), once a completed job is settled; else null. */
  chargedMicro: string | null;
}

/** An account's tier inputs changed (top-up, pinned tier): cached tiers of it are stale. */
export interface AccountChangedEvent {
  accountId: string;
}

/** An instance was refused for lack of an account's money: every instance gives back its slack. */
export interface BudgetPressureEvent {
  accountId: string;
}

/** A session ended before its expiry (signed out): what it opened ends, on every instance. */
export interface SessionEndedEvent {
  sessionId: string;
}

/** Every topic and its payload. */
export interface EventTopics {
  'key-events': KeyEventView;
  'video-updated': VideoView;
  'account-changed': AccountChangedEvent;
  'budget-pressure': BudgetPressureEvent;
  'session-ended': SessionEndedEvent;
}

export type Topic = keyof EventTopics;

export const TOPIC_KEY_EVENTS = 'key-events' satisfies Topic;
export const TOPIC_VIDEO_UPDATED = 'video-updated' satisfies Topic;
export const TOPIC_ACCOUNT_CHANGED = 'account-changed' satisfies Topic;
export const TOPIC_BUDGET_PRESSURE = 'budget-pressure' satisfies Topic;
export const TOPIC_SESSION_ENDED = 'session-ended' satisfies Topic;

const TOPICS: ReadonlySet<string> = new Set<Topic>([
  TOPIC_KEY_EVENTS,
  TOPIC_VIDEO_UPDATED,
  TOPIC_ACCOUNT_CHANGED,
  TOPIC_BUDGET_PRESSURE,
  TOPIC_SESSION_ENDED,
]);

export const isTopic = (topic: unknown): topic is Topic => typeof topic === 'string' && TOPICS.has(topic);

/** One event: a topic with its payload (what crosses instances). */
export type EventEnvelope = { [T in Topic]: { topic: T; payload: EventTopics[T] } }[Topic];

export interface EventBus {
  publish<T extends Topic>(topic: T, payload: EventTopics[T]): void;
  /** Returns the function that unsubscribes. */
  subscribe<T extends Topic>(topic: T, handler: (payload: EventTopics[T]) => void): () => void;
}

/** The bus of one process; `deliver` hands it an event that arrived from elsewhere (another instance). */
export interface LocalEventBus extends EventBus {
  deliver(event: EventEnvelope): void;
}

export function inProcessEventBus(): LocalEventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    publish: (topic, payload) => void emitter.emit(topic, payload),
    deliver: (event) => void emitter.emit(event.topic, event.payload),
    subscribe: (topic, handler) => {
      emitter.on(topic, handler);
      return () => void emitter.off(topic, handler);
    },
  };
}

/** An async iterator over a topic's payloads (for GraphQL subscriptions); ends when returned. */
export function subscribeIterator<T extends Topic>(
  bus: EventBus,
  topic: T,
  accept: (payload: EventTopics[T]) => boolean,
): AsyncIterableIterator<EventTopics[T]> {
  type Payload = EventTopics[T];
  const queue: Payload[] = [];
  let waiting: ((result: IteratorResult<Payload>) => void) | null = null;
  let done = false;
  const unsubscribe = bus.subscribe(topic, (value) => {
    if (done || !accept(value)) return;
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve({ value, done: false });
    } else queue.push(value);
  });
  const finish = async (): Promise<IteratorResult<Payload>> => {
    done = true;
    unsubscribe();
    queue.length = 0;
    waiting?.({ value: undefined, done: true });
    waiting = null;
    return { value: undefined, done: true };
  };
  return {
    next: () => {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => (waiting = resolve));
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
