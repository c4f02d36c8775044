import { graphql as executeGraphql, type GraphQLSchema } from 'graphql';
import { BillingService } from '../../src/domain/billing/service';
import type { BillingPrincipal, Overage } from '../../src/domain/billing/hold-requests';
import { SandboxPaymentPort, type PaymentPort } from '../../src/domain/billing/payments';
import { mediaCostMicro, textChargeMicro, textHoldMicro } from '../../src/domain/billing/pricing';
import { HoldSweeper } from '../../src/domain/billing/sweeper';
import { ManualClock, unixSeconds } from '../../src/domain/shared/clock';
import { ApiError } from '../../src/domain/shared/errors';
import { TOPIC_KEY_EVENTS } from '../../src/domain/shared/events';
import type { KeyEventView } from '../../src/domain/shared/events';
import { buildContext } from '../../src/graphql/context';
import { buildGraphqlSchema, formatError } from '../../src/graphql/server';
import pino from 'pino';
import { call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { pgHoldStore } from '../../src/infra/pg-hold-store';
import { pgAutoTopUpStore } from '../../src/infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from '../../src/infra/pg-spend-limit-store';
import { PgBillingReads } from '../../src/infra/pg-billing-reads';

const clock = new ManualClock(new Date('2026-11-15T12:00:00.000Z'));
let t: TestTollgate;
let payments: SandboxPaymentPort;
let billing: BillingService;
const accounts: string[] = [];
/** What the billing service reported as overage (a warning line and a metric in a running Tollgate). */
const overages: Overage[] = [];

beforeAll(async () => {
  t = await startTestTollgate({ clock });
  const s = t.tollgate.services;
  payments = new SandboxPaymentPort();
  billing = new BillingService(
    clock,
    s.ids,
    s.bus,
    payments,
    pgHoldStore(s.orm),
    new PgBillingReads(s.orm),
    pgAutoTopUpStore(s.orm),
    pgSpendLimitStore(s.orm),
    (overage) => overages.push(overage),
  );
});
afterAll(async () => t?.stop());

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await t.tollgate.services.orm.em.fork().execute(query, params as never[], 'all')) as unknown as T[];
}

async function accountRow(accountId: string) {
  const [row] = await sql<{ balance_micro: string; reserved_micro: string; lifetime_top_ups_micro: string }>(
    'select balance_micro, reserved_micro, lifetime_top_ups_micro from accounts where id = ?',
    [accountId],
  );
  return { balance: BigInt(row.balance_micro), reserved: BigInt(row.reserved_micro), lifetime: BigInt(row.lifetime_top_ups_micro) };
}

async function keyMonth(keyId: string, month: string) {
  const [row] = await sql<{ settled_micro: string; reserved_micro: string }>(
    'select settled_micro, reserved_micro from key_month_spend where key_id = ? and month = ?',
    [keyId, month],
  );
  return row ? { settled: BigInt(row.settled_micro), reserved: BigInt(row.reserved_micro) } : null;
}

async function ledger(accountId: string) {
  return sql<{ kind: string; amount_micro: string; hold_id: string | null; key_id: string | null }>(
    'select kind, amount_micro, hold_id, key_id from ledger_entries where account_id = ? order by id',
    [accountId],
  );
}

