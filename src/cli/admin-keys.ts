import { parseSpendLimit } from '../domain/keys/rules';
import { USAGE_STATUSES } from '../domain/billing/queries';
import { parseUsdDecimal } from '../domain/shared/money';
import { parseDay } from '../domain/usage/spend';
import { optionalString, requireString, UsageError, type OptionSpec, type ParsedOptions } from './args';
import type { OperatorServices } from './database';
import type { Printable } from './output';
import { keyOutput, keysOutput, requestsOutput, spendOutput } from './usage-output';

/**
 * The operator's side of what the dashboard shows: an account's keys (list, limit, revoke), its
 * spend and its request log, through the same domain services as the planes.
 */
export const KEY_USAGE_HELP = `  list-keys      --account <id> [--search <text>] [--status active|revoked]
  set-key-limit  --account <id> --key <id> (--monthly-limit-micro <micro-dollars> | --monthly-limit-usd <dollars> | --no-limit)
  revoke-key     --account <id> --key <id>
  spend          --account <id> [--by day|model|key] [--from YYYY-MM-DD] [--to YYYY-MM-DD]
                 (UTC days, inclusive; default the 30 days ending today, by day)
  requests       --account <id> [--key <id>] [--model <id>] [--status ok|partial|failed]
                 [--from <ISO time>] [--to <ISO time>] [--limit <1-1000, default 50>] [--after <id>]
                 (the request log, newest first)
`;

type AdminRun = (services: OperatorServices) => Promise<Printable>;
const str = { type: 'string' } as const;

function parseLimitOption(v: ParsedOptions): bigint | null {
  const micro = optionalString(v, 'monthly-limit-micro');
  const dollars = optionalString(v, 'monthly-limit-usd');
  const none = v['no-limit'] === true;
  if ([micro !== undefined, dollars !== undefined, none].filter(Boolean).length !== 1)
    throw new UsageError('set-key-limit: give exactly one of --monthly-limit-micro, --monthly-limit-usd or --no-limit');
  if (none) return null;
  if (dollars !== undefined) {
    if (!/^\d+(\.\d{1,6})?$/.test(dollars))
      throw new UsageError('set-key-limit: --monthly-limit-usd must be dollars with at most 6 decimals (25 or 25.50)');
    return parseSpendLimit(parseUsdDecimal(dollars).toString());
  }
  return parseSpendLimit(micro!);
}

function isoOption(command: string, v: ParsedOptions, name: string): Date | null {
  const raw = optionalString(v, name);
  if (raw === undefined) return null;
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime()))
    throw new UsageError(`${command}: --${name} must be an ISO-8601 time (2026-11-01T00:00:00Z)`);
  return at;
}

function choice<T extends string>(command: string, v: ParsedOptions, name: string, allowed: readonly T[]): T | null {
  const raw = optionalString(v, name);
  if (raw === undefined) return null;
  if (!(allowed as readonly string[]).includes(raw)) throw new UsageError(`${command}: --${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

export const KEY_USAGE_COMMANDS: Record<string, (values: ParsedOptions) => AdminRun> = {
  'list-keys': (v) => {
    const accountId = requireString('list-keys', v, 'account');
    const search = optionalString(v, 'search') ?? null;
    const status = choice('list-keys', v, 'status', ['active', 'revoked'] as const);
    return async (s) => {
      await s.accounts.getAccount(accountId); // 'No account …' rather than an empty list
      const keys = [];
      let after: string | null = null;
      for (;;) {
        const page = await s.keys.listKeyPage(accountId, { limit: 100, after, search, status });
        keys.push(...page.data);
        if (!page.hasMore) break;
        after = page.lastId;
      }
      return keysOutput(keys, new Date());
    };
  },
  'set-key-limit': (v) => {
    const accountId = requireString('set-key-limit', v, 'account');
    const keyId = requireString('set-key-limit', v, 'key');
    const limit = parseLimitOption(v);
    return async (s) =>
      keyOutput(await s.keys.updateKey({ accountId, userId: null }, keyId, { monthlySpendLimitMicro: limit }), new Date());
  },
  'revoke-key': (v) => {
    const accountId = requireString('revoke-key', v, 'account');
    const keyId = requireString('revoke-key', v, 'key');
    return async (s) => keyOutput(await s.keys.revokeKey({ accountId, userId: null }, keyId), new Date());
  },
  spend: (v) => {
    const accountId = requireString('spend', v, 'account');
    const groupBy = choice('spend', v, 'by', ['day', 'model', 'key'] as const) ?? 'day';
    const from = optionalString(v, 'from') ?? null;
    const to = optionalString(v, 'to') ?? null;
    if (from !== null) parseDay(from, 'usage.from', '--from');
    if (to !== null) parseDay(to, 'usage.to', '--to');
    return async (s) => {
      await s.accounts.getAccount(accountId);
      return spendOutput(await s.usage.spend(accountId, { groupBy, from, to, keyId: null, model: null }));
    };
  },
  requests: (v) => {
    const accountId = requireString('requests', v, 'account');
    const limitRaw = optionalString(v, 'limit') ?? '50';
    if (!/^\d{1,4}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 1000)
      throw new UsageError('requests: --limit must be from 1 to 1000');
    const filter = {
      keyId: optionalString(v, 'key') ?? null,
      model: optionalString(v, 'model') ?? null,
      status: choice('requests', v, 'status', USAGE_STATUSES),
      from: isoOption('requests', v, 'from'),
      to: isoOption('requests', v, 'to'),
    };
    const after = optionalString(v, 'after') ?? null;
    return async (s) => {
      await s.accounts.getAccount(accountId);
      const page = await s.usage.requestLog(accountId, { ...filter, limit: Number(limitRaw), after });
      return requestsOutput(page.data, page.hasMore ? page.lastId : null);
    };
  },
};

export const KEY_USAGE_OPTIONS: Record<string, OptionSpec> = {
  'list-keys': { account: str, search: str, status: str },
  'set-key-limit': { account: str, key: str, 'monthly-limit-micro': str, 'monthly-limit-usd': str, 'no-limit': { type: 'boolean' } },
  'revoke-key': { account: str, key: str },
  spend: { account: str, by: str, from: str, to: str },
  requests: { account: str, key: str, model: str, status: str, from: str, to: str, limit: str, after: str },
};
