import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pino from 'pino';
import { BudgetLeases } from '../../src/domain/billing/leases';
import type { LeasedHold } from '../../src/domain/billing/lease-budgets';
import { TOPIC_BUDGET_PRESSURE } from '../../src/domain/shared/events';
import { LeaseOpWriter, MAX_BACKLOG_BATCH_OPS } from '../../src/domain/billing/lease-op-writer';
import { SandboxPaymentPort } from '../../src/domain/billing/payments';
import { BillingService } from '../../src/domain/billing/service';
import type { BillingPrincipal } from '../../src/domain/billing/hold-requests';
import { systemClock, utcMonthKey } from '../../src/domain/shared/clock';
import { ApiError } from '../../src/domain/shared/errors';
import { ulidIds } from '../../src/domain/shared/ids';
import { pgLeaseStore } from '../../src/infra/pg-lease-store';
import { pgSqlRunner } from '../../src/infra/sql-runner';
import type { LeaseOp, LeaseStore } from '../../src/domain/billing/lease-store';
import type { LeaseFireRequest, LeaseFireResult, LeaseWorkerAnswer, LeaseWorkerCommand } from '../support/lease-worker';
import { call, createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { pgHoldStore } from '../../src/infra/pg-hold-store';
import { pgAutoTopUpStore } from '../../src/infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from '../../src/infra/pg-spend-limit-store';
import { PgBillingReads } from '../../src/infra/pg-billing-reads';

/**
 * Budget leases (src/domain/billing/leases.ts): request holds carved in memory out of leases
 * reserved in PostgreSQL. The same guarantees as per-request holds: never spent beyond the
 * balance, key limit or plan allowance (exactly as many admitted as fit, within one instance),
 * each request charged once, a dead instance's lease swept with nothing charged for what did
 * not finish, and balance = Σ ledger, reserved = Σ active holds throughout.
 */
jest.setTimeout(60_000);

const REGISTER = join(__dirname, '..', 'support', 'swc-register.js');
const WORKER = join(__dirname, '..', 'support', 'lease-worker.ts');
const A = 10_000n;

let t: TestTollgate;
let billing: BillingService;
const runners: { close(): Promise<void> }[] = [];
const instances: BudgetLeases[] = [];
const workers: LeaseWorker[] = [];

class LeaseWorker {
  private stderr = '';
  private waiting: ((message: LeaseWorkerAnswer) => void) | null = null;

  private constructor(readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.on('message', (message: LeaseWorkerAnswer) => {
      const resolve = this.waiting;
      this.waiting = null;
      resolve?.(message);
    });
  }

  static async start(databaseUrl: string): Promise<LeaseWorker> {
    const child = fork(WORKER, [], {
      execArgv: ['-r', REGISTER],
      env: { ...process.env, LEASE_WORKER_DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const worker = new LeaseWorker(child);
    workers.push(worker);
    await worker.next('ready');
    return worker;
  }

  private next<T extends LeaseWorkerAnswer['type']>(type: T): Promise<Extract<LeaseWorkerAnswer, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`lease worker exited (${code}) before '${type}': ${this.stderr}`));
      this.child.once('exit', onExit);
      this.waiting = (message) => {
        this.child.off('exit', onExit);
        if (message.type === type) resolve(message as Extract<LeaseWorkerAnswer, { type: T }>);
        else reject(new Error(`expected '${type}', got ${JSON.stringify(message)}`));
      };
    });
  }

  private async ask<T extends LeaseWorkerAnswer['type']>(command: LeaseWorkerCommand, answer: T) {
    const next = this.next(answer);
    this.child.send(command);
    return next;
  }

  async fire(request: LeaseFireRequest): Promise<LeaseFireResult[]> {
    return (await this.ask({ type: 'fire', ...request }, 'fired')).results;
  }

  /** Settles `count` (default: all) of the worker's open holds at `costMicro` each; resolves once committed. */
  async settle(costMicro: bigint, count?: number): Promise<string[]> {
    return (await this.ask({ type: 'settle', costMicro: costMicro.toString(), count }, 'settled')).holdIds;
  }

  async closeLeases(): Promise<void> {
    await this.ask({ type: 'close' }, 'closed');
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'exit' } satisfies LeaseWorkerCommand);
    await exited;
  }
}

beforeAll(async () => {
  t = await startTestTollgate();
  const s = t.tollgate.services;
  billing = new BillingService(
    systemClock,
    s.ids,
    s.bus,
    new SandboxPaymentPort(),
    pgHoldStore(s.orm),
    new PgBillingReads(s.orm),
    pgAutoTopUpStore(s.orm),
    pgSpendLimitStore(s.orm),
  );
});

afterAll(async () => {
  await Promise.allSettled(instances.map((leases) => leases.close()));
  await Promise.allSettled(runners.map((runner) => runner.close()));
  await Promise.allSettled(workers.map((w) => w.stop()));
  await t?.stop();
});

/** A BudgetLeases instance in this process, on the gateway's event bus (so key events reach it). */
function newLeases(): { leases: BudgetLeases; runner: ReturnType<typeof pgSqlRunner> } {
  const runner = pgSqlRunner(t.databaseUrl, pino({ level: 'silent' }));
  runners.push(runner);
  const leases = new BudgetLeases(pgLeaseStore(runner), billing, systemClock, ulidIds(), t.tollgate.services.bus);
  instances.push(leases);
  return { leases, runner };
}

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await t.tollgate.services.orm.em.fork().execute(query, params as never[], 'all')) as unknown as T[];
}

async function setup(options: { fundsMicro: bigint; limitMicro?: bigint }) {
  const p = await provisionAccount(t.url, { fundsMicro: options.fundsMicro.toString() });
  const body: Record<string, unknown> = { name: 'leased' };
  if (options.limitMicro !== undefined) body.monthly_spend_limit_micro = options.limitMicro.toString();
  const key = await createKey(t.url, p.sessionToken, body);
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  return { ...p, key, principal };
}

