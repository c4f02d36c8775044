import { badRequest } from '../shared/errors';
import { parseMicroString } from '../shared/money';
import { KEY_KINDS, type KeyKind } from './entities';

/**
 * Input rules for keys, written once and called by both planes with their own field names
 * (`monthly_spend_limit_micro` over REST, `monthlySpendLimitMicro` over GraphQL).
 */
export const MIN_SPEND_LIMIT_MICRO = 1_000_000n; // $1
export const MAX_SPEND_LIMIT_MICRO = 100_000_000_000n; // $100,000

/** A decimal string of micro-dollars from $1 to $100,000, or null (no limit). */
export function parseSpendLimit(value: unknown, field: string): bigint | null {
  if (value === null) return null;
  const micro = parseMicroString(value);
  if (micro === undefined) {
    throw badRequest(`${field} must be a decimal string of micro-dollars (for example "25000000" for $25) or null`);
  }
  if (micro < MIN_SPEND_LIMIT_MICRO || micro > MAX_SPEND_LIMIT_MICRO) {
    throw badRequest(`${field} must be from 1000000 ($1) to 100000000000 ($100,000) micro-dollars`);
  }
  return micro;
}

export function parseKeyName(value: unknown, field: string): string {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  const name = value.trim();
  if (name.length < 1 || name.length > 100) throw badRequest(`${field} must be 1 to 100 characters`);
  // Control characters (NUL among them, which PostgreSQL cannot store) have no place in a name.
  if (/[\u0000-\u001f\u007f]/.test(name)) throw badRequest(`${field} must not contain control characters`);
  return name;
}

export function parseKeyKind(value: unknown, field: string): KeyKind {
  if (typeof value !== 'string' || !KEY_KINDS.includes(value as KeyKind)) {
    throw badRequest(`${field} must be one of ${KEY_KINDS.join(', ')}`);
  }
  return value as KeyKind;
}
