create or replace function tollgate_take_lease(
  p_id text, p_account_id text, p_key_id text, p_plan_user_id text, p_month text,
  p_min bigint, p_want bigint, p_expires_at timestamptz, p_created_at timestamptz
) returns table (refusal text, granted bigint) language plpgsql as $$
declare
  g bigint := greatest(p_min, p_want);
  avail bigint;
  lim bigint;
  used bigint;
begin
  -- Each constraint must cover p_min; beyond it a lease takes at most a quarter of what is
  -- left, so slack held by one instance never starves the others for long.
  if p_plan_user_id is null then
    select balance_micro - reserved_micro into avail from accounts where id = p_account_id for update;
    if avail is null or avail < p_min then return query select 'balance'::text, 0::bigint; return; end if;
    g := least(g, greatest(p_min, avail / 4));
  end if;
  insert into key_month_spend (key_id, month) values (p_key_id, p_month) on conflict do nothing;
  select k.monthly_spend_limit_micro, s.settled_micro + s.reserved_micro into lim, used
    from key_month_spend s join api_keys k on k.id = s.key_id
   where s.key_id = p_key_id and s.month = p_month for update of s;
  if lim is not null then
    if lim - used < p_min then return query select 'key_limit'::text, 0::bigint; return; end if;
    g := least(g, greatest(p_min, (lim - used) / 4));
  end if;
  if p_plan_user_id is not null then
    insert into plan_month_usage (user_id, month) values (p_plan_user_id, p_month) on conflict do nothing;
    select p.monthly_allowance_micro, u.used_micro + u.reserved_micro into lim, used
      from plan_month_usage u join users us on us.id = u.user_id join plans p on p.id = us.plan_id
     where u.user_id = p_plan_user_id and u.month = p_month for update of u;
    if lim is null or lim - used < p_min then return query select 'plan_allowance'::text, 0::bigint; return; end if;
    g := least(g, greatest(p_min, (lim - used) / 4));
    update plan_month_usage set reserved_micro = reserved_micro + g where user_id = p_plan_user_id and month = p_month;
  else
    update accounts set reserved_micro = reserved_micro + g where id = p_account_id;
  end if;
  update key_month_spend set reserved_micro = reserved_micro + g where key_id = p_key_id and month = p_month;
  insert into holds (id, account_id, key_id, plan_user_id, month, purpose, model, amount_micro, status, charged_micro, expires_at, created_at)
  values (p_id, p_account_id, p_key_id, p_plan_user_id, p_month, 'lease', '', g, 'active', 0, p_expires_at, p_created_at);
  return query select null::text, g;
end $$;