/** Samples the counters while a storm runs: available balance, key spend and plan usage (with reservations). */
function watch(accountId: string, keyId: string, planUserId: string | null = null) {
  let minAvailable: bigint | null = null;
  let maxKeySpend = 0n;
  let maxPlanUsed = 0n;
  let maxAccountReserved = 0n;
  let samples = 0;
  let running = true;
  const month = utcMonthKey(new Date());
  const loop = (async () => {
    while (running) {
      const [row] = await sql<{ available: string; reserved: string; spent: string | null; plan_used: string | null }>(
        `select a.balance_micro - a.reserved_micro as available, a.reserved_micro as reserved,
                (select settled_micro + reserved_micro from key_month_spend where key_id = ? and month = ?) as spent,
                (select used_micro + reserved_micro from plan_month_usage where user_id = ? and month = ?) as plan_used
           from accounts a where a.id = ?`,
        [keyId, month, planUserId, month, accountId],
      );
      samples++;
      const available = BigInt(row.available);
      if (minAvailable === null || available < minAvailable) minAvailable = available;
      if (BigInt(row.reserved) > maxAccountReserved) maxAccountReserved = BigInt(row.reserved);
      if (row.spent !== null && BigInt(row.spent) > maxKeySpend) maxKeySpend = BigInt(row.spent);
      if (row.plan_used !== null && BigInt(row.plan_used) > maxPlanUsed) maxPlanUsed = BigInt(row.plan_used);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return { minAvailable: minAvailable ?? 0n, maxKeySpend, maxPlanUsed, maxAccountReserved, samples };
  };
}

type LocalResult = { ok: true; hold: LeasedHold } | { ok: false; error: ApiError };

/** `count` reservations from one instance, all at once; successful holds stay open. */
async function fireLocal(leases: BudgetLeases, principal: BillingPrincipal, count: number, amountMicro: bigint): Promise<LocalResult[]> {
  return Promise.all(
    Array.from({ length: count }, async (): Promise<LocalResult> => {
      try {
        return { ok: true, hold: await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro }) };
      } catch (error) {
        if (error instanceof ApiError) return { ok: false, error };
        throw error;
      }
    }),
  );
}

const holdsOf = (results: LocalResult[]) => results.flatMap((r) => (r.ok ? [r.hold] : []));
const errorsOf = (results: LocalResult[]) => results.flatMap((r) => (r.ok ? [] : [r.error]));
/** Varied costs ≤ A, a third of them exactly A, all above zero. */
const costOf = (i: number) => (i % 3 === 0 ? A : A - BigInt(i % 1000) - 1n);

async function state(accountId: string, keyId: string, planUserId: string | null = null) {
  const month = utcMonthKey(new Date());
  // One statement, so one snapshot: a give-back committing between separate reads would show the key and the balance disagreeing.
  const [row] = await sql<{
    balance_micro: string;
    reserved_micro: string;
    key_settled: string | null;
    key_reserved: string | null;
    plan_used: string | null;
    plan_reserved: string | null;
    active_holds: number;
    ledger_sum: string;
    ledger_charges: number;
  }>(
    `select a.balance_micro, a.reserved_micro,
            (select settled_micro from key_month_spend where key_id = ? and month = ?) as key_settled,
            (select reserved_micro from key_month_spend where key_id = ? and month = ?) as key_reserved,
            (select used_micro from plan_month_usage where user_id = ? and month = ?) as plan_used,
            (select reserved_micro from plan_month_usage where user_id = ? and month = ?) as plan_reserved,
            (select count(*)::int from holds where account_id = a.id and status = 'active') as active_holds,
            (select coalesce(sum(amount_micro), 0) from ledger_entries where account_id = a.id) as ledger_sum,
            (select count(*)::int from ledger_entries where account_id = a.id and kind = 'charge') as ledger_charges
       from accounts a where a.id = ?`,
    [keyId, month, keyId, month, planUserId, month, planUserId, month, accountId],
  );
  return {
    balance: BigInt(row.balance_micro),
    reserved: BigInt(row.reserved_micro),
    keySettled: BigInt(row.key_settled ?? '0'),
    keyReserved: BigInt(row.key_reserved ?? '0'),
    planUsed: BigInt(row.plan_used ?? '0'),
    planReserved: BigInt(row.plan_reserved ?? '0'),
    activeHolds: row.active_holds,
    ledgerSum: BigInt(row.ledger_sum),
    ledgerCharges: row.ledger_charges,
  };
}

/** Polls until `check` passes or the deadline passes (then fails with the last state). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 3_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `condition not met within ${timeoutMs} ms; last: ${JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
      );
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Each settled request's rows: its usage record (the claim, unique per hold id, so one row per
 * request) and at most one ledger row; its hold is never a row of its own.
 */
async function requestRows(accountId: string) {
  const [requestHolds] = await sql<{ n: number }>(`select count(*)::int as n from holds where account_id = ? and purpose <> 'lease'`, [
    accountId,
  ]);
  expect(requestHolds!.n).toBe(0);
  return sql<{ id: string; status: string; usage_cost: string; ledger_rows: number; ledger_amount: string | null }>(
    `select u.hold_id as id, u.status, u.cost_micro as usage_cost,
            (select count(*)::int from ledger_entries l where l.hold_id = u.hold_id) as ledger_rows,
            (select sum(amount_micro) from ledger_entries l where l.hold_id = u.hold_id) as ledger_amount
       from usage_records u where u.account_id = ? order by u.hold_id`,
    [accountId],
  );
}

