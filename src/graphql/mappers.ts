import type { AccountView, UserView } from '../domain/accounts/service';
import type { KeyView } from '../domain/keys/service';
import type { KeyEventView } from '../domain/shared/events';
import type { AccountType, ApiKeyType, KeyEventType, UserType } from './types';

const iso = (at: Date | null): string | null => at?.toISOString() ?? null;

export const toAccountType = (a: AccountView): AccountType => ({
  id: a.id,
  name: a.name,
  balanceMicro: a.balanceMicro.toString(),
  reservedMicro: a.reservedMicro.toString(),
  availableMicro: a.availableMicro.toString(),
  lifetimeTopUpsMicro: a.lifetimeTopUpsMicro.toString(),
  tier: a.tier.tier,
  tierOverride: a.tierOverride,
  tierLimits: {
    tier: a.tier.tier,
    requestsPerSecond: a.tier.requestsPerSecond,
    requestsPerMinute: a.tier.requestsPerMinute,
    tokensPerMinute: a.tier.tokensPerMinute,
    concurrentRequests: a.tier.concurrentRequests,
  },
  createdAt: a.createdAt.toISOString(),
});

export const toUserType = (u: UserView): UserType => ({ ...u, createdAt: u.createdAt.toISOString() });

export const toApiKeyType = (k: KeyView): ApiKeyType => ({
  id: k.id,
  name: k.name,
  kind: k.kind,
  prefix: k.prefix,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: iso(k.lastUsedAt),
  expiresAt: iso(k.expiresAt),
  revokedAt: iso(k.revokedAt),
  monthlySpendLimitMicro: k.monthlySpendLimitMicro?.toString() ?? null,
  monthSpentMicro: k.monthSpentMicro.toString(),
});

export const toKeyEventType = (e: KeyEventView): KeyEventType => ({
  id: e.id,
  keyId: e.keyId,
  kind: e.kind,
  createdAt: e.createdAt.toISOString(),
  actorUserId: e.actorUserId,
  data: e.data,
});
