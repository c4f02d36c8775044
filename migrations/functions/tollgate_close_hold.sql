create or replace function tollgate_close_hold(
  p_hold_id text, p_status text, p_cost bigint, p_now timestamptz, p_ledger_id text,
  p_usage_id text, p_usage_status text, p_request_id text, p_input int, p_cached int, p_cache_write_5m int, p_cache_write_1h int,
  p_output int, p_reasoning int, p_images int, p_video_seconds int, p_latency_ms int, p_deployment text
) returns table (applied boolean, account_id text, plan_billed boolean, balance_micro bigint, threshold_micro bigint,
                 charged_micro bigint, overage_micro bigint, hold_micro bigint, key_id text, model text)
language plpgsql as $$
#variable_conflict use_column
declare
  h holds%rowtype;
  v_charge bigint;
begin
  -- Whoever moves the hold out of 'active' owns its money: a second close changes nothing. The
  -- charge never exceeds the hold: usage that cost more is charged up to it, and the excess is
  -- the usage record's overage, charged to no one (docs/billing.md, Overage).
  update holds set status = p_status, charged_micro = least(p_cost, amount_micro), closed_at = p_now
   where id = p_hold_id and status = 'active' returning * into h;
  if not found then
    return query select false, null::text, null::boolean, null::bigint, null::bigint, 0::bigint, 0::bigint, null::bigint, null::text, null::text;
    return;
  end if;
  v_charge := h.charged_micro;
  if h.plan_user_id is null then
    update accounts a set balance_micro = a.balance_micro - v_charge, reserved_micro = a.reserved_micro - h.amount_micro
     where a.id = h.account_id returning a.balance_micro, a.auto_top_up_threshold_micro into balance_micro, threshold_micro;
  end if;
  if h.key_id is not null then
    update key_month_spend set reserved_micro = reserved_micro - h.amount_micro, settled_micro = settled_micro + v_charge
     where key_id = h.key_id and month = h.month;
  end if;
  if h.plan_user_id is not null then
    update plan_month_usage set reserved_micro = reserved_micro - h.amount_micro, used_micro = used_micro + v_charge
     where user_id = h.plan_user_id and month = h.month;
  end if;
  if h.plan_user_id is null and v_charge > 0 then
    insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at)
    values (p_ledger_id, h.account_id, 'charge', -v_charge, h.id, h.key_id, h.model, p_now);
  end if;
  if p_usage_status is not null then
    insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens,
      cache_write_5m_input_tokens, cache_write_1h_input_tokens, output_tokens, reasoning_tokens, images, video_seconds,
      cost_micro, overage_micro, status, latency_ms, created_at, deployment)
    values (p_usage_id, h.account_id, h.key_id, h.id, p_request_id, h.model, p_input, p_cached,
      p_cache_write_5m, p_cache_write_1h, p_output, p_reasoning, p_images, p_video_seconds,
      v_charge, p_cost - v_charge, p_usage_status, p_latency_ms, p_now, p_deployment);
  end if;
  return query select true, h.account_id, h.plan_user_id is not null, balance_micro, threshold_micro, v_charge, p_cost - v_charge, h.amount_micro, h.key_id, h.model;
end $$;
