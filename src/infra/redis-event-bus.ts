import { randomUUID } from 'node:crypto';
import { connectRedis } from './redis-connection';
import type { Logger } from 'pino';
import { inProcessEventBus, isTopic, type EventBus, type EventEnvelope, type Topic } from '../domain/shared/events';

/**
 * The event bus across gateway instances (REDIS_URL set): every event is delivered locally at
 * once and published on one Redis channel; each instance re-publishes locally what the others
 * sent. So a key revoked on one instance leaves every instance's key cache at once, and a
 * graphql-ws subscriber sees events made on any instance. A Redis outage degrades to local
 * delivery (logged); the subscriber connection reconnects and resubscribes by itself.
 */
export interface ClosableEventBus extends EventBus {
  close(): Promise<void>;
}

/** An event on the channel: the sending instance (whose own events it ignores) and the event. */
type Envelope = EventEnvelope & { from: string };

/** JSON that keeps Dates and bigints (key events carry both). */
function encode(from: string, topic: Topic, payload: unknown): string {
  return JSON.stringify({ from, topic, payload }, function replacer(this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (typeof raw === 'bigint') return { $bigint: raw.toString() };
    return value;
  });
}

/** The event in a message, or null when it names no topic of ours (an instance of another version). */
function decode(text: string): Envelope | null {
  const envelope: { from?: unknown; topic?: unknown } | null = JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const tagged = value as { $date?: string; $bigint?: string };
      if (typeof tagged.$date === 'string' && Object.keys(tagged).length === 1) return new Date(tagged.$date);
      if (typeof tagged.$bigint === 'string' && Object.keys(tagged).length === 1) return BigInt(tagged.$bigint);
    }
    return value;
  });
  // The payload is trusted as its topic's: only gateway instances of this deployment publish here.
  return envelope !== null && typeof envelope.from === 'string' && isTopic(envelope.topic) ? (envelope as Envelope) : null;
}

export function createRedisEventBus(
  url: string,
  keyPrefix: string,
  log: Logger,
  options: { queueUntilConnected?: boolean } = {},
): ClosableEventBus {
  const local = inProcessEventBus();
  const instance = randomUUID();
  const channel = `${keyPrefix}events`;
  // Publishing fails fast while Redis is away (local delivery already happened); a one-off
  // command (the CLI revoking a key) instead queues its few events until connected, and close()
  // waits for them (bounded), so the gateways hear of them.
  const publisher = connectRedis(url, {
    enableOfflineQueue: options.queueUntilConnected === true,
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    commandTimeout: 500,
  });
  const pending = new Set<Promise<unknown>>();
  // The subscriber queues its SUBSCRIBE until connected and resubscribes after reconnects.
  const subscriber = connectRedis(url, { connectTimeout: 1_000, maxRetriesPerRequest: null });
  let lastWarning = 0;
  const warn = (error: unknown, what: string) => {
    if (Date.now() - lastWarning < 10_000) return;
    lastWarning = Date.now();
    log.warn({ err: error }, `event bus: ${what}; events reach this instance only until Redis is back`);
  };
  publisher.on('error', (error) => warn(error, 'Redis publisher error'));
  subscriber.on('error', (error) => warn(error, 'Redis subscriber error'));
  subscriber.on('message', (_channel: string, text: string) => {
    try {
      const envelope = decode(text);
      if (envelope === null) warn(new Error('unknown topic'), 'undecodable event');
      else if (envelope.from !== instance) local.deliver(envelope);
    } catch (error) {
      warn(error, 'undecodable event');
    }
  });
  subscriber.subscribe(channel).catch((error: unknown) => warn(error, 'subscribe failed'));

  return {
    publish(topic, payload) {
      local.publish(topic, payload);
      const sent = publisher.publish(channel, encode(instance, topic, payload)).catch((error: unknown) => warn(error, 'publish failed'));
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    },
    subscribe: (topic, handler) => local.subscribe(topic, handler),
    async close() {
      if (pending.size > 0)
        await Promise.race([Promise.allSettled([...pending]), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