/** A funded account with one prepaid key (optionally limited), as the pipeline would see it. */
async function prepaid(options: { fundsMicro?: string; limitMicro?: string } = {}) {
  const p = await provisionAccount(t.url, { fundsMicro: options.fundsMicro });
  const key = await createKey(t.url, p.sessionToken, {
    name: 'billing test',
    ...(options.limitMicro ? { monthly_spend_limit_micro: options.limitMicro } : {}),
  });
  accounts.push(p.accountId);
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  return { ...p, key, principal };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const text = (principal: BillingPrincipal, amountMicro: bigint, ttlMs?: number) =>
  billing.reserveHold({ principal, purpose: 'text', model: 'openai/gpt-4o-mini', amountMicro, ttlMs });

describe('settlement', () => {
  beforeEach(() => clock.set(new Date('2026-11-15T12:00:00.000Z')));

  test('charges the exact cost below the hold and releases the rest', async () => {
    const { principal, key } = await prepaid({ fundsMicro: '5000000' });
    const prices = { inputPerMTokMicro: 150_000n, cachedInputPerMTokMicro: 75_000n, outputPerMTokMicro: 600_000n };
    const amountMicro = textHoldMicro(prices, { inputTokens: 1_000, maxOutputTokens: 4_096 });
    const hold = await text(principal, amountMicro);
    expect(hold).toMatchObject({ status: 'active', month: '2026-11', amountMicro });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n, reserved: amountMicro });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 0n, reserved: amountMicro });

    const usage = { inputTokens: 900, cachedInputTokens: 400, outputTokens: 700, reasoningTokens: 200 };
    const cost = textChargeMicro(prices, usage);
    expect(cost).toBeLessThan(amountMicro);
    const outcome = await billing.settleHold(hold.id, { costMicro: cost, usage, latencyMs: 123, requestId: 'req_1' });
    expect(outcome).toMatchObject({ applied: true, status: 'settled', chargedMicro: cost, autoTopUp: null });

    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n - cost, reserved: 0n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: cost, reserved: 0n });
    expect((await ledger(principal.accountId)).filter((l) => l.kind === 'charge')).toEqual([
      { kind: 'charge', amount_micro: (-cost).toString(), hold_id: hold.id, key_id: key.id },
    ]);
    const [record] = await sql('select * from usage_records where hold_id = ?', [hold.id]);
    expect(record).toMatchObject({
      key_id: key.id,
      model: 'openai/gpt-4o-mini',
      input_tokens: 900,
      cached_input_tokens: 400,
      output_tokens: 700,
      reasoning_tokens: 200,
      cost_micro: cost.toString(),
      status: 'ok',
      latency_ms: 123,
      request_id: 'req_1',
    });
    expect((await billing.getHold(hold.id))?.status).toBe('settled');
  });

  test('a cost above the hold is charged up to the hold: the excess is overage on the usage record, in no ledger row, and reported', async () => {
    const { principal, key } = await prepaid({ fundsMicro: '1000' });
    const hold = await text(principal, 1_000n);
    const outcome = await billing.settleHold(hold.id, {
      costMicro: 1_500n,
      usage: { inputTokens: 9_000, cacheWrite5mInputTokens: 10, cacheWrite1hInputTokens: 20 },
      requestId: 'req_over',
    });
    expect(outcome).toMatchObject({ applied: true, chargedMicro: 1_000n });
    // The balance never dips below zero, and balance = Σ ledger still holds.
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 0n, reserved: 0n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 1_000n, reserved: 0n });
    expect((await ledger(principal.accountId)).filter((l) => l.kind === 'charge').map((l) => l.amount_micro)).toEqual(['-1000']);
    const [record] = await sql(
      'select cost_micro, overage_micro, cache_write_5m_input_tokens, cache_write_1h_input_tokens from usage_records where hold_id = ?',
      [hold.id],
    );
    expect(record).toEqual({ cost_micro: '1000', overage_micro: '500', cache_write_5m_input_tokens: 10, cache_write_1h_input_tokens: 20 });
    expect((await billing.getHold(hold.id))?.chargedMicro).toBe(1_000n);
    expect(overages).toEqual([
      {
        requestId: 'req_over',
        accountId: principal.accountId,
        keyId: key.id,
        model: 'openai/gpt-4o-mini',
        holdMicro: 1_000n,
        costMicro: 1_500n,
        chargedMicro: 1_000n,
        overageMicro: 500n,
      },
    ]);
    expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
    // Settled again (a replay): nothing more is charged or reported.
    expect(await billing.settleHold(hold.id, { costMicro: 1_500n })).toMatchObject({ applied: false, chargedMicro: 1_000n });
    expect(overages).toHaveLength(1);
    const refused = await refusal(text(principal, 1n));
    expect(refused.code).toBe('api_insufficient_balance');
  });

  test("a key's monthly limit holds when the vendor over-reports: charged up to the hold, never past the limit", async () => {
    const { principal, key } = await prepaid({ fundsMicro: '5000000', limitMicro: '1000000' });
    const first = await text(principal, 600_000n);
    const second = await text(principal, 400_000n);
    await billing.settleHold(first.id, { costMicro: 900_000n });
    await billing.settleHold(second.id, { costMicro: 900_000n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 1_000_000n, reserved: 0n });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 4_000_000n, reserved: 0n });
    expect(overages.slice(-2).map((o) => o.overageMicro)).toEqual([300_000n, 500_000n]);
  });

  test('release on provider failure charges nothing; settle or release afterwards changes nothing', async () => {
    const { principal, key } = await prepaid({ fundsMicro: '5000000' });
    const hold = await text(principal, 40_000n);
    const released = await billing.releaseHold(hold.id, { recordFailure: true, latencyMs: 50, requestId: 'req_failed' });
    expect(released).toMatchObject({ applied: true, status: 'released', chargedMicro: 0n });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n, reserved: 0n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 0n, reserved: 0n });
    expect(await sql('select status, cost_micro from usage_records where hold_id = ?', [hold.id])).toEqual([
      { status: 'failed', cost_micro: '0' },
    ]);

    expect(await billing.releaseHold(hold.id)).toMatchObject({ applied: false, status: 'released' });
    expect(await billing.settleHold(hold.id, { costMicro: 30_000n })).toMatchObject({
      applied: false,
      status: 'released',
      chargedMicro: 0n,
    });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n, reserved: 0n });
    expect((await ledger(principal.accountId)).filter((l) => l.kind === 'charge')).toEqual([]);
    await expect(billing.settleHold('hold_unknown', { costMicro: 1n })).rejects.toMatchObject({ code: 'not_found' });
  });

  test('partial delivery is charged for what was delivered', async () => {
    const { principal } = await prepaid({ fundsMicro: '5000000' });
    const perImage = 42_000n;
    const hold = await billing.reserveHold({
      principal,
      purpose: 'image',
      model: 'openai/gpt-image-1',
      amountMicro: mediaCostMicro(perImage, 4),
    });
    expect(hold.expiresAt.getTime() - hold.createdAt.getTime()).toBe(15 * 60_000);
    const delivered = mediaCostMicro(perImage, 2);
    await billing.settleHold(hold.id, { costMicro: delivered, status: 'partial', usage: { images: 2 } });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n - 84_000n, reserved: 0n });
    expect(await sql('select status, images, cost_micro from usage_records where hold_id = ?', [hold.id])).toEqual([
      { status: 'partial', images: 2, cost_micro: '84000' },
    ]);
  });

  test('settling twice, or concurrently, charges once', async () => {
    const { principal, key } = await prepaid({ fundsMicro: '5000000' });
    const first = await text(principal, 10_000n);
    expect((await billing.settleHold(first.id, { costMicro: 7_000n })).applied).toBe(true);
    expect(await billing.settleHold(first.id, { costMicro: 9_000n })).toMatchObject({
      applied: false,
      status: 'settled',
      chargedMicro: 7_000n,
    });

    const second = await text(principal, 10_000n);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => billing.settleHold(second.id, { costMicro: BigInt(5_000 + i) })),
    );
    const applied = outcomes.filter((o) => o.applied);
    expect(applied).toHaveLength(1);
    for (const o of outcomes) expect(o.chargedMicro).toBe(applied[0].chargedMicro);

    const charges = (await ledger(principal.accountId)).filter((l) => l.kind === 'charge');
    expect(charges.map((c) => c.hold_id).sort()).toEqual([first.id, second.id].sort());
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n - 7_000n - applied[0].chargedMicro, reserved: 0n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 7_000n + applied[0].chargedMicro, reserved: 0n });
    expect(await sql('select count(*)::int as n from usage_records where hold_id in (?, ?)', [first.id, second.id])).toEqual([{ n: 2 }]);
  });
});

