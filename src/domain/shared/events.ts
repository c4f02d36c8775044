import { EventEmitter } from 'node:events';

/**
 * Publish/subscribe between parts of Tollgate (and, with a Redis implementation, between
 * instances): key events for GraphQL subscriptions and key-cache invalidation, video updates.
 */
export interface EventBus {
  publish(topic: string, payload: unknown): void;
  /** Returns the function that unsubscribes. */
  subscribe(topic: string, handler: (payload: unknown) => void): () => void;
}

export function inProcessEventBus(): EventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    publish: (topic, payload) => void emitter.emit(topic, payload),
    subscribe: (topic, handler) => {
      emitter.on(topic, handler);
      return () => void emitter.off(topic, handler);
    },
  };
}

/** An async iterator over a topic's payloads (for GraphQL subscriptions); ends when returned. */
export function subscribeIterator<T>(bus: EventBus, topic: string, accept: (payload: T) => boolean): AsyncIterableIterator<T> {
  const queue: T[] = [];
  let waiting: ((result: IteratorResult<T>) => void) | null = null;
  let done = false;
  const unsubscribe = bus.subscribe(topic, (payload) => {
    const value = payload as T;
    if (done || !accept(value)) return;
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve({ value, done: false });
    } else queue.push(value);
  });
  const finish = async (): Promise<IteratorResult<T>> => {
    done = true;
    unsubscribe();
    queue.length = 0;
    waiting?.({ value: undefined, done: true });
    waiting = null;
    return { value: undefined, done: true };
  };
  return {
    next: () => {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift() as T, done: false });
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

export const TOPIC_KEY_EVENTS = 'key-events';
