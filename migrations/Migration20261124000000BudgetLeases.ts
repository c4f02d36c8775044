import { Migration } from '@mikro-orm/migrations';
import { functionDefinition } from './functions';

/**
 * Budget leases (src/domain/billing/leases.ts): an instance reserves a slice of an account's
 * balance, of a key's month limit and of a plan allowance in one conditional step, then
 * carves request holds out of it in memory and settles them in batches.
 *
 * A lease is a row of `holds` with purpose `lease`: reserved on the same counters as any hold,
 * so `reserved = Σ active holds` still holds, and the sweeper releases the lease of a dead
 * instance like any orphaned hold. Its `amount_micro` is what it still reserves; settling a
 * request moves the charge out of it (as far as it reaches) into the balance and the spend.
 *
 * Lock order is the global one: holds → accounts → key_month_spend → plan_month_usage.
 */
export class Migration20261124000000BudgetLeases extends Migration {
  override async up(): Promise<void> {
    this.addSql(functionDefinition('tollgate_take_lease'));

    // One batch of an instance's lease operations, applied in order in one transaction:
    //  settle  a request carved from a lease: its own hold row (closed), charge, ledger, usage;
    //  trim    gives back part of what a lease reserves;  release  gives back all and closes it;
    //  renew   pushes an active lease's expiry out.
    this.addSql(`
create or replace function tollgate_apply_lease_ops(p_ops jsonb)
returns table (seq int, applied boolean, account_id text, plan_billed boolean, balance_micro bigint, threshold_micro bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  l holds%rowtype;
  moved bigint;
  bal bigint;
  thr bigint;
begin
  for r in
    select * from jsonb_to_recordset(p_ops) as x(
      seq int, op text, lease_id text, hold_id text, status text, amount bigint, charge bigint, consume bigint, by_micro bigint,
      purpose text, model text, created_at timestamptz, now timestamptz, expires_at timestamptz,
      ledger_id text, usage_id text, usage_status text, request_id text,
      input int, cached int, output int, reasoning int, latency int)
    order by x.seq
  loop
    select * into l from holds where id = r.lease_id for update;
    if not found then
      return query select r.seq, false, null::text, null::boolean, null::bigint, null::bigint;
      continue;
    end if;
    bal := null; thr := null;
    if r.op = 'renew' then
      update holds set expires_at = greatest(expires_at, r.expires_at) where id = l.id and status = 'active';
      return query select r.seq, l.status = 'active', l.account_id, l.plan_user_id is not null, null::bigint, null::bigint;
      continue;
    end if;
    if r.op = 'settle' then
      -- The request's own hold row is its claim: a second settle of the same request changes nothing.
      insert into holds (id, account_id, key_id, plan_user_id, month, purpose, model, amount_micro, status, charged_micro, expires_at, created_at, closed_at)
      values (r.hold_id, l.account_id, l.key_id, l.plan_user_id, l.month, r.purpose, r.model, r.amount, r.status, r.charge, r.now, r.created_at, r.now)
      on conflict (id) do nothing;
      if not found then
        return query select r.seq, false, l.account_id, l.plan_user_id is not null, null::bigint, null::bigint;
        continue;
      end if;
      -- The lease pays for the charge as far as the instance says it may (its own hold plus
      -- unused slack, never other requests' holds); the charge is booked in full regardless,
      -- also once the lease was swept.
      moved := case when l.status = 'active' then least(r.consume, l.amount_micro) else 0 end;
      update holds set amount_micro = amount_micro - moved, charged_micro = coalesce(charged_micro, 0) + moved where id = l.id;
      if l.plan_user_id is null then
        update accounts a set balance_micro = a.balance_micro - r.charge, reserved_micro = a.reserved_micro - moved
         where a.id = l.account_id returning a.balance_micro, a.auto_top_up_threshold_micro into bal, thr;
        if r.charge > 0 then
          insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at)
          values (r.ledger_id, l.account_id, 'charge', -r.charge, r.hold_id, l.key_id, r.model, r.now);
        end if;
      else
        update plan_month_usage set reserved_micro = reserved_micro - moved, used_micro = used_micro + r.charge
         where user_id = l.plan_user_id and month = l.month;
      end if;
      update key_month_spend set reserved_micro = reserved_micro - moved, settled_micro = settled_micro + r.charge
       where key_id = l.key_id and month = l.month;
      if r.usage_status is not null then
        insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens, output_tokens,
          reasoning_tokens, images, video_seconds, cost_micro, status, latency_ms, created_at)
        values (r.usage_id, l.account_id, l.key_id, r.hold_id, r.request_id, r.model, r.input, r.cached, r.output,
          r.reasoning, 0, 0, r.charge, r.usage_status, r.latency, r.now);
      end if;
      return query select r.seq, true, l.account_id, l.plan_user_id is not null, bal, thr;
      continue;
    end if;
    -- trim / release: give back what the lease still reserves (all of it, or r.by_micro).
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
end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists tollgate_take_lease(text, text, text, text, text, bigint, bigint, timestamptz, timestamptz)');
    this.addSql('drop function if exists tollgate_apply_lease_ops(jsonb)');
  }
}
