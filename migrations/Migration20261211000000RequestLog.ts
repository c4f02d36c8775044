import { Migration } from '@mikro-orm/migrations';
import { functionDefinition } from './functions';

const COLUMNS = `id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens, cache_write_5m_input_tokens,
  cache_write_1h_input_tokens, output_tokens, reasoning_tokens, images, video_seconds, cost_micro, overage_micro, status, latency_ms, created_at`;

/**
 * The request log at any volume (docs/dashboard.md, Storage).
 *
 * - usage_records is partitioned by UTC month of created_at (tollgate_usage_partitions makes
 *   this month's and the next two's, moves stray rows out of the default partition, and drops
 *   months past the retention setting), so retention drops tables instead of deleting rows.
 * - A partitioned table's unique keys must hold its partition column: the primary key is
 *   (id, created_at) and a settlement's claim is unique (hold_id, created_at). A replayed
 *   settlement carries the time it was first made (the operation is built once), so it still
 *   meets its first record and changes nothing.
 * - usage_daily holds per account, UTC day, key and model what the dashboard adds up, kept by a
 *   statement-level trigger reading the inserted rows as a transition table: one upsert per
 *   settlement batch. Existing rows are copied through it, so history is aggregated too.
 */
export class Migration20261211000000RequestLog extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "usage_records" rename to "usage_records_unpartitioned";');
    this.addSql(
      'alter table "usage_records_unpartitioned" drop constraint "usage_records_pkey", drop constraint "usage_records_hold_id_unique";',
    );
    this.addSql('drop index "usage_records_account_id_created_at_index", "usage_records_key_id_created_at_index";');
    this.addSql(`create table "usage_records" (
      "id" text not null, "account_id" text not null, "key_id" text null, "hold_id" text not null, "request_id" text null,
      "model" text not null, "input_tokens" int not null default 0, "cached_input_tokens" int not null default 0,
      "cache_write_5m_input_tokens" int not null default 0, "cache_write_1h_input_tokens" int not null default 0,
      "output_tokens" int not null default 0, "reasoning_tokens" int not null default 0, "images" int not null default 0,
      "video_seconds" int not null default 0, "cost_micro" bigint not null, "overage_micro" bigint not null default 0,
      "status" text not null, "latency_ms" int not null, "created_at" timestamptz not null,
      constraint "usage_records_pkey" primary key ("id", "created_at")
    ) partition by range ("created_at");`);
    this.addSql('alter table "usage_records" add constraint "usage_records_hold_id_created_at_unique" unique ("hold_id", "created_at");');
    this.addSql('create index "usage_records_account_time_index" on "usage_records" ("account_id", "created_at", "id");');
    this.addSql('create index "usage_records_key_time_index" on "usage_records" ("key_id", "created_at", "id");');
    this.addSql('create table "usage_records_default" partition of "usage_records" default;');
    this.addSql(`create table "usage_daily" (
      "account_id" text not null, "day" date not null, "key_id" text not null, "model" text not null,
      "requests" bigint not null default 0, "failed_requests" bigint not null default 0,
      "cost_micro" bigint not null default 0, "overage_micro" bigint not null default 0,
      "input_tokens" bigint not null default 0, "cached_input_tokens" bigint not null default 0,
      "cache_write_5m_input_tokens" bigint not null default 0, "cache_write_1h_input_tokens" bigint not null default 0,
      "output_tokens" bigint not null default 0, "reasoning_tokens" bigint not null default 0,
      "images" bigint not null default 0, "video_seconds" bigint not null default 0, "latency_ms" bigint not null default 0,
      constraint "usage_daily_pkey" primary key ("account_id", "day", "key_id", "model")
    );`);
    this.addSql(functionDefinition('tollgate_usage_daily_add'));
    this.addSql(functionDefinition('tollgate_usage_partitions'));
    this.addSql(
      'create trigger "usage_records_daily" after insert on "usage_records" referencing new table as added for each statement execute function tollgate_usage_daily_add();',
    );
    this.addSql(`insert into "usage_records" (${COLUMNS}) select ${COLUMNS} from "usage_records_unpartitioned";`);
    this.addSql('drop table "usage_records_unpartitioned";');
    this.addSql('select * from tollgate_usage_partitions(now(), null);');
    this.addSql(functionDefinition('tollgate_apply_lease_ops'));
  }

  override async down(): Promise<void> {
    this.addSql('alter table "usage_records" rename to "usage_records_partitioned";');
    this.addSql('alter table "usage_records_partitioned" rename constraint "usage_records_pkey" to "usage_records_partitioned_pkey";');
    this.addSql(`create table "usage_records" (
      "id" text not null constraint "usage_records_pkey" primary key, "account_id" text not null, "key_id" text null, "hold_id" text not null, "request_id" text null,
      "model" text not null, "input_tokens" int not null default 0, "cached_input_tokens" int not null default 0,
      "output_tokens" int not null default 0, "reasoning_tokens" int not null default 0, "images" int not null default 0,
      "video_seconds" int not null default 0, "cost_micro" bigint not null, "status" text not null, "latency_ms" int not null,
      "created_at" timestamptz not null, "cache_write_5m_input_tokens" int not null default 0,
      "cache_write_1h_input_tokens" int not null default 0, "overage_micro" bigint not null default 0
    );`);
    this.addSql(`insert into "usage_records" (${COLUMNS}) select ${COLUMNS} from "usage_records_partitioned";`);
    this.addSql('drop table "usage_records_partitioned" cascade;');
    this.addSql('alter table "usage_records" add constraint "usage_records_hold_id_unique" unique ("hold_id");');
    this.addSql('create index "usage_records_account_id_created_at_index" on "usage_records" ("account_id", "created_at");');
    this.addSql('create index "usage_records_key_id_created_at_index" on "usage_records" ("key_id", "created_at");');
    this.addSql('drop table "usage_daily";');
    this.addSql('drop function tollgate_usage_daily_add();');
    this.addSql('drop function tollgate_usage_partitions(timestamptz, int);');
  }
}
