import { Migration } from '@mikro-orm/migrations';

/**
 * Reservation and settlement as one round trip each (src/domain/billing/service.ts). The
 * functions run the same conditional UPDATEs as before, in the same lock order
 * (holds → accounts → key_month_spend → plan_month_usage), inside the calling statement's
 * transaction: a row lock is now held for microseconds of server time instead of several
 * client round trips, which is what lets one busy account take many requests per second.
 */
export class Migration20261123000000HoldFunctions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create or replace function tollgate_take_hold(
  p_hold_id text, p_account_id text, p_key_id text, p_plan_user_id text, p_month text,
  p_purpose text, p_model text, p_amount bigint, p_expires_at timestamptz, p_created_at timestamptz
) returns text language plpgsql as $$
begin
  -- (a) prepaid balance: available (balance - reserved) must cover the hold.
  if p_plan_user_id is null then
    update accounts set reserved_micro = reserved_micro + p_amount
     where id = p_account_id and balance_micro - reserved_micro >= p_amount;
    if not found then return 'balance'; end if;
  end if;
  -- (b) the key's month spend within its current limit (no limit: tracked, always passes).
  insert into key_month_spend (key_id, month) values (p_key_id, p_month) on conflict do nothing;
  update key_month_spend s set reserved_micro = s.reserved_micro + p_amount
    from api_keys k
   where s.key_id = p_key_id and s.month = p_month and k.id = s.key_id
     and (k.monthly_spend_limit_micro is null or s.settled_micro + s.reserved_micro + p_amount <= k.monthly_spend_limit_micro);
  if not found then
    -- Undo (a) under the row lock we still hold: nobody saw it.
    if p_plan_user_id is null then
      update accounts set reserved_micro = reserved_micro - p_amount where id = p_account_id;
    end if;
    return 'key_limit';
  end if;
  -- (c) a plan key's allowance within the plan's current monthly allowance.
  if p_plan_user_id is not null then
    insert into plan_month_usage (user_id, month) values (p_plan_user_id, p_month) on conflict do nothing;
    update plan_month_usage u set reserved_micro = u.reserved_micro + p_amount
      from users us join plans p on p.id = us.plan_id
     where u.user_id = p_plan_user_id and u.month = p_month and us.id = u.user_id
       and u.used_micro + u.reserved_micro + p_amount <= p.monthly_allowance_micro;
    if not found then
      update key_month_spend set reserved_micro = reserved_micro - p_amount where key_id = p_key_id and month = p_month;
      return 'plan_allowance';
    end if;
  end if;
  insert into holds (id, account_id, key_id, plan_user_id, month, purpose, model, amount_micro, status, expires_at, created_at)
  values (p_hold_id, p_account_id, p_key_id, p_plan_user_id, p_month, p_purpose, p_model, p_amount, 'active', p_expires_at, p_created_at);
  return null;
end $$;`);
    this.addSql(`
create or replace function tollgate_close_hold(
  p_hold_id text, p_status text, p_charge bigint, p_now timestamptz, p_ledger_id text,
  p_usage_id text, p_usage_status text, p_request_id text, p_input int, p_cached int, p_output int,
  p_reasoning int, p_images int, p_video_seconds int, p_latency_ms int
) returns table (applied boolean, account_id text, plan_billed boolean, balance_micro bigint, threshold_micro bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  h holds%rowtype;
begin
  -- Whoever moves the hold out of 'active' owns its money: a second close changes nothing.
  update holds set status = p_status, charged_micro = p_charge, closed_at = p_now
   where id = p_hold_id and status = 'active' returning * into h;
  if not found then
    return query select false, null::text, null::boolean, null::bigint, null::bigint;
    return;
  end if;
  if h.plan_user_id is null then
    update accounts a set balance_micro = a.balance_micro - p_charge, reserved_micro = a.reserved_micro - h.amount_micro
     where a.id = h.account_id returning a.balance_micro, a.auto_top_up_threshold_micro into balance_micro, threshold_micro;
  end if;
  if h.key_id is not null then
    update key_month_spend set reserved_micro = reserved_micro - h.amount_micro, settled_micro = settled_micro + p_charge
     where key_id = h.key_id and month = h.month;
  end if;
  if h.plan_user_id is not null then
    update plan_month_usage set reserved_micro = reserved_micro - h.amount_micro, used_micro = used_micro + p_charge
     where user_id = h.plan_user_id and month = h.month;
  end if;
  if h.plan_user_id is null and p_charge > 0 then
    insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at)
    values (p_ledger_id, h.account_id, 'charge', -p_charge, h.id, h.key_id, h.model, p_now);
  end if;
  if p_usage_status is not null then
    insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens, output_tokens,
      reasoning_tokens, images, video_seconds, cost_micro, status, latency_ms, created_at)
    values (p_usage_id, h.account_id, h.key_id, h.id, p_request_id, h.model, p_input, p_cached, p_output,
      p_reasoning, p_images, p_video_seconds, p_charge, p_usage_status, p_latency_ms, p_now);
  end if;
  return query select true, h.account_id, h.plan_user_id is not null, balance_micro, threshold_micro;
end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists tollgate_take_hold(text, text, text, text, text, text, text, bigint, timestamptz, timestamptz)');
    this.addSql('drop function if exists tollgate_close_hold(text, text, bigint, timestamptz, text, text, text, text, int, int, int, int, int, int, int)');
  }
}
