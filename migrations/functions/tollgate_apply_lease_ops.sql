create or replace function tollgate_apply_lease_ops(
  p_seq int[], p_lease_id text[], p_hold_id text[], p_cost bigint[], p_hold bigint[], p_model text[], p_now timestamptz[],
  p_ledger_id text[], p_usage_id text[], p_usage_status text[], p_request_id text[], p_input int[], p_cached int[],
  p_cache_write_5m int[], p_cache_write_1h int[], p_output int[], p_reasoning int[], p_latency int[], p_deployment text[],
  p_others jsonb)
returns table (seq int, applied boolean, account_id text, plan_billed boolean, balance_micro bigint, threshold_micro bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  l holds%rowtype;
  moved bigint;
begin
  -- A batch of lease operations in one transaction. Settlements (nearly every operation) come as one
  -- array per column, which PostgreSQL reads for about a quarter less CPU than the same rows as a
  -- JSON document (docs/performance-log.md); the rare trims, releases and renewals as JSON.
  if cardinality(p_seq) > 0 then
    return query
    -- A settlement is charged its cost up to its request hold; the excess is the usage record's
    -- overage, charged to no one (docs/billing.md, Overage).
    with ops as (
      select x.*, least(x.cost, x.hold) as charge
        from unnest(p_seq, p_lease_id, p_hold_id, p_cost, p_hold, p_model, p_now, p_ledger_id, p_usage_id, p_usage_status, p_request_id,
                    p_input, p_cached, p_cache_write_5m, p_cache_write_1h, p_output, p_reasoning, p_latency, p_deployment) as x(
        seq, lease_id, hold_id, cost, hold, model, now, ledger_id, usage_id, usage_status, request_id, input, cached, cache_write_5m,
        cache_write_1h, output, reasoning, latency, deployment)
    ),
    leases as (
      select h.id, h.account_id, h.key_id, h.plan_user_id, h.month, h.status, h.amount_micro
        from holds h where h.id = any (array(select distinct o.lease_id from ops o)) order by h.id for update
    ),
    claimed as (
      insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens,
        cache_write_5m_input_tokens, cache_write_1h_input_tokens, output_tokens, reasoning_tokens, images, video_seconds,
        cost_micro, overage_micro, status, latency_ms, created_at, deployment)
      select o.usage_id, l.account_id, l.key_id, o.hold_id, o.request_id, o.model, o.input, o.cached,
        o.cache_write_5m, o.cache_write_1h, o.output, o.reasoning, 0, 0,
        o.charge, o.cost - o.charge, o.usage_status, o.latency, o.now, o.deployment
        from ops o join leases l on l.id = o.lease_id
      on conflict (hold_id, created_at) do nothing
      returning hold_id
    ),
    running as (
      select o.*, l.account_id, l.key_id, l.plan_user_id, l.month, l.status = 'active' as lease_active, l.amount_micro as lease_amount,
             coalesce(sum(o.charge) over (partition by o.lease_id order by o.seq rows between unbounded preceding and 1 preceding), 0) as consumed_before
        from ops o join leases l on l.id = o.lease_id join claimed c on c.hold_id = o.hold_id
    ),
    moves as (
      select r.*, case when r.lease_active then greatest(0, least(r.charge, r.lease_amount - r.consumed_before)) else 0 end as moved
        from running r
    ),
    lease_updates as (
      update holds h set amount_micro = h.amount_micro - m.total, charged_micro = coalesce(h.charged_micro, 0) + m.total
        from (select lease_id, sum(moved) as total from moves group by lease_id) m
       where h.id = m.lease_id and h.id = any (array(select id from leases))
      returning h.id
    ),
    account_updates as (
      update accounts a set balance_micro = a.balance_micro - m.charge, reserved_micro = a.reserved_micro - m.moved
        from (select account_id, sum(charge) as charge, sum(moved) as moved from moves where plan_user_id is null group by account_id) m
       where a.id = m.account_id and a.id = any (array(select account_id from leases)) and (select count(*) from lease_updates) >= 0
      returning a.id, a.balance_micro, a.auto_top_up_threshold_micro
    ),
    key_updates as (
      update key_month_spend k set reserved_micro = k.reserved_micro - m.moved, settled_micro = k.settled_micro + m.charge
        from (select key_id, month, sum(charge) as charge, sum(moved) as moved from moves group by key_id, month) m
       where k.key_id = m.key_id and k.month = m.month and k.key_id = any (array(select key_id from leases)) and (select count(*) from account_updates) >= 0
      returning k.key_id
    ),
    plan_updates as (
      update plan_month_usage u set reserved_micro = u.reserved_micro - m.moved, used_micro = u.used_micro + m.charge
        from (select plan_user_id, month, sum(charge) as charge, sum(moved) as moved from moves where plan_user_id is not null group by plan_user_id, month) m
       where u.user_id = m.plan_user_id and u.month = m.month and u.user_id = any (array(select plan_user_id from leases)) and (select count(*) from key_updates) >= 0
      returning u.user_id
    ),
    ledger as (
      insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at)
      select m.ledger_id, m.account_id, 'charge', -m.charge, m.hold_id, m.key_id, m.model, m.now
        from moves m where m.plan_user_id is null and m.charge > 0
      returning id
    )
    select o.seq, m.hold_id is not null, l.account_id, l.plan_user_id is not null,
           case when m.hold_id is not null then a.balance_micro end, case when m.hold_id is not null then a.auto_top_up_threshold_micro end
      from ops o
      left join leases l on l.id = o.lease_id
      left join moves m on m.hold_id = o.hold_id
      left join account_updates a on a.id = m.account_id and m.plan_user_id is null
     where (select count(*) from plan_updates) >= 0 and (select count(*) from ledger) >= 0;
  end if;

  -- trim / release give back what a lease still reserves (all of it, or r.by_micro); renew extends it.
  for r in
    select * from jsonb_to_recordset(p_others) as x(seq int, op text, lease_id text, by_micro bigint, now timestamptz, expires_at timestamptz)
     order by x.seq
  loop
    select * into l from holds where id = r.lease_id for update;
    if not found then
      return query select r.seq, false, null::text, null::boolean, null::bigint, null::bigint;
      continue;
    end if;
    if r.op = 'renew' then
      update holds set expires_at = greatest(expires_at, r.expires_at) where id = l.id and status = 'active';
      return query select r.seq, l.status = 'active', l.account_id, l.plan_user_id is not null, null::bigint, null::bigint;
      continue;
    end if;
    if l.status <> 'active' then
      return query select r.seq, false, l.account_id, l.plan_user_id is not null, null::bigint, null::bigint;
      continue;
    end if;
    moved := case when r.op = 'release' then l.amount_micro else least(r.by_micro, l.amount_micro) end;
    update holds set amount_micro = amount_micro - moved,
                     status = case when r.op = 'release' then 'released' else status end,
                     closed_at = case when r.op = 'release' then r.now else closed_at end
     where id = l.id;
    if l.plan_user_id is null then
      update accounts set reserved_micro = reserved_micro - moved where id = l.account_id;
    else
      update plan_month_usage set reserved_micro = reserved_micro - moved where user_id = l.plan_user_id and month = l.month;
    end if;
    update key_month_spend set reserved_micro = reserved_micro - moved where key_id = l.key_id and month = l.month;
    return query select r.seq, true, l.account_id, l.plan_user_id is not null, null::bigint, null::bigint;
  end loop;
end $$;
