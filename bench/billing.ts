/**
 * `npm run bench:billing`: reservations and settlements per second on PostgreSQL.
 *
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates its own scratch database there and drops it afterwards. Reported, never
 * asserted. BENCH_OPS (default 2000) and BENCH_CONCURRENCY (default 32) tune the run.
 *
 * Two shapes: "spread" (many accounts, as in normal traffic: little row contention) and
 * "hot" (every request on one account and one limited key: the account row lock serialises
 * the reservations, which is the price of never overspending).
 *
 * Then the text path's settlement batches (tollgate_apply_lease_ops, billing/leases.ts): the
 * PostgreSQL CPU per settlement for batch sizes 1 to 300, read from /proc for the connection's
 * backend process (so only when PostgreSQL runs on this machine), which is what the gateway's
 * settlements cost the cores they share with it.
 *
 * Last, the settlement writer's capacity (LeaseOpWriter through BudgetLeases, as the gateway
 * runs it): BENCH_WRITER_OPS settlements (default 20,000) over 8 accounts queued at once, by
 * lanes and batch cap, how many it commits per second and the PostgreSQL CPU per settlement of
 * the bench database's backends. The gateway must admit no faster than its writer settles.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import { SandboxPaymentPort } from '../src/domain/billing/payments';
import { BillingService } from '../src/domain/billing/service';
import type { BillingPrincipal } from '../src/domain/billing/hold-requests';
import { systemClock } from '../src/domain/shared/clock';
import { inProcessEventBus } from '../src/domain/shared/events';
import { ulidIds } from '../src/domain/shared/ids';
import { openDatabase } from '../src/infra/database';
import { cpuMs } from './proc';
import { benchDatabase } from './provision';
import { pgHoldStore } from '../src/infra/pg-hold-store';
import { pgAutoTopUpStore } from '../src/infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from '../src/infra/pg-spend-limit-store';
import { PgBillingReads } from '../src/infra/pg-billing-reads';
import pino from 'pino';
import { BudgetLeases } from '../src/domain/billing/leases';
import { APPLY_LEASE_OPS, leaseOpsParams, pgLeaseStore } from '../src/infra/pg-lease-store';
import type { LeaseOp } from '../src/domain/billing/lease-store';
import { pgSqlRunner } from '../src/infra/sql-runner';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const OPS = Number(process.env.BENCH_OPS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const HOLD_MICRO = 5_000n;
const WRITER_OPS = Number(process.env.BENCH_WRITER_OPS ?? 20_000);

async function withScratchDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const database = await benchDatabase(SERVER_URL);
  try {
    return await work(database.url);
  } finally {
    await database.drop();
  }
}

/** Accounts with funds (ledger rows included, so the audit holds) and one prepaid key each. */
async function provision(orm: MikroORM, count: number, limitMicro: bigint | null): Promise<BillingPrincipal[]> {
  const ids = ulidIds();
  const em = orm.em.fork();
  const now = new Date().toISOString();
  const principals: BillingPrincipal[] = [];
  for (let i = 0; i < count; i++) {
    const accountId = ids.next('acct');
    const keyId = ids.next('key');
    const funds = 1_000_000_000_000n.toString();
    await em.execute('insert into accounts (id, name, balance_micro, lifetime_top_ups_micro, created_at) values (?, ?, ?, ?, ?)', [
      accountId,
      `bench ${i}`,
      funds,
      funds,
      now,
    ]);
    await em.execute(`insert into ledger_entries (id, account_id, kind, amount_micro, created_at) values (?, ?, 'top_up', ?, ?)`, [
      ids.next('led'),
      accountId,
      funds,
      now,
    ]);
    await em.execute(
      `insert into api_keys (id, account_id, name, kind, prefix, secret_hash, created_at, monthly_spend_limit_micro) values (?, ?, 'bench', 'prepaid', 'tgk_bench', ?, ?, ?)`,
      [keyId, accountId, randomBytes(32).toString('hex'), now, limitMicro?.toString() ?? null],
    );
    principals.push({ accountId, keyId, kind: 'prepaid', userId: null });
  }
  return principals;
}

interface PhaseResult {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** Runs `ops` operations with `concurrency` in flight; per-operation latency percentiles. */
async function phase(ops: number, concurrency: number, op: (i: number) => Promise<void>): Promise<PhaseResult> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ops) {
        const i = next++;
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { perSecond: ops / seconds, p50Ms: at(0.5), p99Ms: at(0.99) };
}

const fmt = (r: PhaseResult) =>
  `${r.perSecond.toFixed(0).padStart(6)}/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(7)} ms`;

