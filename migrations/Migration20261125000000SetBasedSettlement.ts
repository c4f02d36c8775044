import { Migration } from '@mikro-orm/migrations';

/**
 * tollgate_apply_lease_ops, set-based: a batch's settlements are applied by one statement
 * (three multi-row inserts and one update per lease, account, key month and plan month)
 * instead of seven statements per settlement. Same results as the loop it replaces:
 *
 * - a settlement's own hold row is its claim (insert ... on conflict do nothing): a settlement
 *   already applied changes nothing and answers `applied = false`;
 * - a lease pays for its settlements in batch order as far as its amount reaches (a running
 *   sum), nothing once it is no longer active; the charge is booked in full regardless;
 * - an account's `balance_micro` in the answer is its balance after the whole batch.
 *
 * Trims, releases and renewals keep the loop, after the settlements. Within a batch no
 * settlement follows the release of its lease (a lease is released only once its last request
 * closed), and a trim only gives back slack, which settlements never use; so settling first
 * ends in the same state as the batch order.
 *
 * Lock order stays holds → accounts → key_month_spend → plan_month_usage: each update below
 * waits for the previous one through the row count it reads.
 */
export class Migration20261125000000SetBasedSettlement extends Migration {
  override async up(): Promise<void> {
    this.addSql(SET_BASED_APPLY_LEASE_OPS);
  }

  override async down(): Promise<void> {
    // Migration20261124000000BudgetLeases's loop comes back when that migration is re-applied.
    this.addSql('drop function if exists tollgate_apply_lease_ops(jsonb)');
  }
}

/** This migration's tollgate_apply_lease_ops, also restored by the next version's `down`. */
export const SET_BASED_APPLY_LEASE_OPS = `
create or replace function tollgate_apply_lease_ops(p_ops jsonb)
returns table (seq int, applied boolean, account_id text, plan_billed boolean, balance_micro bigint, threshold_micro bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  l holds%rowtype;
  moved bigint;
begin
  if jsonb_path_exists(p_ops, '$[*] ? (@.op == "settle")') then
    return query
    with ops as (
      select x.* from jsonb_to_recordset(p_ops) as x(
        seq int, op text, lease_id text, hold_id text, status text, amount bigint, charge bigint, consume bigint,
        purpose text, model text, created_at timestamptz, now timestamptz, ledger_id text, usage_id text,
        usage_status text, request_id text, input int, cached int, output int, reasoning int, latency int)
      where x.op = 'settle'
    ),
    leases as (
      select h.id, h.account_id, h.key_id, h.plan_user_id, h.month, h.status, h.amount_micro
        from holds h where h.id in (select o.lease_id from ops o) order by h.id for update
    ),
    claimed as (
      insert into holds (id, account_id, key_id, plan_user_id, month, purpose, model, amount_micro, status, charged_micro, expires_at, created_at, closed_at)
      select o.hold_id, l.account_id, l.key_id, l.plan_user_id, l.month, o.purpose, o.model, o.amount, o.status, o.charge, o.now, o.created_at, o.now
        from ops o join leases l on l.id = o.lease_id
      on conflict (id) do nothing
      returning id
    ),
    running as (
      select o.*, l.account_id, l.key_id, l.plan_user_id, l.month, l.status = 'active' as lease_active, l.amount_micro as lease_amount,
             coalesce(sum(o.consume) over (partition by o.lease_id order by o.seq rows between unbounded preceding and 1 preceding), 0) as consumed_before
        from ops o join leases l on l.id = o.lease_id join claimed c on c.id = o.hold_id
    ),
    moves as (
      select r.*, case when r.lease_active then greatest(0, least(r.consume, r.lease_amount - r.consumed_before)) else 0 end as moved
        from running r
    ),
    lease_updates as (
      update holds h set amount_micro = h.amount_micro - m.total, charged_micro = coalesce(h.charged_micro, 0) + m.total
        from (select lease_id, sum(moved) as total from moves group by lease_id) m
       where h.id = m.lease_id
      returning h.id
    ),
    account_updates as (
      update accounts a set balance_micro = a.balance_micro - m.charge, reserved_micro = a.reserved_micro - m.moved
        from (select account_id, sum(charge) as charge, sum(moved) as moved from moves where plan_user_id is null group by account_id) m
       where a.id = m.account_id and (select count(*) from lease_updates) >= 0
      returning a.id, a.balance_micro, a.auto_top_up_threshold_micro
    ),
    key_updates as (
      update key_month_spend k set reserved_micro = k.reserved_micro - m.moved, settled_micro = k.settled_micro + m.charge
        from (select key_id, month, sum(charge) as charge, sum(moved) as moved from moves group by key_id, month) m
       where k.key_id = m.key_id and k.month = m.month and (select count(*) from account_updates) >= 0
      returning k.key_id
    ),
    plan_updates as (
      update plan_month_usage u set reserved_micro = u.reserved_micro - m.moved, used_micro = u.used_micro + m.charge
        from (select plan_user_id, month, sum(charge) as charge, sum(moved) as moved from moves where plan_user_id is not null group by plan_user_id, month) m
       where u.user_id = m.plan_user_id and u.month = m.month and (select count(*) from key_updates) >= 0
      returning u.user_id
    ),
    ledger as (
      insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at)
      select m.ledger_id, m.account_id, 'charge', -m.charge, m.hold_id, m.key_id, m.model, m.now
        from moves m where m.plan_user_id is null and m.charge > 0
      returning id
    ),
    usage_rows as (
      insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens, output_tokens,
        reasoning_tokens, images, video_seconds, cost_micro, status, latency_ms, created_at)
      select m.usage_id, m.account_id, m.key_id, m.hold_id, m.request_id, m.model, m.input, m.cached, m.output,
        m.reasoning, 0, 0, m.charge, m.usage_status, m.latency, m.now
        from moves m where m.usage_status is not null
      returning id
    )
    select o.seq, m.hold_id is not null, l.account_id, l.plan_user_id is not null,
           case when m.hold_id is not null then a.balance_micro end, case when m.hold_id is not null then a.auto_top_up_threshold_micro end
      from ops o
      left join leases l on l.id = o.lease_id
      left join moves m on m.hold_id = o.hold_id
      left join account_updates a on a.id = m.account_id and m.plan_user_id is null
     where (select count(*) from plan_updates) >= 0 and (select count(*) from ledger) >= 0 and (select count(*) from usage_rows) >= 0;
  end if;

  -- trim / release give back what a lease still reserves (all of it, or r.by_micro); renew extends it.
  for r in
    select * from jsonb_to_recordset(p_ops) as x(seq int, op text, lease_id text, by_micro bigint, now timestamptz, expires_at timestamptz)
     where x.op <> 'settle' order by x.seq
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
end $$;`;