describe('refusals', () => {
  beforeEach(() => clock.set(new Date('2026-11-15T12:00:00.000Z')));

  test('insufficient balance: 402 naming the fix, nothing taken', async () => {
    const { principal, key } = await prepaid({ fundsMicro: '1000' });
    await text(principal, 600n);
    const refused = await refusal(text(principal, 401n));
    expect(refused).toMatchObject({
      status: 402,
      code: 'api_insufficient_balance',
      details: { required_micro: '401', available_micro: '400' },
    });
    expect(refused.message).toMatch(/add funds or enable automatic top-up/);
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 1_000n, reserved: 600n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 0n, reserved: 600n });
    await text(principal, 400n); // exactly the available rest
    expect((await accountRow(principal.accountId)).reserved).toBe(1_000n);
    for (const hold of await billing.listActiveHolds(principal.accountId)) await billing.releaseHold(hold.id);
  });

  test('spend limit: 402 with details, balance untouched, first refusal recorded once per month', async () => {
    clock.set(new Date('2026-11-29T10:00:00.000Z'));
    const { principal, key, sessionToken } = await prepaid({ fundsMicro: '50000000', limitMicro: '1000000' });
    const published: KeyEventView[] = [];
    const unsubscribe = t.tollgate.services.bus.subscribe(TOPIC_KEY_EVENTS, (e) => published.push(e as KeyEventView));
    try {
      const held = await text(principal, 600_000n);
      const decResetsAt = unixSeconds(new Date('2026-12-01T00:00:00Z'));
      const refused = await refusal(text(principal, 400_001n));
      expect(refused).toMatchObject({
        status: 402,
        code: 'api_key_spend_limit_reached',
        details: { limit_micro: '1000000', spent_micro: '600000', resets_at: decResetsAt },
      });
      // Step (a) was rolled back: only the successful hold is reserved on the account.
      expect(await accountRow(principal.accountId)).toMatchObject({ reserved: 600_000n });
      // Refused concurrently many times: still one event this month.
      const many = await Promise.all(Array.from({ length: 12 }, () => refusal(text(principal, 500_000n))));
      expect(new Set(many.map((e) => e.code))).toEqual(new Set(['api_key_spend_limit_reached']));
      await text(principal, 400_000n); // exactly up to the limit
      await billing.settleHold(held.id, { costMicro: 550_000n });

      const events = async () => {
        const response = await call(`${t.url}/v1/keys/${key.id}/events`, { token: sessionToken });
        return (response.body.data as { kind: string; data: Record<string, unknown>; actor_user_id: string | null }[]).filter(
          (e) => e.kind === 'spend_limit_reached',
        );
      };
      expect(await events()).toEqual([
        expect.objectContaining({ actor_user_id: null, data: { limit_micro: '1000000', spent_micro: '600000', resets_at: decResetsAt } }),
      ]);
      expect(published.filter((e) => e.keyId === key.id && e.kind === 'spend_limit_reached')).toHaveLength(1);

      // Raising the limit takes effect at once (the reservation reads the current limit).
      const patched = await call(`${t.url}/v1/keys/${key.id}`, {
        method: 'PATCH',
        token: sessionToken,
        body: { monthly_spend_limit_micro: '2000000' },
      });
      expect(patched.status).toBe(200);
      const afterRaise = await text(principal, 500_000n);
      expect((await billing.getKeyMonthSpend(principal.accountId, key.id)).spentMicro).toBe(550_000n + 400_000n + 500_000n);

      // December: a fresh month, a fresh budget, and a first refusal recorded again.
      clock.set(new Date('2026-12-02T08:00:00.000Z'));
      const december = await text(principal, 2_000_000n);
      const decRefused = await refusal(text(principal, 1n));
      expect(decRefused.details).toEqual({
        limit_micro: '2000000',
        spent_micro: '2000000',
        resets_at: unixSeconds(new Date('2027-01-01T00:00:00Z')),
      });
      await refusal(text(principal, 1n));
      expect(await events()).toHaveLength(2);
      expect(published.filter((e) => e.keyId === key.id && e.kind === 'spend_limit_reached')).toHaveLength(2);
      for (const hold of await billing.listActiveHolds(principal.accountId)) await billing.releaseHold(hold.id);
      expect([afterRaise.month, december.month]).toEqual(['2026-11', '2026-12']);
    } finally {
      unsubscribe();
    }
  });

  test('plan allowance: plan keys draw on the allowance, not the balance; 402 with details', async () => {
    const p = await provisionAccount(t.url, { plan: 'starter' }); // allowance $5, no prepaid funds
    accounts.push(p.accountId);
    const key = await createKey(t.url, p.sessionToken, { name: 'plan key', kind: 'plan' });
    const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'plan', userId: p.userId };
    const first = await text(principal, 4_000_000n);
    expect(await accountRow(p.accountId)).toMatchObject({ balance: 0n, reserved: 0n });
    const refused = await refusal(text(principal, 1_500_000n));
    expect(refused).toMatchObject({
      status: 402,
      code: 'plan_allowance_exhausted',
      details: { allowance_micro: '5000000', used_micro: '4000000', resets_at: unixSeconds(new Date('2026-12-01T00:00:00Z')) },
    });
    await billing.settleHold(first.id, { costMicro: 3_000_000n });
    expect(await sql('select used_micro, reserved_micro from plan_month_usage where user_id = ?', [p.userId])).toEqual([
      { used_micro: '3000000', reserved_micro: '0' },
    ]);
    expect(await ledger(p.accountId)).toEqual([]);
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 3_000_000n, reserved: 0n });
    const second = await text(principal, 1_500_000n);
    await billing.releaseHold(second.id);
    expect(await sql('select used_micro, reserved_micro from plan_month_usage where user_id = ?', [p.userId])).toEqual([
      { used_micro: '3000000', reserved_micro: '0' },
    ]);
  });
});

