import type { LeaseOp, LeaseOpResult, LeaseStore, LeaseTaken, LeaseTake } from '../domain/billing/lease-store';
import type { RefusalReason } from '../domain/billing/hold-requests';
import { fromClosedHoldRow, type ClosedHoldRow } from './pg-hold-store';
import type { SqlRunner } from './sql-runner';
import { retryDeadlocks } from './sql';

/** The batch format tollgate_apply_lease_ops reads (migrations/functions/tollgate_apply_lease_ops.sql). */
function wireOp(op: LeaseOp, seq: number): Record<string, unknown> {
  switch (op.op) {
    case 'settle':
      return {
        seq,
        op: 'settle',
        lease_id: op.leaseId,
        hold_id: op.holdId,
        cost: op.costMicro.toString(),
        hold: op.holdMicro.toString(),
        model: op.model,
        now: op.at.toISOString(),
        ledger_id: op.ledgerId,
        usage_id: op.usageId,
        usage_status: op.usageStatus,
        request_id: op.requestId,
        input: op.inputTokens,
        cached: op.cachedInputTokens,
        cache_write_5m: op.cacheWrite5mInputTokens,
        cache_write_1h: op.cacheWrite1hInputTokens,
        output: op.outputTokens,
        reasoning: op.reasoningTokens,
        latency: op.latencyMs,
        deployment: op.deployment,
      };
    case 'trim':
      return { seq, op: 'trim', lease_id: op.leaseId, by_micro: op.byMicro.toString() };
    case 'release':
      return { seq, op: 'release', lease_id: op.leaseId, now: op.at.toISOString() };
    case 'renew':
      return { seq, op: 'renew', lease_id: op.leaseId, expires_at: op.expiresAt.toISOString() };
  }
}

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
      const batch = JSON.stringify(ops.map(wireOp));
      return retryDeadlocks(async () => {
        const rows = await sql.rows<OpResultRow>('tollgate_apply_lease_ops', 'select * from tollgate_apply_lease_ops($1::jsonb)', [batch]);
        const results = new Array<LeaseOpResult>(ops.length);
        for (const row of rows) {
          results[row.seq] = fromClosedHoldRow(row);
        }
        return results;
      });
    },
  };
}
