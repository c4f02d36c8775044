import { Migration } from '@mikro-orm/migrations';

/**
 * ledger_entries and usage_records keep their account id without a foreign key. Each settled
 * request writes one row to each, from tollgate_apply_lease_ops, with the account id of a lease
 * row the statement holds locked and whose account it updates in the same statement; the other
 * writers (tollgate_close_hold, top-ups) likewise take it from a hold or account row they have
 * just updated, and accounts are never deleted. The two foreign-key checks per request proved
 * nothing more and were a sizeable part of PostgreSQL's work per settlement (docs/billing.md,
 * Measured figures).
 */
export class Migration20261128000000AppendOnlyAccountRefs extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "ledger_entries" drop constraint "ledger_entries_account_id_foreign";');
    this.addSql('alter table "usage_records" drop constraint "usage_records_account_id_foreign";');
  }

  override async down(): Promise<void> {
    this.addSql(
      'alter table "ledger_entries" add constraint "ledger_entries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;',
    );
    this.addSql(
      'alter table "usage_records" add constraint "usage_records_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;',
    );
  }
}