test('one instance is exact: 300 holds at once, the balance covers exactly 100; settled once each; all given back', async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { leases } = newLeases();

  const stopWatching = watch(principal.accountId, key.id);
  const results = await fireLocal(leases, principal, 300, A);
  const watched = await stopWatching();

  const holds = holdsOf(results);
  const refused = errorsOf(results);
  // Exact: every hold the balance covers is admitted, so nothing is left available once 402s were answered.
  const afterStorm = await state(principal.accountId, key.id);
  expect({ admitted: holds.length, refused: refused.length, availableAfterStorm: afterStorm.balance - afterStorm.reserved }).toEqual({
    admitted: 100,
    refused: 200,
    availableAfterStorm: 0n,
  });
  for (const error of refused) {
    expect(error.status).toBe(402);
    expect(error.code).toBe('api_insufficient_balance');
    expect(error.details).toMatchObject({ required_micro: A.toString(), available_micro: expect.stringMatching(/^\d+$/) });
  }
  expect(new Set(holds.map((h) => h.id)).size).toBe(100);
  expect(watched.samples).toBeGreaterThan(0);
  expect(watched.minAvailable).toBeGreaterThanOrEqual(0n);
  // All 100 holds are open: the whole balance is reserved (by leases), no more.
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds,
    reserved: funds,
    keySettled: 0n,
    keyReserved: funds,
    ledgerSum: funds,
    ledgerCharges: 0,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });

  const costs = holds.map((_, i) => costOf(i));
  const charged = costs.reduce((a, b) => a + b, 0n);
  await Promise.all(
    holds.map((hold, i) => leases.settle(hold, { costMicro: costs[i]!, usage: { inputTokens: 3, outputTokens: 5 }, latencyMs: 7 })),
  );
  const settled = await state(principal.accountId, key.id);
  expect(settled).toMatchObject({ balance: funds - charged, keySettled: charged, ledgerSum: funds - charged, ledgerCharges: 100 });
  // Leftovers of holds that cost less than A may still sit in a lease, but only as an active hold.
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true, balanceMicro: funds - charged });

  await leases.close();
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds - charged,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });

  const rows = await requestRows(principal.accountId);
  const costById = new Map(holds.map((h, i) => [h.id, costs[i]!]));
  expect(rows.map((r) => r.id).sort()).toEqual([...costById.keys()].sort());
  for (const row of rows) {
    const cost = costById.get(row.id)!;
    expect(row).toMatchObject({ status: 'ok', usage_cost: cost.toString(), ledger_rows: 1, ledger_amount: (-cost).toString() });
  }
});

test('one instance is exact on the key limit: 300 holds at once, the limit covers exactly 120', async () => {
  const funds = 1_000n * A;
  const limit = 120n * A;
  const { principal, key } = await setup({ fundsMicro: funds, limitMicro: limit });
  const { leases } = newLeases();

  const stopWatching = watch(principal.accountId, key.id);
  const results = await fireLocal(leases, principal, 300, A);
  const watched = await stopWatching();

  const holds = holdsOf(results);
  const refused = errorsOf(results);
  const afterStorm = await state(principal.accountId, key.id);
  expect({
    admitted: holds.length,
    refused: refused.length,
    keyRoomAfterStorm: limit - afterStorm.keySettled - afterStorm.keyReserved,
  }).toEqual({ admitted: 120, refused: 180, keyRoomAfterStorm: 0n });
  for (const error of refused) {
    expect(error.status).toBe(402);
    expect(error.code).toBe('api_key_spend_limit_reached');
    expect(error.details).toMatchObject({
      limit_micro: limit.toString(),
      spent_micro: expect.stringMatching(/^\d+$/),
      resets_at: expect.any(Number),
    });
    expect(BigInt(error.details.spent_micro as string)).toBeLessThanOrEqual(limit);
  }
  expect(watched.minAvailable).toBeGreaterThanOrEqual(0n);
  expect(watched.maxKeySpend).toBeLessThanOrEqual(limit);
  expect(await state(principal.accountId, key.id)).toMatchObject({ balance: funds, reserved: limit, keySettled: 0n, keyReserved: limit });

  const costs = holds.map((_, i) => costOf(i));
  const charged = costs.reduce((a, b) => a + b, 0n);
  await Promise.all(holds.map((hold, i) => leases.settle(hold, { costMicro: costs[i]! })));
  await leases.close();
  const after = await state(principal.accountId, key.id);
  expect(after).toMatchObject({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds - charged,
    ledgerCharges: 120,
  });
  expect(after.keySettled).toBeLessThanOrEqual(limit);
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
});

test('two processes with their own leases: never overspent, balance = Σ ledger, everything given back', async () => {
  const funds = 100n * A;
  const perWorker = 150;
  const { principal, key } = await setup({ fundsMicro: funds });
  const pair = await Promise.all([LeaseWorker.start(t.databaseUrl), LeaseWorker.start(t.databaseUrl)]);

  const stopWatching = watch(principal.accountId, key.id);
  const results = (await Promise.all(pair.map((w) => w.fire({ principal, count: perWorker, amountMicro: A.toString() })))).flat();
  const watched = await stopWatching();

  const ok = results.filter((r) => r.ok);
  const refused = results.filter((r): r is Extract<LeaseFireResult, { ok: false }> => !r.ok);
  expect(results).toHaveLength(2 * perWorker);
  expect(new Set(refused.map((r) => r.code))).toEqual(new Set(['api_insufficient_balance']));
  // Never overspent.
  expect(ok.length).toBeLessThanOrEqual(100);
  expect(watched.minAvailable).toBeGreaterThanOrEqual(0n);
  expect(watched.maxAccountReserved).toBeLessThanOrEqual(funds);
  // Not exact across processes: slack stranded in one process while the other is refused (no
  // shared bus here). Floor: each process serves its first four leases to waiting requests, one
  // after another (reserve: `attempt < 4`), and every lease is min(want, max(A, left / 4)); the
  // requests still waiting then take leases concurrently, each of which may serve only its own
  // request. Minimised over every interleaving of the two processes' takes, that model admits
  // 74 (one process's concurrent takes eat a quarter of what is left at a time before the other
  // starts); 70 leaves room for rounding.
  expect(ok.length).toBeGreaterThanOrEqual(70);
  process.stdout.write(
    `[billing-leases] two processes: ${ok.length} of ${results.length} admitted (per worker: ${results.slice(0, perWorker).filter((r) => r.ok).length} + ${results.slice(perWorker).filter((r) => r.ok).length})\n`,
  );

  // Every admitted hold is still covered while open.
  const open = await state(principal.accountId, key.id);
  expect(open.reserved).toBeGreaterThanOrEqual(BigInt(ok.length) * A);
  expect(open.reserved).toBeLessThanOrEqual(funds);
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });

  const settled = (await Promise.all(pair.map((w) => w.settle(A)))).flat();
  expect(settled).toHaveLength(ok.length);
  await Promise.all(pair.map((w) => w.closeLeases()));
  const charged = BigInt(ok.length) * A;
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds - charged,
    ledgerCharges: ok.length,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
  await Promise.all(pair.map((w) => w.stop()));
});

