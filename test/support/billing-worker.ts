/**
 * A second gateway instance for the concurrency proof: a separate Node process with its own
 * MikroORM pool on the test database, firing reservations when the parent says so. Run with
 * `node -r test/support/swc-register.js` (see test/integration/billing-concurrency.test.ts).
 *
 * Protocol (IPC): child → `{type:'ready'}`; parent → `{type:'fire', ...FireRequest}`;
 * child → `{type:'fired', results}`; parent → `{type:'exit'}`.
 */
import 'reflect-metadata';
import { MikroORM } from '@mikro-orm/postgresql';
import { SandboxPaymentPort } from '../../src/domain/billing/payments';
import { BillingService } from '../../src/domain/billing/service';
import type { BillingPrincipal } from '../../src/domain/billing/hold-requests';
import { systemClock } from '../../src/domain/shared/clock';
import { ApiError } from '../../src/domain/shared/errors';
import { inProcessEventBus } from '../../src/domain/shared/events';
import { ulidIds } from '../../src/domain/shared/ids';
import { ormOptions } from '../../src/infra/database';
import { pgHoldStore } from '../../src/infra/pg-hold-store';
import { pgAutoTopUpStore } from '../../src/infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from '../../src/infra/pg-spend-limit-store';
import { PgBillingReads } from '../../src/infra/pg-billing-reads';

export interface FireRequest {
  principal: BillingPrincipal;
  count: number;
  amountMicro: string;
}

export type FireResult = { ok: true; holdId: string } | { ok: false; code: string; details: Record<string, unknown> };

type ParentMessage = ({ type: 'fire' } & FireRequest) | { type: 'exit' };

async function main(): Promise<void> {
  const databaseUrl = process.env.BILLING_WORKER_DATABASE_URL;
  if (!databaseUrl || !process.send) throw new Error('run me with child_process.fork and BILLING_WORKER_DATABASE_URL');
  const orm = await MikroORM.init(ormOptions(databaseUrl, 20));
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
  const send = (message: unknown) => process.send?.(message);

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'exit') {
      void orm.close().then(() => process.exit(0));
      return;
    }
    void fire(billing, message).then((results) => send({ type: 'fired', results }));
  });
  // An orphaned worker (the test runner died) must not linger with an open pool.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

/** All reservations at once: the pool and PostgreSQL interleave them however they like. */
function fire(billing: BillingService, request: FireRequest): Promise<FireResult[]> {
  const amountMicro = BigInt(request.amountMicro);
  return Promise.all(
    Array.from({ length: request.count }, async (): Promise<FireResult> => {
      try {
        const hold = await billing.reserveHold({ principal: request.principal, purpose: 'text', model: 'sandbox/echo', amountMicro });
        return { ok: true, holdId: hold.id };
      } catch (error) {
        if (error instanceof ApiError) return { ok: false, code: error.code, details: error.details };
        return { ok: false, code: `unexpected: ${String(error)}`, details: {} };
      }
    }),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`billing worker failed: ${String(error)}\n`);
  process.exit(1);
});