describe('month rollover', () => {
  test('a hold taken at the last millisecond of November books on November; December starts empty', async () => {
    clock.set(new Date('2026-11-30T20:00:00.000Z'));
    const { principal, key } = await prepaid({ fundsMicro: '10000000', limitMicro: '1000000' });
    clock.set(new Date('2026-11-30T23:59:59.999Z'));
    const hold = await text(principal, 900_000n);
    expect(hold.month).toBe('2026-11');

    clock.set(new Date('2026-12-01T00:00:00.000Z'));
    // December is empty even while November's hold is in flight: the whole limit is available.
    const decemberSpend = await billing.getKeyMonthSpend(principal.accountId, key.id);
    expect(decemberSpend).toMatchObject({
      month: '2026-12',
      spentMicro: 0n,
      limitMicro: 1_000_000n,
      resetsAt: new Date('2027-01-01T00:00:00Z'),
    });

    await billing.settleHold(hold.id, { costMicro: 800_000n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 800_000n, reserved: 0n });
    expect(await keyMonth(key.id, '2026-12')).toBeNull();
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 9_200_000n, reserved: 0n });

    const december = await text(principal, 1_000_000n);
    expect(december.month).toBe('2026-12');
    expect(await keyMonth(key.id, '2026-12')).toEqual({ settled: 0n, reserved: 1_000_000n });
    await billing.releaseHold(december.id);
    expect((await billing.getKeyMonthSpend(principal.accountId, key.id, '2026-11')).settledMicro).toBe(800_000n);
  });
});

