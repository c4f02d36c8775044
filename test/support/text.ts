import { randomBytes } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Logger } from 'pino';
import { Client } from 'pg';
import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { Catalog, TextModel } from '../../src/domain/catalog/types';
import { textChargeMicro, type TokenUsage } from '../../src/domain/billing/pricing';
import { ADMIN_TOKEN, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from './tollgate';

/**
 * Shared by the text-* integration tests: a Tollgate in front of the vendor fakes, accounts
 * pinned to a high tier (so admission never refuses a test's bursts), the official SDK
 * clients pointed at it, and the money read straight from PostgreSQL.
 */

export interface TextHarness {
  t: TestTollgate;
  db: Client;
  stop(): Promise<void>;
}

export async function startTextHarness(env: Record<string, string> = {}, options: { log?: Logger } = {}): Promise<TextHarness> {
  const t = await startTestTollgate({ env, log: options.log });
  const db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  return {
    t,
    db,
    stop: async () => {
      await db.end();
      await t.stop();
    },
  };
}

export interface TextAccount {
  accountId: string;
  sessionToken: string;
  keyId: string;
  secret: string;
  openai: OpenAI;
  anthropic: Anthropic;
}

/** No retries: a 502 must reach the test as it was answered, and the fake must see one request. */
export const openaiClient = (url: string, apiKey: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
export const anthropicClient = (url: string, apiKey: string) => new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });

/** A funded prepaid account pinned to tier 5, with one prepaid key and both SDK clients. */
export async function textAccount(t: TestTollgate, options: { fundsMicro?: string; plan?: string | null } = {}): Promise<TextAccount> {
  const account = await provisionAccount(t.url, { fundsMicro: options.fundsMicro ?? '100000000', plan: options.plan ?? null });
  const pinned = await graphql(
    t.url,
    'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}',
    { a: account.accountId },
    ADMIN_TOKEN,
  );
  if (pinned.errors) throw new Error(JSON.stringify(pinned.errors));
  const key = await createKey(t.url, account.sessionToken);
  return {
    accountId: account.accountId,
    sessionToken: account.sessionToken,
    keyId: key.id,
    secret: key.secret,
    openai: openaiClient(t.url, key.secret),
    anthropic: anthropicClient(t.url, key.secret),
  };
}

/** A fresh request id, sent as `x-request-id` so the test can find its hold, charge and usage record. */
export function requestId(): string {
  return `test-${randomBytes(8).toString('hex')}`;
}

/** Request options for both SDKs: our request id. */
export const withId = (id: string) => ({ headers: { 'x-request-id': id } });

export const catalog: Catalog = builtinCatalog();
export function textModel(id: string): TextModel {
  const model = findModel(catalog, id, 'text');
  if (!model) throw new Error(`no text model ${id}`);
  return model;
}

/** What the provider's usage costs for a model, exactly (micro-dollars, rounded once). */
export function expectedCharge(model: TextModel | string, usage: TokenUsage): bigint {
  const m = typeof model === 'string' ? textModel(model) : model;
  return textChargeMicro(m.pricing!, usage);
}

export interface UsageRow {
  hold_id: string;
  model: string;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_5m_input_tokens: number;
  cache_write_1h_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_micro: string;
  overage_micro: string;
  status: string;
}

export interface RequestMoney {
  /** Usage records written for the request (one per settled or released hold). */
  usage: UsageRow[];
  /** Ledger `charge` rows of the request's holds, signed (negative). */
  charges: bigint[];
}

/** Everything the request left in the money tables, found through its request id. */
export async function moneyOf(db: Client, id: string): Promise<RequestMoney> {
  const usage = await db.query<UsageRow>(
    `select hold_id, model, input_tokens, cached_input_tokens, cache_write_5m_input_tokens, cache_write_1h_input_tokens, output_tokens,
            reasoning_tokens, cost_micro::text, overage_micro::text, status from usage_records where request_id = $1`,
    [id],
  );
  const holdIds = usage.rows.map((r) => r.hold_id);
  const charges = await db.query<{ amount_micro: string }>(
    `select amount_micro::text from ledger_entries where kind = 'charge' and hold_id = any($1::text[])`,
    [holdIds],
  );
  return { usage: usage.rows, charges: charges.rows.map((r) => BigInt(r.amount_micro)) };
}

