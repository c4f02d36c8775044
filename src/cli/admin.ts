import type { Config } from '../config';
import { parseKeyKind, parseKeyName, parseSpendLimit } from '../domain/keys/rules';
import { parseMicroString, parseUsdDecimal } from '../domain/shared/money';
import { randomToken } from '../domain/shared/secrets';
import { optionalString, parseOptions, requireString, UsageError, type OptionSpec, type ParsedOptions } from './args';
import { KEY_USAGE_COMMANDS, KEY_USAGE_HELP, KEY_USAGE_OPTIONS } from './admin-keys';
import { openOperatorServices, type OperatorServices } from './database';
import { listDeploymentsCommand } from './deployments';
import { accountOutput, accountsOutput, createdKeyOutput, plansOutput, render, tiersOutput, userOutput, type Printable } from './output';

export const ADMIN_USAGE = `Usage: tollgate admin <command> [options] [--json]

  create-account --name <name>
  create-user    --account <id> --email <email> [--password <pw>] [--plan <name>]
                 (without --password one is generated and printed once)
  add-funds      --account <id> (--amount-micro <micro-dollars> | --amount-usd <dollars>)
  set-tier       --account <id> --tier <n>        pin the account to a tier
  unpin-tier     --account <id>                   the tier follows lifetime top-ups again
  create-key     (--account <id> | --user <id>) --name <name> [--kind prepaid|plan]
                 [--monthly-limit-micro <micro-dollars>] [--expires-at <ISO time>]
                 (prints the secret once)
  list-accounts  every account with its balance and tier
  list-plans     the plans in the database
  list-tiers     the configured tiers
  list-deployments  every deployment of the routed models, with its health
                 (shared through REDIS_URL; docs/routing.md)

${KEY_USAGE_HELP}
--json prints JSON for scripts (money as strings of micro-dollars) instead of a table.
`;

type AdminRun = (services: OperatorServices) => Promise<Printable>;

const str = { type: 'string' } as const;

function parseAmount(command: string, values: ParsedOptions): bigint {
  const micro = optionalString(values, 'amount-micro');
  const dollars = optionalString(values, 'amount-usd');
  if ((micro === undefined) === (dollars === undefined))
    throw new UsageError(`${command}: give exactly one of --amount-micro or --amount-usd`);
  if (micro !== undefined) {
    const amount = parseMicroString(micro);
    if (amount === undefined) throw new UsageError(`${command}: --amount-micro must be a whole number of micro-dollars (25000000 is $25)`);
    return amount;
  }
  if (!/^\d+(\.\d{1,6})?$/.test(dollars!))
    throw new UsageError(`${command}: --amount-usd must be dollars with at most 6 decimals (25 or 25.50)`);
  return parseUsdDecimal(dollars!);
}

function parseTier(command: string, raw: string): number {
  if (!/^[0-9]{1,9}$/.test(raw)) throw new UsageError(`${command}: --tier must be a tier number`);
  return Number(raw);
}

function parseExpiry(command: string, raw: string | undefined): Date | null {
  if (raw === undefined) return null;
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime()))
    throw new UsageError(`${command}: --expires-at must be an ISO-8601 time (2027-01-31T00:00:00Z)`);
  return at;
}

/** Each command checks its arguments before the database is opened, so a typo costs nothing. */
const COMMANDS: Record<string, (values: ParsedOptions) => AdminRun> = {
  'create-account': (v) => {
    const name = requireString('create-account', v, 'name');
    return async (s) => accountOutput(await s.accounts.createAccount(name));
  },
  'create-user': (v) => {
    const accountId = requireString('create-user', v, 'account');
    const email = requireString('create-user', v, 'email');
    const given = optionalString(v, 'password');
    const plan = optionalString(v, 'plan') ?? null;
    return async (s) => {
      const password = given ?? randomToken(16);
      const user = await s.accounts.createUser({ accountId, email, password, plan });
      return userOutput(user, given === undefined ? password : null);
    };
  },
  'add-funds': (v) => {
    const accountId = requireString('add-funds', v, 'account');
    const amount = parseAmount('add-funds', v);
    return async (s) => accountOutput(await s.accounts.addFunds(accountId, amount));
  },
  'set-tier': (v) => {
    const accountId = requireString('set-tier', v, 'account');
    const tier = parseTier('set-tier', requireString('set-tier', v, 'tier'));
    return async (s) => accountOutput(await s.accounts.setAccountTier(accountId, tier));
  },
  'unpin-tier': (v) => {
    const accountId = requireString('unpin-tier', v, 'account');
    return async (s) => accountOutput(await s.accounts.setAccountTier(accountId, null));
  },
  'create-key': (v) => {
    const accountOption = optionalString(v, 'account');
    const userId = optionalString(v, 'user') ?? null;
    if (accountOption === undefined && userId === null) throw new UsageError('create-key: give --account or --user');
    const input = {
      name: parseKeyName(requireString('create-key', v, 'name')),
      kind: parseKeyKind(optionalString(v, 'kind') ?? 'prepaid'),
      monthlySpendLimitMicro: v['monthly-limit-micro'] === undefined ? null : parseSpendLimit(v['monthly-limit-micro']),
      expiresAt: parseExpiry('create-key', optionalString(v, 'expires-at')),
    };
    return async (s) => {
      // A user's key belongs to the user's account; --account, when also given, must agree.
      const accountId = userId === null ? accountOption! : (await s.accounts.getUser(userId)).accountId;
      if (accountOption !== undefined && accountOption !== accountId)
        throw new UsageError(`create-key: user '${userId}' is not in account '${accountOption}'`);
      const { key, secret } = await s.keys.createKeyAsOperator({ accountId, userId }, input);
      return createdKeyOutput(key, secret);
    };
  },
  'list-accounts': () => async (s) => accountsOutput(await s.accounts.listAccounts()),
  'list-plans': () => async (s) => plansOutput(await s.accounts.listPlans()),
  'list-tiers': () => async (s) => tiersOutput(s.accounts.listTiers()),
  ...KEY_USAGE_COMMANDS,
};

const OPTIONS: Record<string, OptionSpec> = {
  'create-account': { name: str },
  'create-user': { account: str, email: str, password: str, plan: str },
  'add-funds': { account: str, 'amount-micro': str, 'amount-usd': str },
  'set-tier': { account: str, tier: str },
  'unpin-tier': { account: str },
  'create-key': { account: str, user: str, name: str, kind: str, 'monthly-limit-micro': str, 'expires-at': str },
  'list-accounts': {},
  'list-plans': {},
  'list-tiers': {},
  'list-deployments': {},
  ...KEY_USAGE_OPTIONS,
};

/** `tollgate admin <command> …`: validates, opens the database, runs one domain operation, prints. */
export async function runAdmin(args: readonly string[], loadConfig: () => Config, out: NodeJS.WritableStream): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'list-deployments') {
    // No database: the catalog, the environment and the shared health.
    const values = parseOptions('admin list-deployments', rest, { json: { type: 'boolean' } });
    out.write(render(await listDeploymentsCommand(loadConfig()), values.json === true));
    return 0;
  }
  const prepare = COMMANDS[command];
  if (!prepare) throw new UsageError(`admin: unknown command '${command}' (try: tollgate admin --help)`);
  const values = parseOptions(`admin ${command}`, rest, { ...OPTIONS[command], json: { type: 'boolean' } });
  const run = prepare(values);
  const config = loadConfig();
  const services = await openOperatorServices(config);
  try {
    out.write(render(await run(services), values.json === true));
  } finally {
    await services.close();
  }
  return 0;
}
