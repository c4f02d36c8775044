import { Migration } from '@mikro-orm/migrations';

/**
 * Only active holds are indexed by expiry. Every query that reads holds by status asks for
 * active ones (the sweeper by expiry, an account's open holds, the reserved total), while
 * closed holds are nearly all of the table: every settled request leaves one. The index now
 * stays the size of the active set (a few rows per lease) instead of growing by an entry per
 * request that no query reads. Per settlement it made no measurable difference in
 * `npm run bench` (docs/billing.md, Measured figures).
 */
export class Migration20261126000000ActiveHoldsIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop index if exists "holds_status_expires_at_index";');
    this.addSql(`create index "holds_active_expires_at_index" on "holds" ("expires_at") where "status" = 'active';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists "holds_active_expires_at_index";');
    this.addSql('create index "holds_status_expires_at_index" on "holds" ("status", "expires_at");');
  }
}
