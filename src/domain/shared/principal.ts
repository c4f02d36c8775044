import { walletKeyRequired } from './errors';

/*
 * Who is calling, as every domain folder and both planes see it: an API key, a signed-in
 * session or the operator. Kept apart from authentication (accounts/auth.ts) so that the
 * folders that only need to know the caller do not depend on how it was established.
 */

/** Prepaid keys draw on the account balance; plan keys on their user's plan allowance. */
export type KeyKind = 'prepaid' | 'plan';

/** Secrets say what they are, so a session-only path can tell an API key apart (403, not 401). */
export const API_KEY_PREFIX = 'tgk_';
export const SESSION_TOKEN_PREFIX = 'tgs_';

export interface PlanInfo {
  id: string;
  name: string;
  models: readonly string[];
  monthlyAllowanceMicro: bigint;
  requestsPerMinute: number;
}

export interface KeyPrincipal {
  type: 'key';
  keyId: string;
  accountId: string;
  userId: string | null;
  kind: KeyKind;
  monthlySpendLimitMicro: bigint | null;
  /** The plan of the key's user, for plan-billed keys. */
  plan: PlanInfo | null;
}

export interface SessionPrincipal {
  type: 'session';
  sessionId: string;
  userId: string;
  accountId: string;
  /** When the session expires (what it opened, live feeds included, ends then). */
  expiresAt: Date;
}

export interface OperatorPrincipal {
  type: 'operator';
}

/**
 * The one rule of the media capabilities (images, videos and their model lists): they charge
 * the account's prepaid balance, so plan-billed keys cannot use them (403).
 */
export function requirePrepaidKey(principal: KeyPrincipal): void {
  if (principal.kind !== 'prepaid') throw walletKeyRequired();
}

/** The token of an `Authorization: Bearer <token>` value (HTTP header or graphql-ws parameter); null when it is not one. */
export function bearerCredential(authorization: unknown): string | null {
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1]! : null;
}
