create or replace function tollgate_usage_daily_add()
returns trigger
language plpgsql as $$
begin
  -- One upsert per inserting statement (a settlement batch writes its usage records in one),
  -- never one per row. Ordered by the key so two batches lock shared day rows in one order.
  insert into usage_daily as d (account_id, day, key_id, model, requests, failed_requests, cost_micro, overage_micro,
    input_tokens, cached_input_tokens, cache_write_5m_input_tokens, cache_write_1h_input_tokens, output_tokens,
    reasoning_tokens, images, video_seconds, latency_ms)
  select a.account_id, (a.created_at at time zone 'UTC')::date, coalesce(a.key_id, ''), a.model, count(*),
         count(*) filter (where a.status = 'failed'), sum(a.cost_micro), sum(a.overage_micro), sum(a.input_tokens),
         sum(a.cached_input_tokens), sum(a.cache_write_5m_input_tokens), sum(a.cache_write_1h_input_tokens),
         sum(a.output_tokens), sum(a.reasoning_tokens), sum(a.images), sum(a.video_seconds), sum(a.latency_ms)
    from added a
   group by 1, 2, 3, 4
   order by 1, 2, 3, 4
  on conflict (account_id, day, key_id, model) do update set
    requests = d.requests + excluded.requests,
    failed_requests = d.failed_requests + excluded.failed_requests,
    cost_micro = d.cost_micro + excluded.cost_micro,
    overage_micro = d.overage_micro + excluded.overage_micro,
    input_tokens = d.input_tokens + excluded.input_tokens,
    cached_input_tokens = d.cached_input_tokens + excluded.cached_input_tokens,
    cache_write_5m_input_tokens = d.cache_write_5m_input_tokens + excluded.cache_write_5m_input_tokens,
    cache_write_1h_input_tokens = d.cache_write_1h_input_tokens + excluded.cache_write_1h_input_tokens,
    output_tokens = d.output_tokens + excluded.output_tokens,
    reasoning_tokens = d.reasoning_tokens + excluded.reasoning_tokens,
    images = d.images + excluded.images,
    video_seconds = d.video_seconds + excluded.video_seconds,
    latency_ms = d.latency_ms + excluded.latency_ms;
  return null;
end $$;