/**
 * A burst longer than four rounds of waiting for one lease makes the rest of the requests take
 * leases concurrently (leases.ts, reserve: `attempt < 4`). With 64A and 47 requests of A the
 * quarter rule gives 16A, 12A, 9A, 6.75A in four rounds (43 requests), then four concurrent
 * leases of 5.06A, 3.80A, 2.85A, 2.14A: each keeps room for another request, so none is
 * retired, and all four sit in one budget, idle once settled, when close() runs.
 */
test('close() gives back every idle lease, also several leases of one budget', async () => {
  const funds = 64n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { leases } = newLeases();
  const results = await fireLocal(leases, principal, 47, A);
  expect(errorsOf(results)).toEqual([]);
  await Promise.all(holdsOf(results).map((hold) => leases.settle(hold, { costMicro: A })));
  const charged = 47n * A;

  await leases.close();
  const after = await state(principal.accountId, key.id);
  const left = await sql<{ id: string; amount_micro: string }>(
    `select id, amount_micro from holds where account_id = ? and purpose = 'lease' and status = 'active'`,
    [principal.accountId],
  );
  expect({ activeLeasesAfterClose: left, reservedAfterClose: after.reserved, keyReservedAfterClose: after.keyReserved }).toEqual({
    activeLeasesAfterClose: [],
    reservedAfterClose: 0n,
    keyReservedAfterClose: 0n,
  });
  expect(after).toMatchObject({ balance: funds - charged, keySettled: charged, activeHolds: 0, ledgerCharges: 47 });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
});

test('an idle lease is given back by housekeeping (LEASE_IDLE_MS), without close()', async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { leases } = newLeases();
  const hold = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A });
  await leases.settle(hold, { costMicro: A / 2n });
  const busy = await state(principal.accountId, key.id);
  expect(busy.reserved).toBeGreaterThan(0n); // the lease's slack, still held right after the request
  const idle = await eventually(
    () => state(principal.accountId, key.id),
    (s) => s.reserved === 0n && s.activeHolds === 0,
    3_000,
  );
  expect(idle).toMatchObject({ balance: funds - A / 2n, keyReserved: 0n, keySettled: A / 2n, ledgerSum: funds - A / 2n });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
  await leases.close();
});

test('a batch of settlements as arrays: texts with quotes, backslashes, commas and braces land as sent, a null as null', async () => {
  const { principal } = await setup({ fundsMicro: 100n * A });
  const { leases, runner } = newLeases();
  const holds = [
    await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A }),
    await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A }),
  ];
  const [lease] = await sql<{ id: string }>(`select id from holds where account_id = ? and purpose = 'lease' and status = 'active'`, [
    principal.accountId,
  ]);
  const texts = ['a "quoted", {braced} \\ one', 'NULL'];
  const ops = holds.map((hold, i): LeaseOp => ({
    op: 'settle',
    leaseId: lease!.id,
    holdId: hold.id,
    costMicro: 1_000n + BigInt(i),
    holdMicro: A,
    model: 'sandbox/echo',
    atMs: Date.now(),
    ledgerId: `led_arrays_${i}`,
    usageId: `use_arrays_${i}`,
    usageStatus: 'ok',
    requestId: texts[i]!,
    inputTokens: 1 + i,
    cachedInputTokens: 0,
    cacheWrite5mInputTokens: 0,
    cacheWrite1hInputTokens: 0,
    outputTokens: 2,
    reasoningTokens: 0,
    latencyMs: 5,
    deployment: i === 0 ? null : texts[0]!,
  }));
  const answers = await pgLeaseStore(runner).applyOps([
    { op: 'renew', leaseId: lease!.id, expiresAt: new Date(Date.now() + 60_000) },
    ...ops,
  ]);
  expect(answers.map((answer) => answer.applied)).toEqual([true, true, true]);
  const rows = await sql<{ request_id: string; deployment: string | null; cost_micro: string; input_tokens: number }>(
    `select request_id, deployment, cost_micro::text, input_tokens from usage_records where hold_id in (?, ?) order by input_tokens`,
    [holds[0]!.id, holds[1]!.id],
  );
  expect(rows).toEqual([
    { request_id: texts[0], deployment: null, cost_micro: '1000', input_tokens: 1 },
    { request_id: 'NULL', deployment: texts[0], cost_micro: '1001', input_tokens: 2 },
  ]);
  await leases.close();
});

test('idempotent settle: the same hold settled twice (and concurrently, and then released) is charged once', async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { leases, runner } = newLeases();
  const hold = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A });
  const cost = 3_000n;

  await leases.settle(hold, { costMicro: cost });
  await leases.settle(hold, { costMicro: cost });
  await Promise.all([leases.settle(hold, { costMicro: cost }), leases.settle(hold, { costMicro: 2n * cost }), leases.release(hold)]);
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - cost,
    keySettled: cost,
    ledgerSum: funds - cost,
    ledgerCharges: 1,
  });

  // The database claim too: a second settle op for the same request (a retried batch, which
  // carries the time its operation was made, as the writer retries it) changes nothing.
  const [lease] = await sql<{ id: string }>(`select id from holds where account_id = ? and purpose = 'lease' and status = 'active'`, [
    principal.accountId,
  ]);
  expect(lease).toBeDefined();
  const [first] = await sql<{ created_at: Date }>('select created_at from usage_records where hold_id = ?', [hold.id]);
  const replayAt = (at: Date): LeaseOp[] => [
    {
      op: 'settle',
      leaseId: lease!.id,
      holdId: hold.id,
      costMicro: cost,
      holdMicro: A,
      model: 'sandbox/echo',
      atMs: at.getTime(),
      ledgerId: 'led_replay',
      usageId: 'use_replay',
      usageStatus: 'ok',
      requestId: null,
      inputTokens: 0,
      cachedInputTokens: 0,
      cacheWrite5mInputTokens: 0,
      cacheWrite1hInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      latencyMs: 0,
      deployment: null,
    },
  ];
  const store = pgLeaseStore(runner);
  const [answer] = await store.applyOps(replayAt(new Date(first!.created_at)));
  expect(answer).toMatchObject({ applied: false });
  // An op for the same request made at another time (no writer makes one) is refused by the charge's own claim.
  await expect(store.applyOps(replayAt(new Date()))).rejects.toThrow(/ledger_entries_hold_id_unique/);
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - cost,
    keySettled: cost,
    ledgerSum: funds - cost,
    ledgerCharges: 1,
  });
  const rows = await requestRows(principal.accountId);
  expect(rows).toEqual([expect.objectContaining({ id: hold.id, status: 'ok', usage_cost: cost.toString(), ledger_rows: 1 })]);

  await leases.close();
  expect(await state(principal.accountId, key.id)).toMatchObject({ reserved: 0n, keyReserved: 0n, activeHolds: 0 });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
});