async function scenario(name: string, billing: BillingService, principals: BillingPrincipal[]): Promise<void> {
  const holdIds: string[] = new Array(OPS);
  const pick = (i: number) => principals[i % principals.length];
  const reserve = await phase(OPS, CONCURRENCY, async (i) => {
    holdIds[i] = (await billing.reserveHold({ principal: pick(i), purpose: 'text', model: 'bench/model', amountMicro: HOLD_MICRO })).id;
  });
  const settle = await phase(OPS, CONCURRENCY, async (i) => {
    await billing.settleHold(holdIds[i], {
      costMicro: HOLD_MICRO - BigInt(i % 100),
      usage: { inputTokens: 100, outputTokens: 50 },
      latencyMs: 1,
    });
  });
  const cycle = await phase(OPS, CONCURRENCY, async (i) => {
    const hold = await billing.reserveHold({ principal: pick(i), purpose: 'text', model: 'bench/model', amountMicro: HOLD_MICRO });
    await billing.settleHold(hold.id, { costMicro: HOLD_MICRO / 2n });
  });
  for (const p of principals) {
    const audit = await billing.auditAccount(p.accountId);
    if (!audit.consistent)
      throw new Error(`audit failed for ${p.accountId}: ${JSON.stringify(audit, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
  }
  console.log(`\n${name}`);
  console.log(`  reserveHold           ${fmt(reserve)}`);
  console.log(`  settleHold            ${fmt(settle)}`);
  console.log(`  reserve+settle cycle  ${fmt(cycle)}`);
}

/** User + system CPU (ms) of a process of this machine; null when the server runs elsewhere. */
function processCpuMs(pid: number): number | null {
  try {
    const { user, system } = cpuMs(pid);
    return user + system;
  } catch {
    return null;
  }
}

/** PostgreSQL CPU per settlement of tollgate_apply_lease_ops batches of each size, on one lease. */
async function settlementBatches(url: string, principal: BillingPrincipal): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const ids = ulidIds();
    const now = new Date();
    const leaseId = ids.next('lease');
    const {
      rows: [taken],
    } = await client.query('select * from tollgate_take_lease($1, $2, $3, null, $4, 1, $5, $6, $7)', [
      leaseId,
      principal.accountId,
      principal.keyId,
      now.toISOString().slice(0, 7),
      100_000_000_000n.toString(),
      new Date(now.getTime() + 3_600_000).toISOString(),
      now.toISOString(),
    ]);
    if (taken.refusal) throw new Error(`lease refused: ${taken.refusal}`);
    const {
      rows: [{ pid }],
    } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const batch = async (size: number) => {
      const atMs = Date.now();
      const ops = Array.from({ length: size }, (): LeaseOp => ({
        op: 'settle',
        leaseId,
        holdId: ids.next('hold'),
        costMicro: 4321n,
        holdMicro: 5000n,
        model: 'bench/model',
        atMs,
        ledgerId: ids.next('led'),
        usageId: ids.next('use'),
        usageStatus: 'ok',
        requestId: `req_${randomBytes(8).toString('hex')}`,
        inputTokens: 100,
        cachedInputTokens: 0,
        cacheWrite5mInputTokens: 0,
        cacheWrite1hInputTokens: 0,
        outputTokens: 50,
        reasoningTokens: 0,
        latencyMs: 3,
        deployment: null,
      }));
      const { rows } = await client.query({ name: 'apply', text: APPLY_LEASE_OPS, values: leaseOpsParams(ops) });
      if (rows.length !== size || !rows.every((row: { applied: boolean }) => row.applied)) throw new Error('a settlement was not applied');
    };
    console.log('\nlease settlement batches (tollgate_apply_lease_ops, one lease)');
    for (const size of [1, 10, 30, 100, 300]) {
      const batches = Math.max(20, Math.round((OPS * 5) / size));
      for (let i = 0; i < 5; i++) await batch(size);
      const cpuBefore = processCpuMs(pid);
      const started = performance.now();
      for (let i = 0; i < batches; i++) await batch(size);
      const cpuAfter = processCpuMs(pid);
      const settlements = batches * size;
      const cpu =
        cpuBefore === null || cpuAfter === null
          ? 'n/a (server not on this machine)'
          : `${(((cpuAfter - cpuBefore) * 1000) / settlements).toFixed(1).padStart(6)} µs`;
      console.log(
        `  batch ${String(size).padStart(3)}: PostgreSQL CPU per settlement ${cpu}, wall ${(((performance.now() - started) * 1000) / settlements).toFixed(1).padStart(6)} µs (${settlements} settlements)`,
      );
    }
  } finally {
    await client.end();
  }
}

/** Settlements per second the lease writer commits from a backlog, by lanes and batch cap, and PostgreSQL's CPU per settlement. */
async function writerCapacity(url: string, billing: BillingService, principals: BillingPrincipal[]): Promise<void> {
  console.log(`\nsettlement writer capacity (BudgetLeases, ${WRITER_OPS} settlements over ${principals.length} accounts queued at once)`);
  const monitor = new Client({ connectionString: url });
  await monitor.connect();
  // CPU of each backend of the bench database by pid: a connection may close or open in between.
  const backendsCpuMs = async () => {
    const { rows } = await monitor.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return new Map(rows.map((row) => [row.pid, processCpuMs(row.pid) ?? NaN]));
  };
  const cpuSince = (before: Map<number, number>, after: Map<number, number>) =>
    [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
  // A gateway at capacity: its event loop busy 75% of the time, so every batch waits for its turn.
  const busyLoop = () => {
    const timer = setInterval(() => {
      const until = performance.now() + 7.5;
      while (performance.now() < until);
    }, 10);
    return () => clearInterval(timer);
  };
  try {
    const configs = [
      { lanes: 1, maxBatchOps: 100 },
      { lanes: 1, maxBatchOps: 1000 },
      { lanes: 2, maxBatchOps: 100 },
      { lanes: 2, maxBatchOps: 1000 },
      { lanes: 4, maxBatchOps: 1000 },
    ];
    for (const { lanes, maxBatchOps, busy } of [false, true].flatMap((busy) => configs.map((config) => ({ ...config, busy })))) {
      const runner = pgSqlRunner(url, pino({ level: 'silent' }), lanes + 4);
      const leases = new BudgetLeases(pgLeaseStore(runner), billing, systemClock, ulidIds(), inProcessEventBus(), {
        writerLanes: lanes,
        maxBatchOps,
        settlementBacklog: WRITER_OPS * 2,
        settlementDelayMs: 20,
      });
      try {
        const holds = await Promise.all(
          Array.from({ length: WRITER_OPS }, (_, i) =>
            leases.reserve({
              principal: principals[i % principals.length]!,
              purpose: 'text',
              model: 'bench/model',
              amountMicro: HOLD_MICRO,
            }),
          ),
        );
        const cpuBefore = await backendsCpuMs();
        const stopBusy = busy ? busyLoop() : () => undefined;
        const started = performance.now();
        await Promise.all(
          holds.map((hold, i) =>
            leases.settle(hold, {
              costMicro: 4321n,
              usage: { inputTokens: 100, outputTokens: 50 },
              latencyMs: 3,
              requestId: `req_bench_${i}`,
            }),
          ),
        );
        const seconds = (performance.now() - started) / 1000;
        stopBusy();
        const cpuUs = (cpuSince(cpuBefore, await backendsCpuMs()) * 1000) / WRITER_OPS;
        console.log(
          `  ${busy ? 'event loop 75% busy' : 'event loop idle    '}, ${lanes} lane(s), batches of up to ${String(maxBatchOps).padStart(4)}: ${(WRITER_OPS / seconds).toFixed(0).padStart(6)} settlements/s, PostgreSQL CPU per settlement ${cpuUs.toFixed(1).padStart(5)} µs`,
        );
      } finally {
        await leases.close();
        await runner.close();
      }
    }
  } finally {
    await monitor.end();
  }
}

async function main(): Promise<void> {
  console.log(`billing bench: ${OPS} operations per phase, ${CONCURRENCY} in flight, pool 20, server ${new URL(SERVER_URL).host}`);
  await withScratchDatabase(async (url) => {
    const orm = await openDatabase(url, 20);
    try {
      const billing = new BillingService(
        systemClock,
        ulidIds(),
        inProcessEventBus(),
        new SandboxPaymentPort(),
        pgHoldStore(orm),
        new PgBillingReads(orm),
        pgAutoTopUpStore(orm),
        pgSpendLimitStore(orm),
      );
      await scenario('spread: 200 accounts, one key each, no limit', billing, await provision(orm, 200, null));
      await scenario('hot: one account, one key with a monthly limit', billing, await provision(orm, 1, 100_000_000_000n));
      const [leaseAccount] = await provision(orm, 1, null);
      await settlementBatches(url, leaseAccount!);
      await writerCapacity(url, billing, await provision(orm, 8, null));
    } finally {
      await orm.close();
    }
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
