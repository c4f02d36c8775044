import type { MikroORM } from '@mikro-orm/postgresql';
import type { CredentialStore, NewSession } from '../domain/accounts/credential-store';
import { Session, User } from '../domain/accounts/entities';
import { ApiKey } from '../domain/keys/entities';

/** The CredentialStore on PostgreSQL (through MikroORM; one raw statement batches last uses). */
export class PgCredentialStore implements CredentialStore {
  constructor(private readonly orm: MikroORM) {}

  findLiveKey(secretHash: string): Promise<ApiKey | null> {
    return this.orm.em.fork().findOne(ApiKey, { secretHash, revokedAt: null }, { populate: ['user.plan'] });
  }

  async noteKeysUsed(uses: ReadonlyArray<readonly [keyId: string, at: Date]>): Promise<void> {
    if (uses.length === 0) return;
    const values = uses.map(() => '(?, ?::timestamptz)').join(', ');
    await this.orm.em
      .fork()
      .getConnection()
      .execute(
        `update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.at), v.at) from (values ${values}) as v(id, at) where k.id = v.id`,
        uses.flatMap(([id, at]) => [id, at.toISOString()]),
      );
  }

  findUserByEmail(email: string): Promise<User | null> {
    return this.orm.em.fork().findOne(User, { email });
  }

  async insertSession(session: NewSession): Promise<Session> {
    const em = this.orm.em.fork();
    const row = em.create(Session, {
      id: session.id,
      user: session.userId,
      tokenHash: session.tokenHash,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
      revokedAt: null,
    });
    await em.flush();
    return row;
  }

  async revokeSession(sessionId: string, at: Date): Promise<void> {
    await this.orm.em.fork().nativeUpdate(Session, { id: sessionId, revokedAt: null }, { revokedAt: at });
  }

  async liveSessionIds(sessionIds: readonly string[], now: Date): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const rows = await this.orm.em
      .fork()
      .find(Session, { id: { $in: [...sessionIds] }, revokedAt: null, expiresAt: { $gt: now } }, { fields: ['id'] });
    return rows.map((row) => row.id);
  }

  findUnrevokedSession(tokenHash: string): Promise<Session | null> {
    return this.orm.em.fork().findOne(Session, { tokenHash, revokedAt: null }, { populate: ['user'] });
  }
}