test('overshoot: a cost above the hold is charged the hold, the excess recorded as overage; another open hold keeps its reservation', async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { leases } = newLeases();
  const first = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A });
  const second = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A });
  const over = 3n * A + 7n;

  await leases.settle(first, { costMicro: over });
  const mid = await state(principal.accountId, key.id);
  expect(mid).toMatchObject({ balance: funds - A, keySettled: A, ledgerSum: funds - A, ledgerCharges: 1 });
  // The second hold is still open: still reserved in full.
  expect(mid.reserved).toBeGreaterThanOrEqual(A);
  expect(mid.keyReserved).toBeGreaterThanOrEqual(A);
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });

  await leases.settle(second, { costMicro: A });
  await leases.close();
  const charged = 2n * A;
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds - charged,
    ledgerCharges: 2,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
  const rows = await requestRows(principal.accountId);
  expect(rows.find((r) => r.id === first.id)).toMatchObject({ status: 'ok', usage_cost: A.toString(), ledger_amount: (-A).toString() });
  const [overage] = await sql<{ overage_micro: string }>('select overage_micro::text from usage_records where hold_id = ?', [first.id]);
  expect(overage!.overage_micro).toBe((over - A).toString());
});

test('moveHold (a fallback serving on the hold): the hold grows out of leased slack, its own lease first, else another of its key; beyond every lease nothing changes', async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { leases } = newLeases();
  const reserve = () => leases.reserve({ principal, purpose: 'text', model: 'acme/asked', amountMicro: A });
  // The first lease is taken for 16 holds like it (within a quarter of the balance): room for 15 A more.
  const grown = await reserve();
  expect(leases.moveHold(grown, 'acme/fallback', 4n * A)).toBe(true);
  expect(grown.amountMicro).toBe(4n * A);
  // More than any lease could hold: refused, the hold as it was.
  expect(leases.moveHold(grown, 'acme/dearer', funds)).toBe(false);
  expect(grown.amountMicro).toBe(4n * A);
  // Fill the first lease (12 A more), so that the next hold takes a second lease: a hold of the
  // first (full) lease then grows in the second, which has the room.
  const filling = await Promise.all(Array.from({ length: 12 }, reserve));
  const other = await reserve();
  const moved = filling.pop()!;
  expect(leases.moveHold(moved, 'acme/fallback', 5n * A)).toBe(true);
  expect(moved.amountMicro).toBe(5n * A);

  await leases.settle(grown, { costMicro: 3n * A + 5n });
  await leases.settle(moved, { costMicro: 5n * A });
  for (const hold of [...filling, other]) await leases.release(hold);
  await leases.close();
  const charged = 8n * A + 5n;
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds - charged,
    ledgerCharges: 2,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
  const usage = await sql<{ hold_id: string; model: string; cost_micro: string }>(
    'select hold_id, model, cost_micro::text from usage_records where account_id = ? order by hold_id',
    [principal.accountId],
  );
  expect(usage.map((u) => [u.hold_id, u.model, u.cost_micro])).toEqual([
    [grown.id, 'acme/fallback', (3n * A + 5n).toString()],
    [moved.id, 'acme/fallback', (5n * A).toString()],
  ]);
});

test("a spend limit change gives the key's slack back at once, and the new limit binds", async () => {
  const B = 1_000_000n; // $1: the smallest spend limit a key may have
  const funds = 100n * B;
  const { principal, key, sessionToken } = await setup({ fundsMicro: funds, limitMicro: 50n * B });
  const { leases } = newLeases();

  const first = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: B });
  await leases.settle(first, { costMicro: B });
  // Keeps the lease busy, so the idle give-back (LEASE_IDLE_MS) cannot be what returns the slack.
  const open = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: B });
  const before = await state(principal.accountId, key.id);
  expect(before.keySettled).toBe(B);
  expect(before.keyReserved).toBeGreaterThan(B); // slack beyond the open hold
  expect(before.reserved).toBe(before.keyReserved);

  const patched = await call(`${t.url}/v1/keys/${key.id}`, {
    method: 'PATCH',
    token: sessionToken,
    body: { monthly_spend_limit_micro: (3n * B).toString() },
  });
  expect(patched.status).toBe(200);
  // Only the open hold stays reserved (on the key and on the balance).
  const after = await eventually(
    () => state(principal.accountId, key.id),
    (s) => s.keyReserved === B,
  );
  expect(after).toMatchObject({ reserved: B, keyReserved: B, keySettled: B });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });

  // New limit 3B: B settled + B open leaves room for exactly one more B (the old lease's slack would have let all 5 in).
  const results = await fireLocal(leases, principal, 5, B);
  expect(holdsOf(results)).toHaveLength(1);
  expect(errorsOf(results).map((e) => e.code)).toEqual(Array(4).fill('api_key_spend_limit_reached'));
  const capped = await state(principal.accountId, key.id);
  expect(capped.keySettled + capped.keyReserved).toBeLessThanOrEqual(3n * B);

  await Promise.all([leases.settle(open, { costMicro: B }), ...holdsOf(results).map((h) => leases.release(h))]);
  await leases.close();
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - 2n * B,
    reserved: 0n,
    keySettled: 2n * B,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerCharges: 2,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
});

/**
 * Focused reproduction of the exactness failure: a refusal answered while this instance is
 * still giving back (committing the trim of) slack that covers the request. The lease store
 * delays give-back batches by 200 ms, as a pool queue or slow commit does under load.
 */
