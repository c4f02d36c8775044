/**
 * A second gateway instance for the budget-lease proofs: a separate Node process with its own
 * BudgetLeases (own `pg` pool, own in-process event bus, own MikroORM pool for the refusal
 * errors) on the test database. Run with `node -r test/support/swc-register.js` (see
 * test/integration/billing-leases.test.ts).
 *
 * Protocol (IPC), one answer per command:
 *   child → `{type:'ready'}`
 *   parent → `{type:'fire', ...LeaseFireRequest}`  child → `{type:'fired', results}` (holds stay open)
 *   parent → `{type:'settle', costMicro, count?}`   child → `{type:'settled', holdIds}` (committed)
 *   parent → `{type:'close'}`                       child → `{type:'closed'}` (leases given back)
 *   parent → `{type:'exit'}`                        the child exits 0.
 * The crash test kills the child with SIGKILL instead of sending `exit`.
 */
import 'reflect-metadata';
import { MikroORM } from '@mikro-orm/postgresql';
import pino from 'pino';
import { BudgetLeases } from '../../src/domain/billing/leases';
import type { LeasedHold } from '../../src/domain/billing/lease-budgets';
import { SandboxPaymentPort } from '../../src/domain/billing/payments';
import { BillingService } from '../../src/domain/billing/service';
import type { BillingPrincipal } from '../../src/domain/billing/hold-requests';
import { systemClock } from '../../src/domain/shared/clock';
import { ApiError } from '../../src/domain/shared/errors';
import { inProcessEventBus } from '../../src/domain/shared/events';
import { ulidIds } from '../../src/domain/shared/ids';
import { ormOptions } from '../../src/infra/database';
import { pgLeaseStore } from '../../src/infra/pg-lease-store';
import { pgSqlRunner } from '../../src/infra/sql-runner';
import { pgHoldStore } from '../../src/infra/pg-hold-store';
import { pgAutoTopUpStore } from '../../src/infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from '../../src/infra/pg-spend-limit-store';
import { PgBillingReads } from '../../src/infra/pg-billing-reads';

export interface LeaseFireRequest {
  principal: BillingPrincipal;
  count: number;
  amountMicro: string;
}

export type LeaseFireResult = { ok: true; holdId: string } | { ok: false; code: string; details: Record<string, unknown> };

export type LeaseWorkerCommand =
  ({ type: 'fire' } & LeaseFireRequest) | { type: 'settle'; costMicro: string; count?: number } | { type: 'close' } | { type: 'exit' };

export type LeaseWorkerAnswer =
  | { type: 'ready' }
  | { type: 'fired'; results: LeaseFireResult[] }
  | { type: 'settled'; holdIds: string[] }
  | { type: 'closed' }
  | { type: 'failed'; error: string };

async function main(): Promise<void> {
  const databaseUrl = process.env.LEASE_WORKER_DATABASE_URL;
  if (!databaseUrl || !process.send) throw new Error('run me with child_process.fork and LEASE_WORKER_DATABASE_URL');
  const orm = await MikroORM.init(ormOptions(databaseUrl, 10));
  const ids = ulidIds();
  const bus = inProcessEventBus();
  const billing = new BillingService(
    systemClock,
    ids,
    bus,
    new SandboxPaymentPort(),
    pgHoldStore(orm),
    new PgBillingReads(orm),
    pgAutoTopUpStore(orm),
    pgSpendLimitStore(orm),
  );
  const runner = pgSqlRunner(databaseUrl, pino({ level: 'silent' }));
  const leases = new BudgetLeases(pgLeaseStore(runner), billing, systemClock, ids, bus);
  const open: LeasedHold[] = [];
  const send = (message: LeaseWorkerAnswer) => process.send?.(message);

  const handle = async (message: LeaseWorkerCommand): Promise<LeaseWorkerAnswer | null> => {
    switch (message.type) {
      case 'fire': {
        const results = await fire(leases, message, open);
        return { type: 'fired', results };
      }
      case 'settle': {
        const batch = open.splice(0, message.count ?? open.length);
        await Promise.all(batch.map((hold) => leases.settle(hold, { costMicro: BigInt(message.costMicro) })));
        return { type: 'settled', holdIds: batch.map((h) => h.id) };
      }
      case 'close':
        await leases.close();
        return { type: 'closed' };
      case 'exit':
        await leases.close().catch(() => undefined);
        await runner.close().catch(() => undefined);
        await orm.close().catch(() => undefined);
        process.exit(0);
    }
    return null;
  };

  process.on('message', (message: LeaseWorkerCommand) => {
    void handle(message).then(
      (answer) => answer && send(answer),
      (error: unknown) => send({ type: 'failed', error: String((error as Error)?.stack ?? error) }),
    );
  });
  // An orphaned worker (the test runner died) must not linger with open pools.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

/** All reservations at once; the successful holds stay open (kept in `open`). */
function fire(leases: BudgetLeases, request: LeaseFireRequest, open: LeasedHold[]): Promise<LeaseFireResult[]> {
  const amountMicro = BigInt(request.amountMicro);
  return Promise.all(
    Array.from({ length: request.count }, async (): Promise<LeaseFireResult> => {
      try {
        const hold = await leases.reserve({ principal: request.principal, purpose: 'text', model: 'sandbox/echo', amountMicro });
        open.push(hold);
        return { ok: true, holdId: hold.id };
      } catch (error) {
        if (error instanceof ApiError) return { ok: false, code: error.code, details: error.details ?? {} };
        return { ok: false, code: `unexpected: ${String(error)}`, details: {} };
      }
    }),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`lease worker failed: ${String(error)}\n`);
  process.exit(1);
});