describe('sweeper', () => {
  test('releases holds whose process died, once, and a late settlement charges nothing', async () => {
    clock.set(new Date('2026-11-16T09:00:00.000Z'));
    const { principal, key } = await prepaid({ fundsMicro: '5000000' });
    const orphan = await text(principal, 70_000n, 60_000);
    const live = await text(principal, 30_000n, 10 * 60_000);

    clock.advance(59_999);
    await billing.sweepExpiredHolds();
    expect((await billing.getHold(orphan.id))?.status).toBe('active');

    clock.advance(1);
    const sweepers = [new HoldSweeper(billing, { intervalMs: 10 }), new HoldSweeper(billing, { intervalMs: 10 })];
    await Promise.all(sweepers.map((s) => s.runOnce()));
    for (const s of sweepers) await s.stop();
    expect((await billing.getHold(orphan.id))?.status).toBe('released');
    expect((await billing.getHold(live.id))?.status).toBe('active');
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 5_000_000n, reserved: 30_000n });
    expect(await keyMonth(key.id, '2026-11')).toEqual({ settled: 0n, reserved: 30_000n });

    expect(await billing.settleHold(orphan.id, { costMicro: 50_000n })).toMatchObject({ applied: false, status: 'released' });
    await billing.settleHold(live.id, { costMicro: 20_000n });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 4_980_000n, reserved: 0n });
  });

  test('the interval sweeper runs by itself and stops', async () => {
    clock.set(new Date('2026-11-17T09:00:00.000Z'));
    const { principal } = await prepaid({ fundsMicro: '5000000' });
    const hold = await text(principal, 10_000n, 1_000);
    clock.advance(1_000);
    const swept: number[] = [];
    const sweeper = new HoldSweeper(billing, { intervalMs: 20, onSwept: (n) => swept.push(n) });
    sweeper.start();
    const deadline = Date.now() + 5_000;
    while ((await billing.getHold(hold.id))?.status === 'active' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await sweeper.stop();
    expect((await billing.getHold(hold.id))?.status).toBe('released');
    expect(swept.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(await accountRow(principal.accountId)).toMatchObject({ reserved: 0n });
  });

  test('extendHold keeps a long job from being swept', async () => {
    clock.set(new Date('2026-11-18T09:00:00.000Z'));
    const { principal } = await prepaid({ fundsMicro: '5000000' });
    const hold = await billing.reserveHold({
      principal,
      purpose: 'video',
      model: 'openai/sora-2',
      amountMicro: mediaCostMicro(100_000n, 8),
      ttlMs: 60_000,
    });
    clock.advance(50_000);
    expect(await billing.extendHold(hold.id, 60_000)).toBe(true);
    clock.advance(50_000);
    await billing.sweepExpiredHolds();
    expect((await billing.getHold(hold.id))?.status).toBe('active');
    await billing.settleHold(hold.id, { costMicro: 800_000n, usage: { videoSeconds: 8 } });
    expect(await billing.extendHold(hold.id, 60_000)).toBe(false);
  });
});

