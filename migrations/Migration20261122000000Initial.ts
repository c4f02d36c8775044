import { Migration } from '@mikro-orm/migrations';

/** Accounts, users, sessions, plans, API keys and their events, and the money tables. */
export class Migration20261122000000Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "accounts" ("id" text not null, "name" text not null, "balance_micro" bigint not null default 0, "reserved_micro" bigint not null default 0, "lifetime_top_ups_micro" bigint not null default 0, "tier_override" smallint null, "auto_top_up_threshold_micro" bigint null, "auto_top_up_amount_micro" bigint null, "created_at" timestamptz not null, constraint "accounts_pkey" primary key ("id"), constraint accounts_reserved_non_negative check (reserved_micro >= 0));`,
    );
    this.addSql(
      `create table "ledger_entries" ("id" text not null, "account_id" text not null, "kind" text not null, "amount_micro" bigint not null, "hold_id" text null, "key_id" text null, "note" text null, "created_at" timestamptz not null, constraint "ledger_entries_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_hold_id_unique" unique ("hold_id");`);
    this.addSql(`create index "ledger_entries_account_id_id_index" on "ledger_entries" ("account_id", "id");`);
    this.addSql(
      `create table "plans" ("id" text not null, "name" text not null, "models" jsonb not null, "monthly_allowance_micro" bigint not null, "requests_per_minute" int not null, "created_at" timestamptz not null, constraint "plans_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "plans" add constraint "plans_name_unique" unique ("name");`);
    this.addSql(
      `create table "usage_records" ("id" text not null, "account_id" text not null, "key_id" text null, "hold_id" text not null, "request_id" text null, "model" text not null, "input_tokens" int not null default 0, "cached_input_tokens" int not null default 0, "output_tokens" int not null default 0, "reasoning_tokens" int not null default 0, "images" int not null default 0, "video_seconds" int not null default 0, "cost_micro" bigint not null, "status" text not null, "latency_ms" int not null, "created_at" timestamptz not null, constraint "usage_records_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "usage_records" add constraint "usage_records_hold_id_unique" unique ("hold_id");`);
    this.addSql(`create index "usage_records_key_id_created_at_index" on "usage_records" ("key_id", "created_at");`);
    this.addSql(`create index "usage_records_account_id_created_at_index" on "usage_records" ("account_id", "created_at");`);
    this.addSql(
      `create table "users" ("id" text not null, "account_id" text not null, "email" text not null, "password_hash" text not null, "plan_id" text null, "created_at" timestamptz not null, constraint "users_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(
      `create table "sessions" ("id" text not null, "user_id" text not null, "token_hash" text not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, constraint "sessions_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(
      `create table "plan_month_usage" ("user_id" text not null, "month" text not null, "used_micro" bigint not null default 0, "reserved_micro" bigint not null default 0, constraint "plan_month_usage_pkey" primary key ("user_id", "month"), constraint plan_month_usage_non_negative check (reserved_micro >= 0 and used_micro >= 0));`,
    );
    this.addSql(
      `create table "api_keys" ("id" text not null, "account_id" text not null, "user_id" text null, "name" text not null, "kind" text not null, "prefix" text not null, "secret_hash" text not null, "created_at" timestamptz not null, "last_used_at" timestamptz null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "monthly_spend_limit_micro" bigint null, constraint "api_keys_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_secret_hash_unique" unique ("secret_hash");`);
    this.addSql(`create index "api_keys_account_id_created_at_index" on "api_keys" ("account_id", "created_at");`);
    this.addSql(
      `create table "key_month_spend" ("key_id" text not null, "month" text not null, "settled_micro" bigint not null default 0, "reserved_micro" bigint not null default 0, "limit_reached_at" timestamptz null, constraint "key_month_spend_pkey" primary key ("key_id", "month"), constraint key_month_spend_non_negative check (reserved_micro >= 0 and settled_micro >= 0));`,
    );
    this.addSql(
      `create table "key_events" ("id" text not null, "key_id" text not null, "account_id" text not null, "kind" text not null, "actor_user_id" text null, "data" jsonb not null, "created_at" timestamptz not null, constraint "key_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "key_events_key_id_id_index" on "key_events" ("key_id", "id");`);
    this.addSql(
      `create table "holds" ("id" text not null, "account_id" text not null, "key_id" text null, "plan_user_id" text null, "month" text not null, "purpose" text not null, "model" text not null, "amount_micro" bigint not null, "status" text not null, "charged_micro" bigint null, "expires_at" timestamptz not null, "created_at" timestamptz not null, "closed_at" timestamptz null, constraint "holds_pkey" primary key ("id"), constraint holds_amount_non_negative check (amount_micro >= 0));`,
    );
    this.addSql(`create index "holds_status_expires_at_index" on "holds" ("status", "expires_at");`);
    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "usage_records" add constraint "usage_records_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "users" add constraint "users_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "users" add constraint "users_plan_id_foreign" foreign key ("plan_id") references "plans" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "plan_month_usage" add constraint "plan_month_usage_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "key_month_spend" add constraint "key_month_spend_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "key_events" add constraint "key_events_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "key_events" add constraint "key_events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "holds" add constraint "holds_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "holds" add constraint "holds_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "holds" add constraint "holds_plan_user_id_foreign" foreign key ("plan_user_id") references "users" ("id") on update cascade on delete set null;`,
    );
  }
}
