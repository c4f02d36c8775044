import { Migration } from '@mikro-orm/migrations';
import { functionDefinition } from './functions';
import { SET_BASED_APPLY_LEASE_OPS } from './Migration20261125000000SetBasedSettlement';

/**
 * A settlement's claim is its usage record, not a closed hold row of its own.
 *
 * Every settlement the lease writer sends now writes a usage record (a release that records
 * nothing is not sent at all: it changes no row), and `usage_records.hold_id` is unique, so
 * `insert ... on conflict (hold_id) do nothing` claims the request exactly as the hold row did:
 * a replayed settlement changes nothing and answers `applied = false`. Per request PostgreSQL
 * now writes two rows (usage record, ledger entry) instead of three, and checks two foreign
 * keys instead of four. Request holds carved from leases exist only in memory until then, so
 * `holds` keeps leases and exact (per-request) holds, which are the rows anything reads.
 *
 * Two planner fixes:
 * - The settlements are read from their own array (jsonb_path_query_array), not filtered out of
 *   every operation: the planner estimated the filtered set at one row and joined it to itself
 *   by nested loops, comparing every pair of a batch.
 * - Now that it (rightly) expects about 100 settlements, every table is reached through
 *   `= any (array(...))` of the batch's few leases, accounts and keys, so it probes primary
 *   keys instead of scanning: without that it scanned `holds`, which grows with every lease.
 *
 * Lock order is unchanged: holds (leases, for update) → accounts → key_month_spend →
 * plan_month_usage. The function's text is migrations/functions/tollgate_apply_lease_ops.sql;
 * what the change saved is in docs/billing.md (Measured figures).
 */
export class Migration20261127000000UsageRecordClaim extends Migration {
  override async up(): Promise<void> {
    this.addSql(functionDefinition('tollgate_apply_lease_ops'));
  }

  override async down(): Promise<void> {
    this.addSql(SET_BASED_APPLY_LEASE_OPS);
  }
}
