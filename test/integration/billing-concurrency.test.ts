import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SandboxPaymentPort } from '../../src/domain/billing/payments';
import { BillingService } from '../../src/domain/billing/service';
import type { BillingPrincipal } from '../../src/domain/billing/hold-requests';
import { systemClock, utcMonthKey } from '../../src/domain/shared/clock';
import type { FireRequest, FireResult } from '../support/billing-worker';
import { call, createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { pgHoldStore } from '../../src/infra/pg-hold-store';
import { pgAutoTopUpStore } from '../../src/infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from '../../src/infra/pg-spend-limit-store';
import { PgBillingReads } from '../../src/infra/pg-billing-reads';

/**
 * The concurrency proof: 300 reservations against one account and one key, fired at once
 * from TWO separate Node processes (two gateway instances, two connection pools) on the same
 * database. Exactly as many succeed as the binding constraint covers; the others get the
 * right 402; nothing is ever overspent; afterwards balance = Σ ledger.
 */
jest.setTimeout(60_000);

const REGISTER = join(__dirname, '..', 'support', 'swc-register.js');
const WORKER = join(__dirname, '..', 'support', 'billing-worker.ts');
const HOLD_MICRO = 10_000n;
const PER_WORKER = 150;

let t: TestTollgate;
let billing: BillingService;
let workers: WorkerProcess[] = [];

class WorkerProcess {
  private stderr = '';
  private waiting: ((message: { type: string; results?: FireResult[] }) => void) | null = null;

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.on('message', (message: { type: string; results?: FireResult[] }) => {
      const resolve = this.waiting;
      this.waiting = null;
      resolve?.(message);
    });
  }

  static async start(databaseUrl: string): Promise<WorkerProcess> {
    const child = fork(WORKER, [], {
      execArgv: ['-r', REGISTER],
      env: { ...process.env, BILLING_WORKER_DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const worker = new WorkerProcess(child);
    await worker.next('ready');
    return worker;
  }

  private next(type: string): Promise<{ type: string; results?: FireResult[] }> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`billing worker exited (${code}) before '${type}': ${this.stderr}`));
      this.child.once('exit', onExit);
      this.waiting = (message) => {
        this.child.off('exit', onExit);
        if (message.type === type) resolve(message);
        else reject(new Error(`expected '${type}', got '${message.type}'`));
      };
    });
  }

  async fire(request: FireRequest): Promise<FireResult[]> {
    const answer = this.next('fired');
    this.child.send({ type: 'fire', ...request });
    return (await answer).results ?? [];
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'exit' });
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
  workers = await Promise.all([WorkerProcess.start(t.databaseUrl), WorkerProcess.start(t.databaseUrl)]);
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await t?.stop();
});

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await t.tollgate.services.orm.em.fork().execute(query, params as never[], 'all')) as unknown as T[];
}

async function setup(fundsMicro: bigint, limitMicro: bigint) {
  const p = await provisionAccount(t.url, { fundsMicro: fundsMicro.toString() });
  const key = await createKey(t.url, p.sessionToken, { name: 'contended', monthly_spend_limit_micro: limitMicro.toString() });
  const principal: BillingPrincipal = { accountId: p.accountId, keyId: key.id, kind: 'prepaid', userId: p.userId };
  return { ...p, key, principal };
}

