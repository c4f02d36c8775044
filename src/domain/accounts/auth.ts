import type { Clock } from '../shared/clock';
import { invalidToken, sessionRequired } from '../shared/errors';
import { TOPIC_KEY_EVENTS, TOPIC_SESSION_ENDED, type EventBus } from '../shared/events';
import type { IdGenerator } from '../shared/ids';
import {
  API_KEY_PREFIX,
  SESSION_TOKEN_PREFIX,
  type KeyPrincipal,
  type OperatorPrincipal,
  type SessionPrincipal,
} from '../shared/principal';
import { constantTimeEqual, hashToken, randomToken, verifyPassword } from '../shared/secrets';
import type { CredentialStore } from './credential-store';
import type { SignInThrottle } from './sign-in-throttle';

// Principals and secret prefixes are shared by every domain folder: they live in shared/principal.ts.

interface CachedKey {
  principal: KeyPrincipal;
  expiresAt: Date | null;
  cachedAt: number;
}

const KEY_CACHE_TTL_MS = 60_000;
const KEY_CACHE_MAX = 50_000;
const LAST_USED_FLUSH_MS = 30_000;

/**
 * Authentication of API keys, sessions and the operator. API-key lookups are cached in
 * memory (the hot path does no database read for a known key); every key event (revoke,
 * limit change, ...) published on the bus drops the key's entry at once, on every instance
 * that shares the bus. `last_used_at` is batched and written at most every 30 s.
 */