test('a refusal waits for slack this instance is already giving back (two keys, one balance)', async () => {
  const funds = 64n * A;
  const p = await provisionAccount(t.url, { fundsMicro: funds.toString() });
  const principalOf = async (name: string): Promise<BillingPrincipal> => ({
    accountId: p.accountId,
    keyId: (await createKey(t.url, p.sessionToken, { name })).id,
    kind: 'prepaid',
    userId: p.userId,
  });
  const [k1, k2, k3, kExact] = [await principalOf('k1'), await principalOf('k2'), await principalOf('k3'), await principalOf('exact')];

  const raw = pgSqlRunner(t.databaseUrl, pino({ level: 'silent' }));
  runners.push(raw);
  const store = pgLeaseStore(raw);
  const slowGiveBacks: LeaseStore = {
    takeLease: (take) => store.takeLease(take),
    applyOps: async (ops) => {
      if (ops.some((op) => op.op === 'trim' || op.op === 'release')) await new Promise((r) => setTimeout(r, 200));
      return store.applyOps(ops);
    },
  };
  const leases = new BudgetLeases(slowGiveBacks, billing, systemClock, ulidIds(), t.tollgate.services.bus);
  instances.push(leases);

  // k1 leases 16A (a quarter of 64A) for one open hold: 15A of slack.
  const h1 = await leases.reserve({ principal: k1, purpose: 'text', model: 'sandbox/echo', amountMicro: A });
  // An exact per-request hold takes all that is left.
  const exact = await billing.reserveHold({ principal: kExact, purpose: 'text', model: 'sandbox/echo', amountMicro: 48n * A });
  const before = await state(p.accountId, k1.keyId);
  expect(before.balance - before.reserved).toBe(0n);

  // k2 and k3 are refused at once; k1's 15A of slack covers both, once given back.
  const results = await Promise.all([k2, k3].map((principal) => fireLocal(leases, principal, 1, A)));
  const afterRefusals = await state(p.accountId, k1.keyId);
  expect({
    admitted: results.flat().filter((r) => r.ok).length,
    refusals: errorsOf(results.flat()).map((e) => e.code),
    availableAfter: afterRefusals.balance - afterRefusals.reserved,
  }).toEqual({ admitted: 2, refusals: [], availableAfter: 13n * A });

  for (const hold of [h1, ...holdsOf(results.flat())]) await leases.release(hold);
  await billing.releaseHold(exact.id);
  await leases.close();
  expect(await state(p.accountId, k1.keyId)).toMatchObject({ balance: funds, reserved: 0n, activeHolds: 0 });
});

test('plan-billed key: leases draw on the plan allowance (exactly), not the balance; no ledger rows', async () => {
  const P = 50_000n; // 100 of them fit the starter plan's 5_000_000 allowance
  const allowance = 5_000_000n;
  const funds = 10n * A;
  const p = await provisionAccount(t.url, { fundsMicro: funds.toString(), plan: 'starter' });
  const key = await createKey(t.url, p.sessionToken, { name: 'plan key', kind: 'plan' });
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'plan', userId: p.userId };
  const { leases } = newLeases();

  const stopWatching = watch(p.accountId, key.id, p.userId);
  const results = await fireLocal(leases, principal, 150, P);
  const watched = await stopWatching();

  const holds = holdsOf(results);
  const refused = errorsOf(results);
  const afterStorm = await state(p.accountId, key.id, p.userId);
  expect({
    admitted: holds.length,
    refused: refused.length,
    allowanceLeftAfterStorm: allowance - afterStorm.planUsed - afterStorm.planReserved,
  }).toEqual({ admitted: 100, refused: 50, allowanceLeftAfterStorm: 0n });
  for (const error of refused) {
    expect(error.code).toBe('plan_allowance_exhausted');
    expect(error.details).toMatchObject({ allowance_micro: allowance.toString(), resets_at: expect.any(Number) });
  }
  expect(watched.maxPlanUsed).toBeLessThanOrEqual(allowance);
  expect(watched.maxAccountReserved).toBe(0n);
  expect(await state(p.accountId, key.id, p.userId)).toMatchObject({
    balance: funds,
    reserved: 0n,
    planReserved: allowance,
    planUsed: 0n,
    keyReserved: allowance,
  });

  const costs = holds.map((_, i) => (i % 2 === 0 ? P : P - BigInt(i)));
  const charged = costs.reduce((a, b) => a + b, 0n);
  await Promise.all(holds.map((hold, i) => leases.settle(hold, { costMicro: costs[i]! })));
  await leases.close();
  expect(await state(p.accountId, key.id, p.userId)).toMatchObject({
    balance: funds,
    reserved: 0n,
    planUsed: charged,
    planReserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds,
    ledgerCharges: 0,
  });
  const rows = await requestRows(p.accountId);
  expect(rows).toHaveLength(100);
  for (const row of rows) expect(row).toMatchObject({ status: 'ok', ledger_rows: 0 });
  expect(await billing.auditAccount(p.accountId)).toMatchObject({ consistent: true });
});

// Last: the sweep below releases every expired hold of the database, so no other instance may hold a lease now.
test("crash: a killed instance's settled charges stay booked; its lease is swept and nothing else is charged", async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const worker = await LeaseWorker.start(t.databaseUrl);
  const results = await worker.fire({ principal, count: 10, amountMicro: A.toString() });
  expect(results.every((r) => r.ok)).toBe(true);
  const settledIds = await worker.settle(A, 4);
  expect(settledIds).toHaveLength(4);
  await worker.kill();

  const charged = 4n * A;
  const dead = await state(principal.accountId, key.id);
  expect(dead).toMatchObject({ balance: funds - charged, keySettled: charged, ledgerSum: funds - charged, ledgerCharges: 4 });
  // The lease outlives its instance: the 6 unsettled holds are still covered, until the sweep.
  expect(dead.reserved).toBeGreaterThanOrEqual(6n * A);
  expect(dead.keyReserved).toBe(dead.reserved);
  const [leaseRows] = await sql<{ n: number }>(
    `select count(*)::int as n from holds where account_id = ? and purpose = 'lease' and status = 'active'`,
    [principal.accountId],
  );
  expect(leaseRows.n).toBeGreaterThanOrEqual(1);
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });

  // Not yet expired: a sweep now leaves it alone.
  expect(await billing.sweepExpiredHolds(new Date())).toBe(0);
  expect(await billing.sweepExpiredHolds(new Date(Date.now() + 61_000))).toBeGreaterThanOrEqual(1);
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
    ledgerSum: funds - charged,
    ledgerCharges: 4,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
  const rows = await requestRows(principal.accountId);
  expect(rows.map((r) => r.id).sort()).toEqual([...settledIds].sort());
  for (const row of rows) expect(row).toMatchObject({ status: 'ok', usage_cost: A.toString(), ledger_rows: 1 });
});

