import type { LeaseOp, LeaseOpResult, LeaseStore, LeaseTaken, LeaseTake } from '../domain/billing/lease-store';
import type { RefusalReason } from '../domain/billing/hold-requests';
import { fromClosedHoldRow, type ClosedHoldRow } from './pg-hold-store';
import type { SqlRunner } from './sql-runner';
import { retryDeadlocks } from '../domain/shared/sql';

/**
 * The batch as tollgate_apply_lease_ops reads it (migrations/functions/tollgate_apply_lease_ops.sql):
 * the settlements as one array per column (PostgreSQL reads these for less CPU than JSON), then
 * the other operations as one JSON document. Each operation carries its index in the batch (`seq`).
 */
export function leaseOpsParams(ops: readonly LeaseOp[]): unknown[] {
  const seq: number[] = [];
  const leaseId: string[] = [];
  const holdId: string[] = [];
  const cost: string[] = [];
  const hold: string[] = [];
  const model: string[] = [];
  const now: string[] = [];
  const ledgerId: string[] = [];
  const usageId: string[] = [];
  const usageStatus: string[] = [];
  const requestId: (string | null)[] = [];
  const input: number[] = [];
  const cached: number[] = [];
  const cacheWrite5m: number[] = [];
  const cacheWrite1h: number[] = [];
  const output: number[] = [];
  const reasoning: number[] = [];
  const latency: number[] = [];
  const deployment: (string | null)[] = [];
  const others: Record<string, unknown>[] = [];
  ops.forEach((op, i) => {
    switch (op.op) {
      case 'settle':
        seq.push(i);
        leaseId.push(op.leaseId);
        holdId.push(op.holdId);
        cost.push(op.costMicro.toString());
        hold.push(op.holdMicro.toString());
        model.push(op.model);
        now.push(op.at.toISOString());
        ledgerId.push(op.ledgerId);
        usageId.push(op.usageId);
        usageStatus.push(op.usageStatus);
        requestId.push(op.requestId);
        input.push(op.inputTokens);
        cached.push(op.cachedInputTokens);
        cacheWrite5m.push(op.cacheWrite5mInputTokens);
        cacheWrite1h.push(op.cacheWrite1hInputTokens);
        output.push(op.outputTokens);
        reasoning.push(op.reasoningTokens);
        latency.push(op.latencyMs);
        deployment.push(op.deployment);
        return;
      case 'trim':
        others.push({ seq: i, op: 'trim', lease_id: op.leaseId, by_micro: op.byMicro.toString() });
        return;
      case 'release':
        others.push({ seq: i, op: 'release', lease_id: op.leaseId, now: op.at.toISOString() });
        return;
      case 'renew':
        others.push({ seq: i, op: 'renew', lease_id: op.leaseId, expires_at: op.expiresAt.toISOString() });
        return;
    }
  });
  return [
    seq,
    leaseId,
    holdId,
    cost,
    hold,
    model,
    now,
    ledgerId,
    usageId,
    usageStatus,
    requestId,
    input,
    cached,
    cacheWrite5m,
    cacheWrite1h,
    output,
    reasoning,
    latency,
    deployment,
    JSON.stringify(others),
  ];
}

/** The statement that applies a batch, with leaseOpsParams (the settlement bench runs it alone). */
export const APPLY_LEASE_OPS = `select * from tollgate_apply_lease_ops($1::int[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[],
  $7::timestamptz[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::int[], $14::int[], $15::int[], $16::int[],
  $17::int[], $18::int[], $19::text[], $20::jsonb)`;

interface OpResultRow extends ClosedHoldRow {
  seq: number;
}

/**
 * Budget leases on PostgreSQL: tollgate_take_lease and tollgate_apply_lease_ops, as prepared
 * statements. Each is one transaction, so a deadlock (with a sweeper, say) rolls all of it back
 * and it runs again here.
 */
export function pgLeaseStore(sql: SqlRunner): LeaseStore {
  return {
    takeLease: (take: LeaseTake): Promise<LeaseTaken> =>
      retryDeadlocks(async () => {
        const [row] = await sql.rows<{ refusal: RefusalReason | null; granted: string }>(
          'tollgate_take_lease',
          'select * from tollgate_take_lease($1, $2, $3, $4, $5, $6, $7, $8, $9)',
          [
            take.id,
            take.accountId,
            take.keyId,
            take.planUserId,
            take.month,
            take.minMicro.toString(),
            take.wantMicro.toString(),
            take.expiresAt.toISOString(),
            take.now.toISOString(),
          ],
        );
        return row!.refusal !== null ? { refusal: row!.refusal } : { refusal: null, grantedMicro: BigInt(row!.granted) };
      }),
    applyOps: (ops: readonly LeaseOp[]): Promise<LeaseOpResult[]> => {
      const params = leaseOpsParams(ops);
      return retryDeadlocks(async () => {
        const rows = await sql.rows<OpResultRow>('tollgate_apply_lease_ops', APPLY_LEASE_OPS, params);
        const results = new Array<LeaseOpResult>(ops.length);
        for (const row of rows) {
          results[row.seq] = fromClosedHoldRow(row);
        }
        return results;
      });
    },
  };
}
