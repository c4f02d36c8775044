import { Migration } from '@mikro-orm/migrations';
import { functionDefinition } from './functions';

/**
 * Reservation and settlement as one round trip each (src/domain/billing/service.ts). The
 * functions run the same conditional UPDATEs as before, in the same lock order
 * (holds → accounts → key_month_spend → plan_month_usage), inside the calling statement's
 * transaction: a row lock is now held for microseconds of server time instead of several
 * client round trips, which is what lets one busy account take many requests per second.
 */
export class Migration20261123000000HoldFunctions extends Migration {
  override async up(): Promise<void> {
    this.addSql(functionDefinition('tollgate_take_hold'));
    this.addSql(functionDefinition('tollgate_close_hold'));
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists tollgate_take_hold(text, text, text, text, text, text, text, bigint, timestamptz, timestamptz)');
    this.addSql(
      'drop function if exists tollgate_close_hold(text, text, bigint, timestamptz, text, text, text, text, int, int, int, int, int, int, int)',
    );
  }
}
