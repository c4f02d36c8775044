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
end $$;