/**
 * Waits until the request is settled: its usage record is written in the same transaction as
 * its charge (cut and abandoned streams settle after the client saw the end).
 */
export async function settledMoneyOf(db: Client, id: string, timeoutMs = 5_000): Promise<RequestMoney> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const money = await moneyOf(db, id);
    if (money.usage.length > 0) return money;
    if (Date.now() > deadline) return money;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface AccountMoney {
  balance: bigint;
  ledgerSum: bigint;
  reserved: bigint;
  /** Active request holds (budget leases not counted). */
  activeHolds: number;
  /** What the account's active budget leases still reserve (billing/leases.ts). */
  leased: bigint;
}

export async function accountMoney(db: Client, accountId: string): Promise<AccountMoney> {
  const { rows } = await db.query<{ balance: string; ledger: string; reserved: string; active: number; leased: string }>(
    `select a.balance_micro::text as balance, a.reserved_micro::text as reserved,
            (select coalesce(sum(amount_micro), 0)::text from ledger_entries l where l.account_id = a.id) as ledger,
            (select count(*)::int from holds h where h.account_id = a.id and h.status = 'active' and h.purpose <> 'lease') as active,
            (select coalesce(sum(amount_micro), 0)::text from holds h where h.account_id = a.id and h.status = 'active' and h.purpose = 'lease') as leased
       from accounts a where a.id = $1`,
    [accountId],
  );
  const row = rows[0]!;
  return {
    balance: BigInt(row.balance),
    ledgerSum: BigInt(row.ledger),
    reserved: BigInt(row.reserved),
    activeHolds: row.active,
    leased: BigInt(row.leased),
  };
}

/**
 * The request was charged exactly `expected` once: one `charge` ledger row of −expected, one
 * usage record; and the account is consistent (balance = Σ ledger, nothing
 * reserved, no active hold).
 */
export async function expectChargedExactly(
  h: TextHarness,
  account: { accountId: string },
  id: string,
  expected: bigint,
): Promise<RequestMoney> {
  const money = await settledMoneyOf(h.db, id);
  expect(expected).toBeGreaterThan(0n);
  expect(money.charges).toEqual([-expected]);
  expect(money.usage).toHaveLength(1);
  expect(BigInt(money.usage[0]!.cost_micro)).toBe(expected);
  await expectConsistent(h, account);
  return money;
}

/** Nothing charged for the request: no charge row, a `failed` usage record at cost 0. */
export async function expectNothingCharged(h: TextHarness, account: { accountId: string }, id: string): Promise<RequestMoney> {
  const money = await settledMoneyOf(h.db, id);
  expect(money.charges).toEqual([]);
  expect(money.usage.map((u) => [u.status, u.cost_micro])).toEqual([['failed', '0']]);
  await expectConsistent(h, account);
  return money;
}

/**
 * Balance = Σ ledger; no request hold left open; what is reserved is exactly what the
 * instance's budget leases still hold (given back when idle, see billing/leases.ts).
 */
export async function expectConsistent(h: TextHarness, account: { accountId: string }): Promise<void> {
  const money = await accountMoney(h.db, account.accountId);
  expect(money.balance).toBe(money.ledgerSum);
  expect(money.activeHolds).toBe(0);
  expect(money.reserved).toBe(money.leased);
}

/** Waits for a condition polled every 20 ms (abort propagation, settlement after a cut). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/** Parses a raw SSE body into (event, data) frames, for assertions on the wire format itself. */
export function sseFrames(body: string): Array<{ event: string | null; data: string }> {
  return body
    .split(/\n\n/)
    .map((block) => block.trim())
    .filter((block) => block !== '' && !block.startsWith(':'))
    .map((block) => {
      let event: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      return { event, data: data.join('\n') };
    });
}
