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

export type Principal = KeyPrincipal | SessionPrincipal | OperatorPrincipal;

