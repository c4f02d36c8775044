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
end $$;
