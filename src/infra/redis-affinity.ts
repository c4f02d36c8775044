import { hash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SharedAffinity } from '../domain/routing/affinity';

/**
 * Prompt-cache affinity shared by every instance on one Redis (domain/routing/affinity.ts): one
 * key per conversation, `<prefix>routing:affinity:<hash>`, holding the deployment that served its
 * last turn, set with PX = the sticky TTL after each turn (fire and forget). Read only when an
 * instance does not know a named conversation itself, and then waited for at most
 * `readTimeoutMs` (TOLLGATE_ROUTING_AFFINITY_WAIT_MS, 20 ms): a slow or absent Redis costs a conversation its warm cache, never
 * its request. Keys are hashed: a client's session header may be long.
 */
export class RedisSharedAffinity implements SharedAffinity {
  /** When a failure was last logged: an outage is logged once, not per request (again after a minute at most). */
  private lastErrorLogAt = -Infinity;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly log: Logger,
    private readonly readTimeoutMs: number,
  ) {
    this.prefix = `${keyPrefix}routing:affinity:`;
  }

  private readonly prefix: string;

  remember(conversation: string, deployment: string, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.redis.set(this.keyOf(conversation), deployment, 'PX', ttlMs).catch(this.failed);
  }

  recall(conversation: string): Promise<string | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.failed(new Error(`no answer within ${this.readTimeoutMs} ms`));
        resolve(null);
      }, this.readTimeoutMs);
      this.redis.get(this.keyOf(conversation)).then(
        (deployment) => {
          clearTimeout(timer);
          resolve(deployment);
        },
        (error: unknown) => {
          clearTimeout(timer);
          this.failed(error);
          resolve(null);
        },
      );
    });
  }

  private keyOf(conversation: string): string {
    return this.prefix + hash('sha1', conversation, 'base64url');
  }

  private readonly failed = (error: unknown): void => {
    if (Date.now() - this.lastErrorLogAt < 60_000) return;
    this.lastErrorLogAt = Date.now();
    this.log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'redis (conversation affinity) unreachable or slow: affinity is per instance until it answers again',
    );
  };
}
