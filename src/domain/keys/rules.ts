import { badRequest } from '../shared/errors';
import { requireMicroString } from '../shared/money';
import { KEY_KINDS } from './entities';
import type { KeyKind } from '../shared/principal';

/**
 * Input rules for keys, written once and called by both planes and the CLI. Refusals speak the
 * user's words and units and carry a domain field key; each plane names the field its own way.
 */
export const MIN_SPEND_LIMIT_MICRO = 1_000_000n; // $1
export const MAX_SPEND_LIMIT_MICRO = 100_000_000_000n; // $100,000

/** A decimal string of micro-dollars from $1 to $100,000, or null (no limit). */
export function parseSpendLimit(value: unknown): bigint | null {
  if (value === null) return null;
  const micro = requireMicroString(value, 'Monthly limit', 'key.monthlySpendLimit');
  if (micro < MIN_SPEND_LIMIT_MICRO || micro > MAX_SPEND_LIMIT_MICRO) {
    throw badRequest('Monthly limit must be between $1 and $100,000', { field: 'key.monthlySpendLimit' });
  }
  return micro;
}

export function parseKeyName(value: unknown): string {
  if (typeof value !== 'string') throw badRequest('Key name must be a string', { field: 'key.name' });
  const name = value.trim();
  if (name.length < 1 || name.length > 100) throw badRequest('Key name must be 1 to 100 characters', { field: 'key.name' });
  // Control characters (NUL among them, which PostgreSQL cannot store) have no place in a name.
  if (/[\u0000-\u001f\u007f]/.test(name)) throw badRequest('Key name must not contain control characters', { field: 'key.name' });
  // Half of a surrogate pair (JSON can carry one as an escape) is no character: the key's events
  // keep the name in a JSON column, which PostgreSQL refuses to hold it in.
  if (/\p{Cs}/u.test(name))
    throw badRequest('Key name must be valid Unicode text (it holds half of a surrogate pair)', { field: 'key.name' });
  return name;
}

export function parseKeyKind(value: unknown): KeyKind {
  if (typeof value !== 'string' || !KEY_KINDS.includes(value as KeyKind)) {
    throw badRequest(`Key kind must be one of ${KEY_KINDS.join(', ')}`, { field: 'key.kind' });
  }
  return value as KeyKind;
}
