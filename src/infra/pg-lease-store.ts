import type { LeaseOp, LeaseOpResult, LeaseStore, LeaseTaken, LeaseTake, SettleOp } from '../domain/billing/lease-store';
import type { RefusalReason } from '../domain/billing/hold-requests';
import { fromClosedHoldRow, type ClosedHoldRow } from './pg-hold-store';
import type { SqlRunner } from './sql-runner';
import { retryDeadlocks } from './sql';

/**
 * The batch as tollgate_apply_lease_ops reads it (migrations/functions/tollgate_apply_lease_ops.sql):
 * the settlements as one array per column (PostgreSQL reads these for less CPU than JSON), then
 * the other operations as one JSON document. Each operation carries its index in the batch (`seq`).
 * The array literals are written here rather than by pg from JavaScript arrays: pg prepares and
 * escapes element by element, which allocated half as much again as the whole batch as JSON.
 */
export function leaseOpsParams(ops: readonly LeaseOp[]): string[] {
  const settles: SettleOp[] = [];
  const seqs: number[] = [];
  const others: Record<string, unknown>[] = [];
  for (let seq = 0; seq < ops.length; seq++) {
    const op = ops[seq]!;
    if (op.op === 'settle') {
      settles.push(op);
      seqs.push(seq);
    } else if (op.op === 'trim') others.push({ seq, op: 'trim', lease_id: op.leaseId, by_micro: op.byMicro.toString() });
    else if (op.op === 'release') others.push({ seq, op: 'release', lease_id: op.leaseId, now: op.at.toISOString() });
    else others.push({ seq, op: 'renew', lease_id: op.leaseId, expires_at: op.expiresAt.toISOString() });
  }
  return [
    `{${seqs.join(',')}}`,
    texts(settles, (op) => op.leaseId),
    texts(settles, (op) => op.holdId),
    numbers(settles, (op) => op.costMicro),
    numbers(settles, (op) => op.holdMicro),
    texts(settles, (op) => op.model),
    texts(settles, isoTimes()),
    texts(settles, (op) => op.ledgerId),
    texts(settles, (op) => op.usageId),
    texts(settles, (op) => op.usageStatus),
    texts(settles, (op) => op.requestId),
    numbers(settles, (op) => op.inputTokens),
    numbers(settles, (op) => op.cachedInputTokens),
    numbers(settles, (op) => op.cacheWrite5mInputTokens),
    numbers(settles, (op) => op.cacheWrite1hInputTokens),
    numbers(settles, (op) => op.outputTokens),
    numbers(settles, (op) => op.reasoningTokens),
    numbers(settles, (op) => op.latencyMs),
    texts(settles, (op) => op.deployment),
    JSON.stringify(others),
  ];
}

/** Settlement times as text, each distinct millisecond formatted once (a busy batch has several settlements a millisecond). */
function isoTimes(): (op: SettleOp) => string {
  let lastMs = Number.NaN;
  let lastText = '';
  return (op) => {
    if (op.atMs !== lastMs) {
      lastMs = op.atMs;
      lastText = new Date(lastMs).toISOString();
    }
    return lastText;
  };
}

/** An array literal of integers. */
function numbers(ops: readonly SettleOp[], value: (op: SettleOp) => number | bigint): string {
  const elements = new Array<string>(ops.length);
  for (let i = 0; i < ops.length; i++) elements[i] = String(value(ops[i]!));
  return arrayLiteral(elements);
}

const NEEDS_ESCAPE = /["\\]/;

/** An array literal of texts: each element quoted (`"` and `\` escaped), null as NULL. */
function texts(ops: readonly SettleOp[], value: (op: SettleOp) => string | null): string {
  const elements = new Array<string>(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const text = value(ops[i]!);
    elements[i] = text === null ? 'NULL' : `"${NEEDS_ESCAPE.test(text) ? text.replace(/["\\]/g, '\\$&') : text}"`;
  }
  return arrayLiteral(elements);
}

/**
 * `{a,b,c}` as one flat string: join copies the elements once, where `+=` per element built a
 * rope of three nodes each that pg then flattened into a copy of its own.
 */
function arrayLiteral(elements: string[]): string {
  if (elements.length === 0) return '{}';
  elements[0] = `{${elements[0]!}`;
  elements[elements.length - 1] += '}';
  return elements.join(',');
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