/** A lease store that records how many settlements each batch statement carries (and can make each batch `slowMs` slower). */
function recordingBatches(slowMs = 0) {
  const raw = pgSqlRunner(t.databaseUrl, pino({ level: 'silent' }));
  runners.push(raw);
  const settlementsPerStatement: number[] = [];
  const store = pgLeaseStore(raw);
  const recording: LeaseStore = {
    takeLease: (take) => store.takeLease(take),
    applyOps: async (ops) => {
      settlementsPerStatement.push(ops.filter((op) => op.op === 'settle').length);
      if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
      return store.applyOps(ops);
    },
  };
  return { recording, settlementsPerStatement };
}

test('a backlog of settlements is written in statements of at most MAX_BACKLOG_BATCH_OPS operations, each charged once', async () => {
  const funds = 10_000n * A;
  const p = await provisionAccount(t.url, { fundsMicro: funds.toString() });
  const key = await createKey(t.url, p.sessionToken, { name: 'backlog' });
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  const { recording, settlementsPerStatement } = recordingBatches();
  const leases = new BudgetLeases(recording, billing, systemClock, ulidIds(), t.tollgate.services.bus, { settlementBacklog: 10_000 });
  instances.push(leases);

  const count = 2 * MAX_BACKLOG_BATCH_OPS + 250;
  const holds = holdsOf(await fireLocal(leases, principal, count, A));
  expect(holds).toHaveLength(count);
  // Queued in one turn: without a limit they would all go in one statement.
  await Promise.all(holds.map((hold) => leases.settle(hold, { costMicro: 7n, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1 })));
  await Promise.all(holds.map((hold) => leases.settle(hold, { costMicro: 7n })));

  expect(settlementsPerStatement).toEqual([MAX_BACKLOG_BATCH_OPS, MAX_BACKLOG_BATCH_OPS, 250]);
  await leases.close();
  expect(await state(p.accountId, key.id)).toMatchObject({
    balance: funds - BigInt(count) * 7n,
    reserved: 0n,
    activeHolds: 0,
    ledgerCharges: count,
  });
});

