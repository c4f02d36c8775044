import type { ApiKey } from '../keys/entities';
import type { Session, User } from './entities';

/**
 * What authentication needs of the database, as a port: API keys by secret hash, users by
 * email, and sessions. Rows come back as the entities, the one shape of each table. The
 * PostgreSQL adapter is src/infra/pg-credential-store.ts.
 */
export interface CredentialStore {
  /** The unrevoked key with this secret hash, its user and the user's plan loaded; null when none. */
  findLiveKey(secretHash: string): Promise<ApiKey | null>;
  /** Raises each key's last use to at least the time given (never lowers it). */
  noteKeysUsed(uses: ReadonlyArray<readonly [keyId: string, at: Date]>): Promise<void>;
  /** `email` is already lower-cased. */
  findUserByEmail(email: string): Promise<User | null>;
  insertSession(session: NewSession): Promise<Session>;
  /** Marks the session revoked, unless it already is. */
  revokeSession(sessionId: string, at: Date): Promise<void>;
  /** Of these sessions, the ids not revoked and expiring after `now`. */
  liveSessionIds(sessionIds: readonly string[], now: Date): Promise<string[]>;
  /** The unrevoked session with this token hash, its user loaded (expiry is the caller's check); null when none. */
  findUnrevokedSession(tokenHash: string): Promise<Session | null>;
}

export interface NewSession {
  id: string;
  userId: string;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
}
