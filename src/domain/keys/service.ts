import { LockMode, type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/postgresql';
import { Account, User } from '../accounts/entities';
import { API_KEY_PREFIX, type SessionPrincipal } from '../shared/principal';
import { KeyMonthSpend } from '../billing/entities';
import { utcMonthKey, type Clock } from '../shared/clock';
import { badRequest, keyRevoked, notFound } from '../shared/errors';
import { TOPIC_KEY_EVENTS, type EventBus, type KeyEventView } from '../shared/events';
import { isWellFormedId, type IdGenerator } from '../shared/ids';
import { hashToken, randomToken } from '../shared/secrets';
import { ApiKey, KeyEvent, type KeyEventKind } from './entities';
import type { KeyKind } from '../shared/principal';

/** What both planes show of a key (never its hash). */
export interface KeyView {
  id: string;
  name: string;
  kind: KeyKind;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  monthlySpendLimitMicro: bigint | null;
  /** Settled charges this UTC month. */
  monthSpentMicro: bigint;
}

/** Who changes a key: a signed-in user, or the operator (userId null: the events name no user). */
export interface KeyActor {
  accountId: string;
  userId: string | null;
}

export interface KeyPage {
  data: KeyView[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

export interface KeyEventPage {
  data: KeyEventView[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

export interface CreateKeyInput {
  name: string;
  kind: KeyKind;
  monthlySpendLimitMicro: bigint | null;
  expiresAt: Date | null;
}

export interface UpdateKeyInput {
  name?: string;
  /** undefined: unchanged; null: remove the limit. */
  monthlySpendLimitMicro?: bigint | null;
}

const SECRET_LENGTH = 44;
export const PREFIX_LENGTH = 12;

export const toEventView = (event: KeyEvent): KeyEventView => ({
  id: event.id,
  keyId: event.key.id,
  accountId: event.account.id,
  kind: event.kind,
  createdAt: event.createdAt,
  actorUserId: event.actorUserId,
  data: event.data,
});

/** Key management for signed-in users; each change writes a key event and publishes it. */
export class KeyService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
  ) {}

  /** A signed-in user creates a key of their own account, owned by themselves. */
  createKey(actor: SessionPrincipal, input: CreateKeyInput): Promise<{ key: KeyView; secret: string }> {
    return this.insertKey({ accountId: actor.accountId, userId: actor.userId, actorUserId: actor.userId }, input);
  }

  /**
   * The operator creates a key for an account, optionally owned by one of its users (a plan
   * key must be: it draws on that user's plan). The key event names no actor (the system).
   */
  async createKeyAsOperator(
    owner: { accountId: string; userId: string | null },
    input: CreateKeyInput,
  ): Promise<{ key: KeyView; secret: string }> {
    const em = this.orm.em.fork();
    if (!(await em.count(Account, { id: owner.accountId }))) throw notFound(`No account '${owner.accountId}'.`);
    if (owner.userId !== null && !(await em.count(User, { id: owner.userId, account: owner.accountId }))) {
      throw notFound(`No user '${owner.userId}' in account '${owner.accountId}'.`);
    }
    if (owner.userId === null && input.kind === 'plan') throw badRequest('A plan key needs a user with a plan', { field: 'key.kind' });
    return this.insertKey({ ...owner, actorUserId: null }, input);
  }

  private async insertKey(
    owner: { accountId: string; userId: string | null; actorUserId: string | null },
    input: CreateKeyInput,
  ): Promise<{ key: KeyView; secret: string }> {
    const now = this.clock.now();
    if (input.expiresAt && input.expiresAt <= now) throw badRequest('Expiry must be in the future', { field: 'key.expiresAt' });
    const em = this.orm.em.fork();
    if (input.kind === 'plan') {
      const user = owner.userId === null ? null : await em.findOneOrFail(User, owner.userId);
      if (!user?.plan) throw badRequest('A plan key needs a user with a plan; this user has none', { field: 'key.kind' });
      if (input.monthlySpendLimitMicro !== null)
        throw badRequest('Monthly limit applies to prepaid keys only', { field: 'key.monthlySpendLimit' });
    }
    const secret = API_KEY_PREFIX + randomToken(SECRET_LENGTH);
    const key = em.create(ApiKey, {
      id: this.ids.next('key'),
      account: owner.accountId,
      user: owner.userId,
      name: input.name,
      kind: input.kind,
      prefix: secret.slice(0, PREFIX_LENGTH),
      secretHash: hashToken(secret),
      createdAt: now,
      expiresAt: input.expiresAt,
      monthlySpendLimitMicro: input.monthlySpendLimitMicro,
    });
    const event = this.addEvent(em, key, 'created', owner.actorUserId, {
      name: key.name,
      kind: key.kind,
      monthly_spend_limit_micro: key.monthlySpendLimitMicro?.toString() ?? null,
    });
    await em.flush();
    this.publish([event]);
    return { key: this.toView(key, 0n), secret };
  }

  /**
   * A page of the account's keys, newest first (keyset on the id, which sorts by creation):
   * `search` matches the name or the prefix (case-insensitive), `status` active or revoked.
   */
  async listKeyPage(
    accountId: string,
    page: { limit: number; after: string | null; search: string | null; status: 'active' | 'revoked' | null },
  ): Promise<KeyPage> {
    if (page.after !== null && !isWellFormedId(page.after, 'key'))
      throw badRequest('The page cursor must be the id of a key of this account', { field: 'page.after' });
    const em = this.orm.em.fork();
    const where: FilterQuery<ApiKey> = { account: accountId };
    if (page.after !== null) where.id = { $lt: page.after };
    if (page.status === 'active') where.revokedAt = null;
    if (page.status === 'revoked') where.revokedAt = { $ne: null };
    if (page.search !== null) {
      const like = `%${page.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.$or = [{ name: { $ilike: like } }, { prefix: { $ilike: like } }];
    }
    const rows = await em.find(ApiKey, where, { orderBy: { id: 'desc' }, limit: page.limit + 1 });
    const keys = rows.slice(0, page.limit);
    const spent = await this.monthSpent(
      em,
      keys.map((k) => k.id),
    );
    const data = keys.map((key) => this.toView(key, spent.get(key.id) ?? 0n));
    return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: rows.length > page.limit };
  }

  async listKeys(accountId: string): Promise<KeyView[]> {
    const em = this.orm.em.fork();
    const keys = await em.find(ApiKey, { account: accountId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
    const spent = await this.monthSpent(
      em,
      keys.map((k) => k.id),
    );
    return keys.map((key) => this.toView(key, spent.get(key.id) ?? 0n));
  }

  async getKey(accountId: string, keyId: string): Promise<KeyView> {
    const em = this.orm.em.fork();
    const key = await this.findOwnKey(em, accountId, keyId);
    const spent = await this.monthSpent(em, [key.id]);
    return this.toView(key, spent.get(key.id) ?? 0n);
  }

  async updateKey(actor: KeyActor, keyId: string, input: UpdateKeyInput): Promise<KeyView> {
    const em = this.orm.em.fork();
    const events = await em.transactional(async (tx) => {
      const key = await this.findOwnKey(tx, actor.accountId, keyId, true);
      // A revoked key is history: changing it would rewrite what it was while it served requests.
      if (key.revokedAt) throw keyRevoked(keyId, key.revokedAt);
      const written: KeyEvent[] = [];
      if (input.name !== undefined && input.name !== key.name) {
        written.push(this.addEvent(tx, key, 'renamed', actor.userId, { old_name: key.name, new_name: input.name }));
        key.name = input.name;
      }
      if (input.monthlySpendLimitMicro !== undefined && input.monthlySpendLimitMicro !== key.monthlySpendLimitMicro) {
        if (key.kind === 'plan' && input.monthlySpendLimitMicro !== null)
          throw badRequest('Monthly limit applies to prepaid keys only', { field: 'key.monthlySpendLimit' });
        written.push(
          this.addEvent(tx, key, 'spend_limit_changed', actor.userId, {
            old_limit_micro: key.monthlySpendLimitMicro?.toString() ?? null,
            new_limit_micro: input.monthlySpendLimitMicro?.toString() ?? null,
          }),
        );
        key.monthlySpendLimitMicro = input.monthlySpendLimitMicro;
      }
      return written;
    });
    this.publish(events);
    return this.getKey(actor.accountId, keyId);
  }

  /** Idempotent: revoking a revoked key returns it unchanged and writes no second event. */
  async revokeKey(actor: KeyActor, keyId: string): Promise<KeyView> {
    const em = this.orm.em.fork();
    const events = await em.transactional(async (tx) => {
      const key = await this.findOwnKey(tx, actor.accountId, keyId, true);
      if (key.revokedAt) return [];
      key.revokedAt = this.clock.now();
      return [this.addEvent(tx, key, 'revoked', actor.userId, {})];
    });
    this.publish(events);
    return this.getKey(actor.accountId, keyId);
  }

  /** Newest first; `after` is an event id of this key (the page starts after it). */
  async listEvents(accountId: string, keyId: string, page: { limit: number; after: string | null }): Promise<KeyEventPage> {
    const em = this.orm.em.fork();
    await this.findOwnKey(em, accountId, keyId);
    if (page.after !== null) {
      if (!isWellFormedId(page.after, 'kev'))
        throw badRequest('The page cursor must be the id of an event of this key', { field: 'page.after' });
      const anchor = await em.findOne(KeyEvent, { id: page.after, key: keyId });
      if (!anchor) throw badRequest('The page cursor must be the id of an event of this key', { field: 'page.after' });
    }
    const rows = await em.find(KeyEvent, page.after === null ? { key: keyId } : { key: keyId, id: { $lt: page.after } }, {
      orderBy: { id: 'desc' },
      limit: page.limit + 1,
    });
    const data = rows.slice(0, page.limit).map(toEventView);
    return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: rows.length > page.limit };
  }

  /** Checks that the key belongs to the account (404 `not_found` otherwise, also for other accounts' keys). */
  async assertOwnKey(accountId: string, keyId: string): Promise<void> {
    await this.findOwnKey(this.orm.em.fork(), accountId, keyId);
  }

  private async findOwnKey(em: EntityManager, accountId: string, keyId: string, forUpdate = false): Promise<ApiKey> {
    if (!isWellFormedId(keyId, 'key')) throw notFound(`No key '${keyId}' in this account.`);
    const key = await em.findOne(ApiKey, { id: keyId, account: accountId }, forUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
    if (!key) throw notFound(`No key '${keyId}' in this account.`);
    return key;
  }

  private addEvent(
    em: EntityManager,
    key: ApiKey,
    kind: KeyEventKind,
    actorUserId: string | null,
    data: Record<string, unknown>,
  ): KeyEvent {
    return em.create(KeyEvent, {
      id: this.ids.next('kev'),
      key,
      account: key.account,
      kind,
      actorUserId,
      data,
      createdAt: this.clock.now(),
    });
  }

  private publish(events: KeyEvent[]): void {
    for (const event of events) this.bus.publish(TOPIC_KEY_EVENTS, toEventView(event));
  }

  private async monthSpent(em: EntityManager, keyIds: string[]): Promise<Map<string, bigint>> {
    if (keyIds.length === 0) return new Map();
    const rows = await em.find(KeyMonthSpend, { key: { $in: keyIds }, month: utcMonthKey(this.clock.now()) });
    return new Map(rows.map((row) => [row.key.id, row.settledMicro]));
  }

  private toView(key: ApiKey, monthSpentMicro: bigint): KeyView {
    return {
      id: key.id,
      name: key.name,
      kind: key.kind,
      prefix: key.prefix,
      createdAt: key.createdAt,
      lastUsedAt: key.lastUsedAt,
      expiresAt: key.expiresAt,
      revokedAt: key.revokedAt,
      monthlySpendLimitMicro: key.monthlySpendLimitMicro,
      monthSpentMicro,
    };
  }
}