test('settlements that trickle in while a batch is being written wait for the next batch instead of one statement each', async () => {
  const funds = 1_000n * A;
  const p = await provisionAccount(t.url, { fundsMicro: funds.toString() });
  const key = await createKey(t.url, p.sessionToken, { name: 'trickle' });
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  // A busy database: each batch takes 20 ms to commit.
  const { recording, settlementsPerStatement } = recordingBatches(20);
  const delayMs = 100;
  const leases = new BudgetLeases(recording, billing, systemClock, ulidIds(), t.tollgate.services.bus, { settlementDelayMs: delayMs });
  instances.push(leases);

  const holds = holdsOf(await fireLocal(leases, principal, 60, A));
  expect(holds).toHaveLength(60);
  // One settlement every 5 ms for 300 ms: a writer that sent whatever queued during the
  // previous commit would write a statement every 20 ms after the first delay (about 11).
  const settled: Promise<void>[] = [];
  for (const hold of holds) {
    settled.push(leases.settle(hold, { costMicro: 7n, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(settled);

  expect(settlementsPerStatement.reduce((sum, n) => sum + n, 0)).toBe(60);
  // ~300 ms of settlements in batches due 100 ms after their oldest: 3 or 4 statements (timer slack allowing one more).
  expect(settlementsPerStatement.length).toBeLessThanOrEqual(5);
  await leases.close();
  expect(await state(p.accountId, key.id)).toMatchObject({ balance: funds - 60n * 7n, reserved: 0n, activeHolds: 0, ledgerCharges: 60 });
});

test('a trailing settlement is booked as settle() books it, and one the database refuses is reported, not lost silently', async () => {
  const funds = 100n * A;
  const p = await provisionAccount(t.url, { fundsMicro: funds.toString() });
  const key = await createKey(t.url, p.sessionToken, { name: 'trailing' });
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  const { recording } = recordingBatches();
  let refuse = false;
  const refusing: LeaseStore = {
    takeLease: (take) => recording.takeLease(take),
    applyOps: (ops) => (refuse ? Promise.reject(new Error('refused by the test')) : recording.applyOps(ops)),
  };
  const leases = new BudgetLeases(refusing, billing, systemClock, ulidIds(), t.tollgate.services.bus);
  instances.push(leases);
  const [first, second, third] = holdsOf(await fireLocal(leases, principal, 3, A));

  const failures: unknown[] = [];
  leases.settleTrailing(first!, { costMicro: 7n, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1 }, (error) =>
    failures.push(error),
  );
  await leases.settle(second!, { costMicro: 5n });
  expect(failures).toEqual([]);
  expect(await state(p.accountId, key.id)).toMatchObject({ balance: funds - 12n, ledgerCharges: 2 });

  refuse = true;
  // Reported with the id of the request it charges (the log line names it).
  const reported = new Promise<[unknown, string | null]>((resolve) =>
    leases.settleTrailing(third!, { costMicro: 3n, requestId: 'req_trailing' }, (error, requestId) => resolve([error, requestId])),
  );
  expect(await reported).toEqual([new Error('refused by the test'), 'req_trailing']);
  // A negative charge is refused before anything is queued, and reported the same way.
  const [fourth] = holdsOf(await fireLocal(leases, principal, 1, A));
  const negative = new Promise<[unknown, string | null]>((resolve) =>
    leases.settleTrailing(fourth!, { costMicro: -1n, requestId: 'req_negative' }, (error, requestId) => resolve([error, requestId])),
  );
  const [negativeError, negativeRequest] = await negative;
  expect(negativeError).toBeInstanceOf(RangeError);
  expect(negativeRequest).toBe('req_negative');
  refuse = false;
  await leases.release(fourth!);
  await leases.close();
  expect(await state(p.accountId, key.id)).toMatchObject({ balance: funds - 12n, reserved: 0n, ledgerCharges: 2 });
});

test('a give-back, and shutdown, do not wait for the settlement delay: waiting settlements go with them', async () => {
  const p = await provisionAccount(t.url, { fundsMicro: (100n * A).toString() });
  const key = await createKey(t.url, p.sessionToken, { name: 'urgent' });
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  const raw = pgSqlRunner(t.databaseUrl, pino({ level: 'silent' }));
  runners.push(raw);
  const delayMs = 20_000;
  const leases = new BudgetLeases(pgLeaseStore(raw), billing, systemClock, ulidIds(), t.tollgate.services.bus, {
    settlementDelayMs: delayMs,
  });
  instances.push(leases);
  // Three requests: the third stays open through shutdown, so the lease is not given back then.
  const holds = holdsOf(await fireLocal(leases, principal, 3, A));
  expect(holds).toHaveLength(3);
  const [first, second] = holds;

  const started = performance.now();
  const firstSettled = leases.settle(first!, { costMicro: 7n });
  // Another instance was refused on this account: this one trims its lease's slack (a give-back).
  t.tollgate.services.bus.publish(TOPIC_BUDGET_PRESSURE, { accountId: p.accountId });
  await firstSettled;
  expect(await state(p.accountId, key.id)).toMatchObject({ balance: 100n * A - 7n, ledgerCharges: 1 });

  // Shutdown with a request still open (its lease stays): the queued settlement is written at once.
  const secondSettled = leases.settle(second!, { costMicro: 7n });
  await leases.close();
  await secondSettled;
  expect(performance.now() - started).toBeLessThan(delayMs / 2);
  expect(await state(p.accountId, key.id)).toMatchObject({ balance: 100n * A - 14n, ledgerCharges: 2 });
});

/** A lease store whose batches wait at a gate while `stalled(ops)` says so; counts the statements running at once. */
function gatedBatches(stalled: (ops: readonly LeaseOp[]) => boolean) {
  const raw = pgSqlRunner(t.databaseUrl, pino({ level: 'silent' }), 2);
  runners.push(raw);
  const store = pgLeaseStore(raw);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const seen = { running: 0, mostAtOnce: 0, leaseAccounts: new Map<string, string>() };
  const gated: LeaseStore = {
    takeLease: async (take) => {
      seen.leaseAccounts.set(take.id, take.accountId);
      return store.takeLease(take);
    },
    applyOps: async (ops) => {
      seen.mostAtOnce = Math.max(seen.mostAtOnce, ++seen.running);
      try {
        if (stalled(ops)) await gate;
        return await store.applyOps(ops);
      } finally {
        seen.running--;
      }
    },
  };
  return { gated, open, seen };
}

const pending = async <T>(promise: Promise<T>, ms: number) =>
  (await Promise.race([promise.then(() => 'settled'), new Promise((r) => setTimeout(r, ms, 'pending'))])) === 'pending';

test('a full settlement backlog: admission waits for room, first come first served, and is refused with a 503 beyond the wait', async () => {
  const funds = 100n * A;
  const { principal, key } = await setup({ fundsMicro: funds });
  const { gated, open } = gatedBatches(() => true);
  const leases = new BudgetLeases(gated, billing, systemClock, ulidIds(), t.tollgate.services.bus, { settlementBacklog: 3 });
  instances.push(leases);
  const holds = holdsOf(await fireLocal(leases, principal, 4, A));
  expect(holds).toHaveLength(4);
  expect(leases.settlementMayTrail()).toBe(true);
  const settled = holds.slice(0, 3).map((hold) => leases.settle(hold, { costMicro: 7n }));
  expect(leases.settlementMayTrail()).toBe(false); // three uncommitted: a fourth answer would wait for its charge
  expect(leases.settlementBacklog()).toMatchObject({ depth: 3, limit: 3 });

  // Waits for room (about 2 s), then 503 unavailable with Retry-After; nothing reserved for it.
  const refused = await leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A }).then(
    () => null,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ status: 503, code: 'unavailable', headers: { 'retry-after': '1' } });

  // Two more wait; the commit lets them in, in order.
  const admitted: number[] = [];
  const waiting = [1, 2].map((n) =>
    leases.reserve({ principal, purpose: 'text', model: 'sandbox/echo', amountMicro: A }).then((hold) => (admitted.push(n), hold)),
  );
  expect(await pending(waiting[0]!, 200)).toBe(true);
  open();
  await Promise.all(settled);
  const late = await Promise.all(waiting);
  expect(admitted).toEqual([1, 2]);
  expect(leases.settlementBacklog()).toMatchObject({ waited: 3, refused: 1 });
  for (const hold of [holds[3]!, ...late]) await leases.settle(hold, { costMicro: 7n });
  await leases.close();
  expect(await state(principal.accountId, key.id)).toMatchObject({
    balance: funds - 6n * 7n,
    reserved: 0n,
    activeHolds: 0,
    ledgerCharges: 6,
  });
});

test('settlement lanes: a stalled batch of one account does not hold up another account on another lane', async () => {
  const lanes = new LeaseOpWriter(null as unknown as LeaseStore, { settlementDelayMs: 0, backlogLimit: 1, lanes: 2 });
  const x = await setup({ fundsMicro: 100n * A });
  let y = await setup({ fundsMicro: 100n * A });
  while (lanes.laneOf(y.principal.accountId) === lanes.laneOf(x.principal.accountId)) y = await setup({ fundsMicro: 100n * A });
  const { gated, open, seen } = gatedBatches((ops) => ops.some((op) => seen.leaseAccounts.get(op.leaseId) === x.principal.accountId));
  const leases = new BudgetLeases(gated, billing, systemClock, ulidIds(), t.tollgate.services.bus, { writerLanes: 2 });
  instances.push(leases);
  const [xHold] = holdsOf(await fireLocal(leases, x.principal, 1, A));
  const [yHold] = holdsOf(await fireLocal(leases, y.principal, 1, A));
  const xSettled = leases.settle(xHold!, { costMicro: 7n });
  await leases.settle(yHold!, { costMicro: 7n }); // committed while x's batch is stalled
  expect(await pending(xSettled, 50)).toBe(true);
  expect(seen.mostAtOnce).toBe(2);
  expect(await state(y.principal.accountId, y.key.id)).toMatchObject({ balance: 100n * A - 7n, ledgerCharges: 1 });
  open();
  await xSettled;
  await leases.close();
  expect(await state(x.principal.accountId, x.key.id)).toMatchObject({ balance: 100n * A - 7n, reserved: 0n, ledgerCharges: 1 });
});