/** Samples available balance and key spend while the storm runs: they must never go negative / over the limit. */
function watch(accountId: string, keyId: string) {
  let minAvailable: bigint | null = null;
  let maxKeySpend = 0n;
  let running = true;
  const loop = (async () => {
    while (running) {
      const [row] = await sql<{ available: string; spent: string | null }>(
        `select a.balance_micro - a.reserved_micro as available,
                (select settled_micro + reserved_micro from key_month_spend where key_id = ? and month = ?) as spent
           from accounts a where a.id = ?`,
        [keyId, utcMonthKey(new Date()), accountId],
      );
      const available = BigInt(row.available);
      if (minAvailable === null || available < minAvailable) minAvailable = available;
      if (row.spent !== null && BigInt(row.spent) > maxKeySpend) maxKeySpend = BigInt(row.spent);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return { minAvailable: minAvailable ?? 0n, maxKeySpend };
  };
}

async function storm(principal: BillingPrincipal): Promise<FireResult[]> {
  const request: FireRequest = { principal, count: PER_WORKER, amountMicro: HOLD_MICRO.toString() };
  const results = await Promise.all(workers.map((w) => w.fire(request)));
  return results.flat();
}

/** Settles every successful hold from this process, concurrently, at varied costs; returns Σ charges. */
async function settleAll(results: FireResult[]): Promise<bigint> {
  const holdIds = results.flatMap((r) => (r.ok ? [r.holdId] : []));
  const costs = holdIds.map((_, i) => (i % 3 === 0 ? HOLD_MICRO : HOLD_MICRO - BigInt(i % 1000)));
  await Promise.all(holdIds.map((id, i) => billing.settleHold(id, { costMicro: costs[i] })));
  return costs.reduce((a, b) => a + b, 0n);
}

async function state(accountId: string, keyId: string) {
  const [account] = await sql<{ balance_micro: string; reserved_micro: string }>(
    'select balance_micro, reserved_micro from accounts where id = ?',
    [accountId],
  );
  const [spend] = await sql<{ settled_micro: string; reserved_micro: string }>(
    'select settled_micro, reserved_micro from key_month_spend where key_id = ? and month = ?',
    [keyId, utcMonthKey(new Date())],
  );
  const [holds] = await sql<{ n: number }>(`select count(*)::int as n from holds where account_id = ? and status = 'active'`, [accountId]);
  return {
    balance: BigInt(account.balance_micro),
    reserved: BigInt(account.reserved_micro),
    keySettled: BigInt(spend.settled_micro),
    keyReserved: BigInt(spend.reserved_micro),
    activeHolds: holds.n,
  };
}

test('the balance binds: 300 holds from two processes, balance covers exactly 100', async () => {
  const funds = 100n * HOLD_MICRO;
  const limit = 200n * HOLD_MICRO;
  const { principal, key } = await setup(funds, limit);
  const stopWatching = watch(principal.accountId, key.id);
  const results = await storm(principal);
  const watched = await stopWatching();

  const ok = results.filter((r) => r.ok);
  const refused = results.filter((r): r is Extract<FireResult, { ok: false }> => !r.ok);
  expect(results).toHaveLength(300);
  expect(ok).toHaveLength(100);
  expect(new Set(refused.map((r) => r.code))).toEqual(new Set(['api_insufficient_balance']));
  expect(watched.minAvailable).toBeGreaterThanOrEqual(0n);
  expect(watched.maxKeySpend).toBeLessThanOrEqual(limit);
  expect(await state(principal.accountId, key.id)).toEqual({
    balance: funds,
    reserved: funds,
    keySettled: 0n,
    keyReserved: funds,
    activeHolds: 100,
  });

  const charged = await settleAll(results);
  expect(await state(principal.accountId, key.id)).toEqual({
    balance: funds - charged,
    reserved: 0n,
    keySettled: charged,
    keyReserved: 0n,
    activeHolds: 0,
  });
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true, balanceMicro: funds - charged });
});

test('the key limit binds: 300 holds from two processes, the limit covers exactly 120; one event', async () => {
  const funds = 1_000n * HOLD_MICRO;
  const limit = 120n * HOLD_MICRO;
  const { principal, key, sessionToken } = await setup(funds, limit);
  const stopWatching = watch(principal.accountId, key.id);
  const results = await storm(principal);
  const watched = await stopWatching();

  const ok = results.filter((r) => r.ok);
  const refused = results.filter((r): r is Extract<FireResult, { ok: false }> => !r.ok);
  expect(ok).toHaveLength(120);
  expect(refused).toHaveLength(180);
  for (const r of refused) {
    expect(r.code).toBe('api_key_spend_limit_reached');
    expect(r.details).toMatchObject({
      limit_micro: limit.toString(),
      spent_micro: expect.stringMatching(/^\d+$/),
      resets_at: expect.any(Number),
    });
    expect(BigInt(r.details.spent_micro as string)).toBeLessThanOrEqual(limit);
  }
  expect(watched.minAvailable).toBeGreaterThanOrEqual(0n);
  expect(watched.maxKeySpend).toBeLessThanOrEqual(limit);
  expect(await state(principal.accountId, key.id)).toEqual({
    balance: funds,
    reserved: limit,
    keySettled: 0n,
    keyReserved: limit,
    activeHolds: 120,
  });

  const events = await call(`${t.url}/v1/keys/${key.id}/events`, { token: sessionToken });
  expect((events.body.data as { kind: string }[]).filter((e) => e.kind === 'spend_limit_reached')).toHaveLength(1);

  const charged = await settleAll(results);
  const after = await state(principal.accountId, key.id);
  expect(after).toEqual({ balance: funds - charged, reserved: 0n, keySettled: charged, keyReserved: 0n, activeHolds: 0 });
  expect(after.keySettled).toBeLessThanOrEqual(limit);
  expect(await billing.auditAccount(principal.accountId)).toMatchObject({ consistent: true });
});
