import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';

/*
 * How failed sign-ins are throttled (docs/api.md, "Sign-in throttling"). Up to three counters
 * per attempt, each with a number of free failures and then a wait that doubles up to a cap:
 *   pair     (account, address): the guesser at one address, on one account;
 *   account  (all addresses): guessing spread over many addresses;
 *   address  (all accounts): one address trying many accounts (credential stuffing).
 * An attempt is refused while any of its counters waits; a refused attempt is not counted and
 * does not move a wait, so every wait ends. A success clears the pair and account counters and
 * remembers the address for the account; from a remembered address only the pair counts, so
 * an attacker elsewhere, however many addresses it has, cannot keep the account's user out.
 */

export interface BackoffRule {
  /** Failures before the first wait. */
  freeFailures: number;
  /** The first wait (ms); each further failure doubles it. */
  baseMs: number;
  /** No wait is longer. */
  capMs: number;
}

export const SIGN_IN_RULES = {
  pair: { freeFailures: 5, baseMs: 1_000, capMs: 15 * 60_000 },
  account: { freeFailures: 10, baseMs: 1_000, capMs: 15 * 60_000 },
  address: { freeFailures: 50, baseMs: 1_000, capMs: 15 * 60_000 },
} as const satisfies Record<string, BackoffRule>;

/** A counter is forgotten this long after its last failure. */
export const FAILURE_MEMORY_MS = 24 * 3600_000;
/** An address the account's user signed in from is trusted (no account-wide wait) this long. */
export const KNOWN_ADDRESS_MS = 30 * 24 * 3600_000;

/** The wait after the `failures`-th counted failure (0 while failures are free). */
export function backoffMs(failures: number, rule: BackoffRule): number {
  if (failures < rule.freeFailures) return 0;
  return Math.min(rule.capMs, rule.baseMs * 2 ** Math.min(failures - rule.freeFailures, 40));
}

/**
 * The address a client is counted by: IPv4 as it is (IPv4-mapped IPv6 included), IPv6 by its
 * /64 (one subscriber's whole block, which anyone holding it can rotate through).
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Counter keys name no email in clear (the store may be a shared Redis). */
export const accountKey = (email: string): string => createHash('sha256').update(email).digest('hex').slice(0, 32);