export class AuthService {
  private readonly keyCache = new Map<string, CachedKey>();
  private readonly hashByKeyId = new Map<string, string>();
  /** When each key was last used (ms), written in batches. */
  private readonly lastUsed = new Map<string, number>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: CredentialStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
    private readonly options: { adminToken: string | null; sessionTtlSeconds: number },
    private readonly throttle: SignInThrottle,
  ) {
    this.unsubscribe = bus.subscribe(TOPIC_KEY_EVENTS, (event) => this.forgetKey(event.keyId));
    this.flushTimer = setInterval(() => void this.flushLastUsed().catch(() => undefined), LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    this.unsubscribe();
    // last_used_at is informational: shutdown never fails on it.
    await this.flushLastUsed().catch(() => undefined);
    await this.throttle.close();
  }

  forgetKey(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash) this.keyCache.delete(hash);
    this.hashByKeyId.delete(keyId);
  }

  /** The API key behind `secret`, or 401 `invalid_token` when it is wrong, revoked or expired. */
  // Not an async function: a cached key (nearly every request) is answered without awaiting anything.
  authenticateApiKey(secret: string): Promise<KeyPrincipal> {
    try {
      if (!secret.startsWith(API_KEY_PREFIX)) throw invalidToken();
      const hash = hashToken(secret);
      const now = this.clock.nowMs();
      const cached = this.keyCache.get(hash);
      if (cached && now - cached.cachedAt <= KEY_CACHE_TTL_MS) return Promise.resolve(this.keyInUse(cached, now));
      return this.loadKey(hash, now).then((loaded) => {
        if (!loaded) throw invalidToken();
        return this.keyInUse(loaded, now);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** An authenticated key's principal, unless it has expired; its use is noted for last_used_at. */
  private keyInUse(cached: CachedKey, now: number): KeyPrincipal {
    if (cached.expiresAt && cached.expiresAt.getTime() <= now) throw invalidToken('The API key has expired.');
    this.lastUsed.set(cached.principal.keyId, now);
    return cached.principal;
  }

  private async loadKey(hash: string, now: number): Promise<CachedKey | undefined> {
    const key = await this.store.findLiveKey(hash);
    if (!key || !constantTimeEqual(key.secretHash, hash)) return undefined;
    const plan = key.kind === 'plan' ? key.user?.getEntity().plan?.getEntity() : undefined;
    const entry: CachedKey = {
      principal: {
        type: 'key',
        keyId: key.id,
        accountId: key.account.id,
        userId: key.user?.id ?? null,
        kind: key.kind,
        monthlySpendLimitMicro: key.monthlySpendLimitMicro,
        plan: plan
          ? {
              id: plan.id,
              name: plan.name,
              models: plan.models,
              monthlyAllowanceMicro: plan.monthlyAllowanceMicro,
              requestsPerMinute: plan.requestsPerMinute,
            }
          : null,
      },
      expiresAt: key.expiresAt,
      cachedAt: now,
    };
    if (this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.clear();
    this.keyCache.set(hash, entry);
    this.hashByKeyId.set(key.id, hash);
    return entry;
  }

  private async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = [...this.lastUsed].map(([keyId, at]): [string, Date] => [keyId, new Date(at)]);
    this.lastUsed.clear();
    await this.store.noteKeysUsed(batch);
  }

  /**
   * `clientAddress` is the caller's network address, for the throttle of failed sign-ins
   * (sign-in-throttle.ts): 429 `rate_limited` before the password is checked while it waits.
   */
  async signIn(
    email: string,
    password: string,
    clientAddress: string | undefined,
  ): Promise<{ token: string; expiresAt: Date; session: SessionPrincipal }> {
    if (email.includes('\u0000')) throw invalidToken('The email or password is wrong.'); // no stored email has one
    const normalized = email.trim().toLowerCase();
    const attempt = await this.throttle.claim(normalized, clientAddress);
    const user = await this.store.findUserByEmail(normalized);
    // Verify against a dummy hash when the user is unknown, so timing does not reveal which emails exist.
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (!user || !ok) throw invalidToken('The email or password is wrong.');
    await attempt.succeeded();
    return this.createSession(user.id, user.account.id);
  }

  async createSession(userId: string, accountId: string): Promise<{ token: string; expiresAt: Date; session: SessionPrincipal }> {
    const token = SESSION_TOKEN_PREFIX + randomToken(40);
    const now = this.clock.now();
    const session = await this.store.insertSession({
      id: this.ids.next('ses'),
      userId,
      tokenHash: hashToken(token),
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.options.sessionTtlSeconds * 1000),
    });
    return {
      token,
      expiresAt: session.expiresAt,
      session: { type: 'session', sessionId: session.id, userId, accountId, expiresAt: session.expiresAt },
    };
  }

  /** Ends the session; what it opened elsewhere (live feeds, on any instance) ends with it. */
  async signOut(sessionId: string): Promise<void> {
    await this.store.revokeSession(sessionId, this.clock.now());
    this.bus.publish(TOPIC_SESSION_ENDED, { sessionId });
  }

  /** Of these sessions, the ones still valid now (not signed out, expired or deleted with their user). */
  async liveSessionIds(sessionIds: readonly string[]): Promise<Set<string>> {
    if (sessionIds.length === 0) return new Set();
    return new Set(await this.store.liveSessionIds(sessionIds, this.clock.now()));
  }

  /** The session behind a bearer token; a valid API key gets 403 `session_required`. */
  async authenticateSession(token: string): Promise<SessionPrincipal> {
    if (token.startsWith(SESSION_TOKEN_PREFIX)) {
      const session = await this.store.findUnrevokedSession(hashToken(token));
      if (session && session.expiresAt > this.clock.now()) {
        return {
          type: 'session',
          sessionId: session.id,
          userId: session.user.id,
          accountId: session.user.getEntity().account.id,
          expiresAt: session.expiresAt,
        };
      }
      throw invalidToken('The session token is wrong, signed out or expired.');
    }
    if (token.startsWith(API_KEY_PREFIX)) {
      await this.authenticateApiKey(token);
      throw sessionRequired();
    }
    throw invalidToken('The token is not a valid session token.');
  }

  /** The operator when the token is `TOLLGATE_ADMIN_TOKEN`, else as authenticateSession. */
  async authenticateSessionOrOperator(token: string): Promise<SessionPrincipal | OperatorPrincipal> {
    if (this.isOperatorToken(token)) return { type: 'operator' };
    return this.authenticateSession(token);
  }

  isOperatorToken(token: string): boolean {
    const admin = this.options.adminToken;
    return admin !== null && constantTimeEqual(hashToken(token), hashToken(admin));
  }
}

const DUMMY_PASSWORD_HASH = 'scrypt$00000000000000000000000000000000$' + '0'.repeat(64);
