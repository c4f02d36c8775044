create or replace function tollgate_usage_partitions(p_now timestamptz, p_keep_months int)
returns table (action text, partition_name text)
language plpgsql as $$
declare
  this_month date := date_trunc('month', p_now at time zone 'UTC')::date;
  m date;
  lower_at timestamptz;
  upper_at timestamptz;
  part text;
begin
  -- Every instance runs this (on start, then daily): one at a time.
  perform pg_advisory_xact_lock(hashtext('tollgate_usage_partitions'));
  -- A partition per UTC month: this one and the next two exist before their rows arrive. A row
  -- that found none (a clock far off) waits in the default partition and moves into its month's
  -- partition here, before that partition is attached (attaching checks the default holds none).
  for m in
    select g::date from generate_series(this_month, this_month + interval '2 months', interval '1 month') g
    union
    select distinct date_trunc('month', u.created_at at time zone 'UTC')::date from usage_records_default u
    order by 1
  loop
    part := 'usage_records_' || to_char(m, 'YYYY_MM');
    continue when to_regclass(part) is not null;
    lower_at := m::timestamp at time zone 'UTC';
    upper_at := (m + interval '1 month')::timestamp at time zone 'UTC';
    execute format('create table %I (like usage_records including defaults)', part);
    execute format('with moved as (delete from usage_records_default where created_at >= %L and created_at < %L returning *) insert into %I select * from moved', lower_at, upper_at, part);
    execute format('alter table usage_records attach partition %I for values from (%L) to (%L)', part, lower_at, upper_at);
    action := 'created';
    partition_name := part;
    return next;
  end loop;
  -- Retention: a month's partition goes once the whole month is older than p_keep_months
  -- months (null keeps every month). The daily aggregates stay: spend history outlives the log.
  if p_keep_months is null then
    return;
  end if;
  for part in
    select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'usage_records'::regclass and c.relname ~ '^usage_records_\d{4}_\d{2}$'
       and to_date(substr(c.relname, 15), 'YYYY_MM') + interval '1 month' <= this_month - make_interval(months => p_keep_months)
     order by c.relname
  loop
    execute format('drop table %I', part);
    action := 'dropped';
    partition_name := part;
    return next;
  end loop;
end $$;
