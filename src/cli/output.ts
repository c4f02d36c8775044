import type { PlanDefinition } from '../domain/accounts/plans';
import type { AccountView, UserView } from '../domain/accounts/service';
import type { KeyView } from '../domain/keys/service';
import type { Tier } from '../domain/limits/tiers';
import { formatScaled } from '../domain/shared/money';

/**
 * What admin commands print: a record for `--json` (snake_case, money as decimal strings of
 * micro-dollars, like the REST plane) and a table for people (money in dollars).
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonRecord = { [key: string]: JsonValue };

export interface Printable {
  json: JsonRecord | JsonRecord[];
  columns: string[];
  rows: string[][];
  /** Lines printed after the table (people only), e.g. a secret shown once. */
  footer?: string[];
}

export const usd = (micro: bigint): string => `$${formatScaled(micro, 6)}`;

export function renderTable(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map(line)].join('\n') + '\n';
}

export function render(printable: Printable, json: boolean): string {
  if (json) return JSON.stringify(printable.json, null, 2) + '\n';
  const table = printable.rows.length === 0 ? '(none)\n' : renderTable(printable.columns, printable.rows);
  return table + (printable.footer?.length ? printable.footer.join('\n') + '\n' : '');
}

const ACCOUNT_COLUMNS = ['id', 'name', 'balance', 'available', 'lifetime top-ups', 'tier', 'created'];

export function accountRecord(a: AccountView): JsonRecord {
  return {
    id: a.id,
    name: a.name,
    balance_micro: a.balanceMicro.toString(),
    reserved_micro: a.reservedMicro.toString(),
    available_micro: a.availableMicro.toString(),
    lifetime_top_ups_micro: a.lifetimeTopUpsMicro.toString(),
    tier: a.tier.tier,
    tier_override: a.tierOverride,
    created_at: a.createdAt.toISOString(),
  };
}

const accountRow = (a: AccountView): string[] => [
  a.id,
  a.name,
  usd(a.balanceMicro),
  usd(a.availableMicro),
  usd(a.lifetimeTopUpsMicro),
  a.tierOverride === null ? String(a.tier.tier) : `${a.tier.tier} (pinned)`,
  a.createdAt.toISOString(),
];

export const accountsOutput = (accounts: AccountView[]): Printable => ({
  json: accounts.map(accountRecord),
  columns: ACCOUNT_COLUMNS,
  rows: accounts.map(accountRow),
});
export const accountOutput = (a: AccountView): Printable => ({ json: accountRecord(a), columns: ACCOUNT_COLUMNS, rows: [accountRow(a)] });

export function userOutput(u: UserView, generatedPassword: string | null): Printable {
  return {
    json: {
      id: u.id,
      account_id: u.accountId,
      email: u.email,
      plan: u.plan,
      created_at: u.createdAt.toISOString(),
      ...(generatedPassword ? { password: generatedPassword } : {}),
    },
    columns: ['id', 'account', 'email', 'plan'],
    rows: [[u.id, u.accountId, u.email, u.plan ?? '-']],
    footer: generatedPassword ? [`Password (generated, shown once): ${generatedPassword}`] : undefined,
  };
}

export function createdKeyOutput(k: KeyView, secret: string): Printable {
  return {
    json: {
      id: k.id,
      name: k.name,
      kind: k.kind,
      prefix: k.prefix,
      created_at: k.createdAt.toISOString(),
      expires_at: k.expiresAt?.toISOString() ?? null,
      monthly_spend_limit_micro: k.monthlySpendLimitMicro?.toString() ?? null,
      secret,
    },
    columns: ['id', 'name', 'kind', 'prefix', 'monthly limit', 'expires'],
    rows: [
      [
        k.id,
        k.name,
        k.kind,
        k.prefix,
        k.monthlySpendLimitMicro === null ? '-' : usd(k.monthlySpendLimitMicro),
        k.expiresAt?.toISOString() ?? '-',
      ],
    ],
    footer: [`Secret (shown once, store it now): ${secret}`],
  };
}

export const plansOutput = (plans: PlanDefinition[]): Printable => ({
  json: plans.map((p) => ({
    name: p.name,
    models: p.models,
    monthly_allowance_micro: p.monthlyAllowanceMicro.toString(),
    requests_per_minute: p.requestsPerMinute,
  })),
  columns: ['name', 'allowance', 'rpm', 'models'],
  rows: plans.map((p) => [p.name, usd(p.monthlyAllowanceMicro), String(p.requestsPerMinute), p.models.join(', ')]),
});

export const tiersOutput = (tiers: readonly Tier[]): Printable => ({
  json: tiers.map((t) => ({
    tier: t.tier,
    lifetime_top_ups_from_micro: t.fromMicro.toString(),
    requests_per_second: t.requestsPerSecond,
    requests_per_minute: t.requestsPerMinute,
    tokens_per_minute: t.tokensPerMinute,
    concurrent_requests: t.concurrentRequests,
  })),
  columns: ['tier', 'from', 'rps', 'rpm', 'tpm', 'concurrent'],
  rows: tiers.map((t) => [
    String(t.tier),
    usd(t.fromMicro),
    String(t.requestsPerSecond),
    String(t.requestsPerMinute),
    String(t.tokensPerMinute),
    String(t.concurrentRequests),
  ]),
});