describe('automatic top-up', () => {
  beforeEach(() => clock.set(new Date('2026-11-20T12:00:00.000Z')));

  test('validates the setting', async () => {
    const { accountId } = await prepaid();
    await expect(billing.setAutoTopUp(accountId, { thresholdMicro: 0n, amountMicro: 999_999n })).rejects.toMatchObject({
      code: 'bad_request',
      message: 'Top-up amount must be between $1 and $100,000',
      details: { field: 'autoTopUp.amount' },
    });
    await expect(billing.setAutoTopUp(accountId, { thresholdMicro: 100_000_000_001n, amountMicro: 1_000_000n })).rejects.toMatchObject({
      message: 'Top-up threshold must be between $0 and $100,000',
      details: { field: 'autoTopUp.threshold' },
    });
    await expect(billing.setAutoTopUp(accountId, { thresholdMicro: -1n, amountMicro: 1_000_000n })).rejects.toMatchObject({
      code: 'bad_request',
    });
    expect(await billing.setAutoTopUp(accountId, { thresholdMicro: 0n, amountMicro: 100_000_000_000n })).toEqual({
      thresholdMicro: 0n,
      amountMicro: 100_000_000_000n,
    });
    expect(await billing.setAutoTopUp(accountId, null)).toEqual({ thresholdMicro: null, amountMicro: null });
    expect(await billing.getAutoTopUp(accountId)).toEqual({ thresholdMicro: null, amountMicro: null });
  });

  test('settlements crossing the threshold together top up exactly once; the tier follows', async () => {
    const { principal, sessionToken } = await prepaid({ fundsMicro: '6000000' });
    await billing.setAutoTopUp(principal.accountId, { thresholdMicro: 5_000_000n, amountMicro: 50_000_000n });
    const holds = await Promise.all(Array.from({ length: 20 }, () => text(principal, 100_000n)));
    const paymentsBefore = payments.chargeCount;
    const outcomes = await Promise.all(holds.map((h) => billing.settleHold(h.id, { costMicro: 100_000n })));

    const topUps = (await ledger(principal.accountId)).filter((l) => l.kind === 'auto_top_up');
    expect(topUps).toEqual([expect.objectContaining({ amount_micro: '50000000' })]);
    expect(payments.chargeCount - paymentsBefore).toBe(1);
    expect(outcomes.filter((o) => o.autoTopUp?.status === 'credited')).toHaveLength(1);
    expect(await accountRow(principal.accountId)).toEqual({
      balance: 6_000_000n - 2_000_000n + 50_000_000n,
      reserved: 0n,
      lifetime: 56_000_000n,
    });
    const account = await graphql(t.url, '{ account { tier lifetimeTopUpsMicro } }', {}, sessionToken);
    expect(account.data.account).toEqual({ tier: 2, lifetimeTopUpsMicro: '56000000' });
  });

  test('a refused reservation tops up first when automatic top-up is on', async () => {
    const { principal } = await prepaid();
    await billing.setAutoTopUp(principal.accountId, { thresholdMicro: 1_000_000n, amountMicro: 5_000_000n });
    const hold = await text(principal, 100_000n);
    await billing.settleHold(hold.id, { costMicro: 100_000n });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 4_900_000n });
    expect((await ledger(principal.accountId)).map((l) => l.kind)).toEqual(['auto_top_up', 'charge']);
  });

  test('a declined payment credits nothing', async () => {
    const declining: PaymentPort = { charge: async () => ({ ok: false, reference: null, message: 'card declined' }) };
    const s = t.tollgate.services;
    const strictBilling = new BillingService(
      clock,
      s.ids,
      s.bus,
      declining,
      pgHoldStore(s.orm),
      new PgBillingReads(s.orm),
      pgAutoTopUpStore(s.orm),
      pgSpendLimitStore(s.orm),
    );
    const { principal } = await prepaid({ fundsMicro: '2000000' });
    await strictBilling.setAutoTopUp(principal.accountId, { thresholdMicro: 1_500_000n, amountMicro: 5_000_000n });
    const hold = await strictBilling.reserveHold({ principal, purpose: 'text', model: 'm', amountMicro: 1_000_000n });
    const outcome = await strictBilling.settleHold(hold.id, { costMicro: 1_000_000n });
    expect(outcome.autoTopUp).toEqual({ status: 'declined', message: 'card declined' });
    expect(await accountRow(principal.accountId)).toMatchObject({ balance: 1_000_000n });
    expect((await refusal(strictBilling.reserveHold({ principal, purpose: 'text', model: 'm', amountMicro: 1_000_001n }))).code).toBe(
      'api_insufficient_balance',
    );
  });
});

