import { Client } from 'pg';
import type { LeaseOp, SettleOp } from '../../src/domain/billing/lease-store';
import { leaseOpsParams } from '../../src/infra/pg-lease-store';

/*
 * The settlement batch's array literals, read back by PostgreSQL itself: every text arrives as
 * sent (quotes, backslashes, commas, braces, the word NULL), null as NULL, numbers as numbers.
 */

let client: Client;

beforeAll(async () => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required (see README, Testing)');
  client = new Client({ connectionString: url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
});

/** Every parameter as tollgate_apply_lease_ops takes it (PostgreSQL wants each one typed). */
const READ_BACK = `select $1::int[] as seq, $2::text[] as lease, $3::text[] as hold, $4::bigint[]::text[] as cost, $5::bigint[]::text[] as held,
  $6::text[] as model, $7::timestamptz[] as at, $8::text[] as ledger, $9::text[] as usage, $10::text[] as status, $11::text[] as request,
  $12::int[] as input, $13::int[] as cached, $14::int[] as w5m, $15::int[] as w1h, $16::int[] as output, $17::int[] as reasoning,
  $18::int[] as latency, $19::text[] as deployment, $20::jsonb as others`;

const settle = (n: number, text: string, requestId: string | null): SettleOp => ({
  op: 'settle',
  leaseId: `lease_${n}`,
  holdId: `hold_${n}`,
  costMicro: 12_345_678_901n * BigInt(n),
  holdMicro: 99_000_000_000n,
  model: text,
  // Pairs share a millisecond (formatted once), then the next one differs.
  atMs: Date.UTC(2026, 10, 26, 12, 0, 0, Math.floor(n / 2)),
  ledgerId: `led_${n}`,
  usageId: `use_${n}`,
  usageStatus: 'ok',
  requestId,
  inputTokens: n,
  cachedInputTokens: 0,
  cacheWrite5mInputTokens: 0,
  cacheWrite1hInputTokens: 0,
  outputTokens: 2_147_483_647,
  reasoningTokens: 0,
  latencyMs: 7,
  deployment: n % 2 === 0 ? null : text,
});

test('texts, nulls and numbers of a batch reach PostgreSQL as they were', async () => {
  const awkward = ['plain', 'a "quoted" one', 'back\\slash', 'comma, and {braces}', 'NULL', '', 'ünïcödé \\"'];
  const ops: LeaseOp[] = [
    { op: 'renew', leaseId: 'lease_r', expiresAt: new Date(0) },
    ...awkward.map((text, i) => settle(i + 1, text, i === 2 ? null : `req_${text}`)),
  ];
  const params = leaseOpsParams(ops);
  const { rows } = await client.query(READ_BACK, params);
  const settles = ops.filter((op): op is SettleOp => op.op === 'settle');
  expect(rows[0]).toMatchObject({
    seq: settles.map((_, i) => i + 1),
    model: awkward,
    request: settles.map((op) => op.requestId),
    deployment: settles.map((op) => op.deployment),
    cost: settles.map((op) => op.costMicro.toString()),
    output: settles.map((op) => op.outputTokens),
    at: settles.map((op) => new Date(op.atMs)),
  });
  expect(rows[0].others).toEqual([{ seq: 0, op: 'renew', lease_id: 'lease_r', expires_at: new Date(0).toISOString() }]);
});

test('a batch without settlements sends empty arrays', async () => {
  const params = leaseOpsParams([{ op: 'trim', leaseId: 'lease_t', byMicro: 5n }]);
  const { rows } = await client.query(READ_BACK, params);
  expect(rows[0]).toMatchObject({ seq: [], lease: [], cost: [], model: [], at: [], output: [] });
});
