import { hash } from 'node:crypto';
import type { CanonicalRequest } from '../generation/canonical';

/**
 * Prompt-cache affinity (docs/routing.md, Stickiness): vendors cache a prompt's prefix per
 * account and region, so a conversation whose turns land on one deployment reads its prefix
 * from cache (cheaper, faster) where a move would write it again. A conversation is named by
 * the client's session header when it sends one, else by a hash of its leading messages (the
 * system prompt and first user turn do not change as it grows); the deployment that served its
 * last turn is remembered for about the vendor's cache lifetime and tried first. With a shared
 * store (Redis), every instance learns it: written after each turn, read on a local miss.
 */

/** Remembered conversations per instance; the oldest are forgotten beyond it. */
const MAX_CONVERSATIONS = 100_000;

interface Remembered {
  deployment: string;
  until: number;
}

/** Conversations' deployments as every instance sees them (src/infra/redis-affinity.ts). */
export interface SharedAffinity {
  /** Tells the other instances, for `ttlMs`; fire and forget (a failure loses a hint, never a request). */
  remember(conversation: string, deployment: string, ttlMs: number): void;
  /** The deployment another instance remembered; null when none, or when the store does not answer within a short wait. */
  recall(conversation: string): Promise<string | null>;
}

export class StickyRoutes {
  private readonly routes = new Map<string, Remembered>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly shared: SharedAffinity | null = null,
  ) {}

  /**
   * The conversation's deployment: this instance's, else the shared store's (a promise only
   * then: a local hit, or no store, costs no wait).
   */
  recall(conversation: string): string | null | Promise<string | null> {
    const local = this.get(conversation);
    return local !== null || this.shared === null ? local : this.shared.recall(conversation);
  }

  /** The deployment that served the conversation's last turn, while its cache is likely warm. */
  get(conversation: string): string | null {
    const remembered = this.routes.get(conversation);
    if (remembered === undefined) return null;
    if (remembered.until <= this.now()) {
      this.routes.delete(conversation);
      return null;
    }
    return remembered.deployment;
  }

  /** The deployment served this turn: its cache now holds the prefix, for another lifetime. */
  remember(conversation: string, deployment: string): void {
    // Re-inserted so that Map order is least recently used first.
    this.routes.delete(conversation);
    this.routes.set(conversation, { deployment, until: this.now() + this.ttlMs });
    if (this.routes.size > MAX_CONVERSATIONS) this.routes.delete(this.routes.keys().next().value!);
    this.shared?.remember(conversation, deployment, this.ttlMs);
  }
}

/** How much of the leading messages names a conversation (enough to tell two apart, bounded CPU). */
const LEADING_CHARS = 4096;

/**
 * The conversation a request continues: `session` (the client's session header) when sent, else
 * a hash of the model, the leading system messages and the first user message. Null for a
 * single-message request (a first turn without instructions has no prefix worth keeping warm).
 */
export function conversationKey(request: CanonicalRequest, session: string | null): string | null {
  if (session) return `s:${request.model.id}:${session}`;
  const { messages } = request;
  if (messages.length < 2) return null;
  let leading = request.model.id;
  for (const message of messages) {
    if (message.role !== 'system' && message.role !== 'user') break;
    leading += `\u0000${message.role}\u0000${message.content.length > LEADING_CHARS ? message.content.slice(0, LEADING_CHARS) : message.content}`;
    if (message.role === 'user') break;
  }
  // One-shot hash (no Hash object): a request's routing costs a few microseconds in all.
  return `h:${hash('sha1', leading, 'base64url')}`;
}