describe('GraphQL', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildGraphqlSchema();
  });

  async function gql(query: string, variables: Record<string, unknown>, sessionToken: string | null) {
    const s = t.tollgate.services;
    const services = {
      auth: s.auth,
      accounts: s.accounts,
      keys: s.keys,
      bus: s.bus,
      billing,
      videos: s.videos,
      usage: s.usage,
      catalog: s.catalog,
      configuredVendors: new Set(s.vendors.keys()),
      deployments: () => [],
    };
    const contextValue = await buildContext(services, sessionToken ? `Bearer ${sessionToken}` : undefined);
    const result = await executeGraphql({ schema, source: query, variableValues: variables, contextValue });
    // Errors take their wire form as the server gives it to them.
    return { ...result, errors: result.errors?.map((error) => formatError(error.toJSON(), error, pino({ level: 'silent' }))) };
  }

  test('holds, key month spend, paginated and filtered usage, auto top-up', async () => {
    clock.set(new Date('2026-11-21T10:00:00.000Z'));
    const { principal, sessionToken, key } = await prepaid({ fundsMicro: '9000000', limitMicro: '5000000' });
    const other = await createKey(t.url, sessionToken, { name: 'second' });
    const otherPrincipal = { ...principal, keyId: other.id };
    for (let i = 0; i < 5; i++) {
      clock.advance(60_000);
      const hold = await text(i % 2 === 0 ? principal : otherPrincipal, 10_000n);
      await billing.settleHold(hold.id, { costMicro: BigInt(1_000 + i), usage: { inputTokens: i }, requestId: `req_${i}` });
    }
    const inFlight = await text(principal, 25_000n);

    const holds = await gql('{ holds { id keyId amountMicro month purpose planBilled expiresAt } }', {}, sessionToken);
    expect(holds.errors).toBeUndefined();
    expect(holds.data?.holds).toEqual([
      {
        id: inFlight.id,
        keyId: key.id,
        amountMicro: '25000',
        month: '2026-11',
        purpose: 'text',
        planBilled: false,
        expiresAt: inFlight.expiresAt.toISOString(),
      },
    ]);

    const spend = await gql(
      'query($k:ID!){ keyMonthSpend(keyId:$k) { month limitMicro settledMicro reservedMicro spentMicro remainingMicro resetsAt } }',
      { k: key.id },
      sessionToken,
    );
    expect(spend.data?.keyMonthSpend).toEqual({
      month: '2026-11',
      limitMicro: '5000000',
      settledMicro: String(1_000 + 1_002 + 1_004),
      reservedMicro: '25000',
      spentMicro: String(3_006 + 25_000),
      remainingMicro: String(5_000_000 - 28_006),
      resetsAt: '2026-12-01T00:00:00.000Z',
    });
    const foreign = await gql('query($k:ID!){ keyMonthSpend(keyId:$k) { month } }', { k: 'key_nope' }, sessionToken);
    expect(foreign.errors?.[0].extensions?.code).toBe('not_found');

    const page =
      'query($f:Int,$a:String,$k:ID,$from:String,$to:String){ usageRecords(first:$f, after:$a, keyId:$k, from:$from, to:$to) { data { requestId keyId costMicro inputTokens status createdAt } firstId lastId hasMore } }';
    const first = await gql(page, { f: 2 }, sessionToken);
    const p1 = first.data?.usageRecords as { data: { requestId: string }[]; lastId: string; hasMore: boolean };
    expect(p1.data.map((r) => r.requestId)).toEqual(['req_4', 'req_3']);
    expect(p1.hasMore).toBe(true);
    const second = await gql(page, { f: 2, a: p1.lastId }, sessionToken);
    const p2 = second.data?.usageRecords as { data: { requestId: string }[]; lastId: string; hasMore: boolean };
    expect(p2.data.map((r) => r.requestId)).toEqual(['req_2', 'req_1']);
    const third = await gql(page, { f: 2, a: p2.lastId }, sessionToken);
    expect(third.data?.usageRecords).toMatchObject({ data: [{ requestId: 'req_0', costMicro: '1000', status: 'ok' }], hasMore: false });

    const byKey = await gql(page, { k: other.id }, sessionToken);
    expect((byKey.data?.usageRecords as { data: { requestId: string }[] }).data.map((r) => r.requestId)).toEqual(['req_3', 'req_1']);
    const ranged = await gql(page, { from: '2026-11-21T10:02:00.000Z', to: '2026-11-21T10:04:00.000Z' }, sessionToken);
    expect((ranged.data?.usageRecords as { data: { requestId: string }[] }).data.map((r) => r.requestId)).toEqual(['req_2', 'req_1']);
    const bad = await gql(page, { from: 'yesterday' }, sessionToken);
    expect(bad.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^from /), extensions: { code: 'bad_request' } });
    const badCursor = await gql(page, { a: 'use_nope' }, sessionToken);
    expect(badCursor.errors?.[0].extensions?.code).toBe('bad_request');

    const set = await gql(
      'mutation{ setAutoTopUp(input:{thresholdMicro:"2000000", amountMicro:"10000000"}) { enabled thresholdMicro amountMicro } }',
      {},
      sessionToken,
    );
    expect(set.data?.setAutoTopUp).toEqual({ enabled: true, thresholdMicro: '2000000', amountMicro: '10000000' });
    const half = await gql('mutation{ setAutoTopUp(input:{thresholdMicro:"2000000"}) { enabled } }', {}, sessionToken);
    expect(half.errors?.[0]).toMatchObject({ extensions: { code: 'bad_request', details: { field: 'input.amountMicro' } } });
    const tooSmall = await gql(
      'mutation{ setAutoTopUp(input:{thresholdMicro:"2000000", amountMicro:"10"}) { enabled } }',
      {},
      sessionToken,
    );
    expect(tooSmall.errors?.[0].extensions?.details).toEqual({ field: 'input.amountMicro' });
    const off = await gql('mutation{ setAutoTopUp(input:null) { enabled thresholdMicro amountMicro } }', {}, sessionToken);
    expect(off.data?.setAutoTopUp).toEqual({ enabled: false, thresholdMicro: null, amountMicro: null });
    expect((await gql('{ autoTopUp { enabled } }', {}, sessionToken)).data?.autoTopUp).toEqual({ enabled: false });

    const anonymous = await gql('{ holds { id } }', {}, null);
    expect(anonymous.errors?.[0].extensions?.code).toBe('invalid_token');
    await billing.releaseHold(inFlight.id);
  });
});

test('after everything: balance = Σ ledger and reserved = Σ active holds, for every account', async () => {
  expect(accounts.length).toBeGreaterThan(10);
  for (const accountId of accounts) {
    const audit = await billing.auditAccount(accountId);
    expect({ accountId, ...audit }).toEqual({ accountId, ...audit, consistent: true });
  }
  const [totals] = await sql<{ balance: string; ledger: string }>(
    'select (select coalesce(sum(balance_micro), 0) from accounts) as balance, (select coalesce(sum(amount_micro), 0) from ledger_entries) as ledger',
  );
  expect(totals.balance).toBe(totals.ledger);
});
