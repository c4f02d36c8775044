import type { Client } from 'pg';

/** `count` requests over the 90 days before `now` on `keyIds` and two models, each charged in the ledger (failed ones: nothing). */
export async function seedRequests(client: Client, accountId: string, keyIds: string[], count: number, now: Date): Promise<void> {
  await client.query('begin');
  await client.query(
    `insert into usage_records (id, account_id, key_id, hold_id, request_id, model, input_tokens, cached_input_tokens, output_tokens,
       reasoning_tokens, cost_micro, status, latency_ms, created_at)
     select 'use_' || lpad(i::text, 26, '0'), $1, ($2::text[])[1 + i % array_length($2::text[], 1)], 'hold_seed_' || i, 'req_seed_' || i,
            case when i % 3 = 0 then 'sandbox/echo' else 'sandbox/think' end, 100 + i % 900, i % 50, 20 + i % 300, i % 7,
            case when i % 97 = 0 then 0 else 37 + (i * 7919) % 5000 end, case when i % 97 = 0 then 'failed' else 'ok' end, 50 + i % 400,
            $3::timestamptz - (i * interval '1 second' * (90 * 86400 / $4::int))
       from generate_series(1, $4::int) i`,
    [accountId, keyIds, now.toISOString(), count],
  );
  await client.query(
    `insert into ledger_entries (id, account_id, kind, amount_micro, hold_id, key_id, note, created_at)
     select 'led_' || lpad(u.id, 26, '0'), u.account_id, 'charge', -u.cost_micro, u.hold_id, u.key_id, u.model, u.created_at
       from (select substr(id, 5) as id, account_id, cost_micro, hold_id, key_id, model, created_at from usage_records where account_id = $1 and hold_id like 'hold_seed_%') u
      where u.cost_micro > 0`,
    [accountId],
  );
  await client.query(
    `update accounts set balance_micro = balance_micro - (select coalesce(sum(cost_micro), 0) from usage_records where account_id = $1 and hold_id like 'hold_seed_%') where id = $1`,
    [accountId],
  );
  await client.query('commit');
}
