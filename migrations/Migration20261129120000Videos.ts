import { Migration } from '@mikro-orm/migrations';

/**
 * Video jobs and their idempotency keys. The job queue itself (pg-boss) keeps its tables in its
 * own schema, created and migrated by pg-boss on start.
 */
export class Migration20261129120000Videos extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "videos" ("id" text not null, "account_id" text not null, "key_id" text not null, "model" text not null, "prompt" text not null, "seconds" int not null, "resolution" text not null, "ratio" text not null, "status" text not null, "progress" int not null, "hold_id" text not null, "inputs" jsonb not null, "vendor_job" jsonb null, "error_code" text null, "error_message" text null, "created_at" timestamptz not null, "started_at" timestamptz null, "completed_at" timestamptz null, "deadline_at" timestamptz not null, "expires_at" timestamptz null, "content_bytes" bigint null, "content_deleted_at" timestamptz null, constraint "videos_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "videos_retained_expires_at_index" on "videos" ("expires_at") where "status" = 'completed' and "content_deleted_at" is null;`,
    );
    this.addSql(`create index "videos_unfinished_deadline_index" on "videos" ("deadline_at") where "status" in ('queued', 'in_progress');`);
    this.addSql(`create index "videos_account_id_id_index" on "videos" ("account_id", "id");`);
    this.addSql(
      `create table "video_idempotency_keys" ("account_id" text not null, "idempotency_key" text not null, "request_hash" text not null, "video_id" text not null, "created_at" timestamptz not null, constraint "video_idempotency_keys_pkey" primary key ("account_id", "idempotency_key"));`,
    );
    this.addSql(`create index "video_idempotency_keys_created_at_index" on "video_idempotency_keys" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "video_idempotency_keys";');
    this.addSql('drop table if exists "videos";');
  }
}
