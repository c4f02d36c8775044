import { Migration } from '@mikro-orm/migrations';

/**
 * `DELETE /v1/videos/{id}` deletes a finished video's file and hides the job from its account
 * (`deleted_at`); the row stays, as do the hold, ledger and usage rows that bill it.
 */
export class Migration20261204000000VideoDeletion extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "videos" add column "deleted_at" timestamptz null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "videos" drop column "deleted_at";');
  }
}
