import { Client as PgClient } from 'pg';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import {
  ADMIN_TOKEN,
  call,
  createKey,
  graphql,
  provisionAccount,
  startTestTollgate,
  waitForSubscriptions,
  type TestTollgate,
} from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

let t: TestTollgate;
let cleanup: () => void;
let db: PgClient;

beforeAll(async () => {
  const env = videoTestEnv();
  cleanup = env.cleanup;
  t = await startTestTollgate({ env: env.env });
  db = new PgClient({ connectionString: t.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db.end();
  await t.stop();
  cleanup();
});

const create = (apiKey: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(`${t.url}/v1/videos`, { token: apiKey, body, headers });
const count = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rows[0].n as number;

describe('idempotency', () => {
  test('20 racing creates with one key make one job and one hold; 19 are replays of it (200, x-service-idempotent-replay)', async () => {
    const { apiKey, accountId } = await provisionVideoAccount(t.url);
    const body = { model: 'sandbox/video', prompt: 'one of twenty', seconds: 2 };
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(apiKey, body, { 'Idempotency-Key': 'race-1' })));
    const created = answers.filter((a) => a.status === 202);
    const replays = answers.filter((a) => a.status === 200);
    expect(created).toHaveLength(1);
    expect(replays).toHaveLength(19);
    expect(new Set(answers.map((a) => a.body.id))).toEqual(new Set([created[0]!.body.id]));
    expect(replays.every((a) => a.headers.get('x-service-idempotent-replay') === 'true')).toBe(true);
    expect(created[0]!.headers.get('x-service-idempotent-replay')).toBeNull();
    expect(await count('select count(*)::int as n from videos where account_id = $1', [accountId])).toBe(1);
    expect(await count(`select count(*)::int as n from holds where account_id = $1 and purpose = 'video'`, [accountId])).toBe(1);

    await waitForVideo(t.url, apiKey, created[0]!.body.id);
    const later = await create(apiKey, body, { 'Idempotency-Key': 'race-1' });
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ id: created[0]!.body.id, status: 'completed' });
    const ledger = await db.query(
      `select count(*)::int as n, sum(amount_micro)::text as total from ledger_entries where account_id = $1 and kind = 'charge'`,
      [accountId],
    );
    expect(ledger.rows[0]).toEqual({ n: 1, total: '-2000' });
    // The completed job shows what it was charged (a queued one shows no cost yet).
    expect(created[0]!.body.usage).toBeUndefined();
    expect(later.body.usage).toEqual({ cost: 0.002, cost_micro: '2000', cost_details: { video_seconds: 0.002 } });
    const listed = await call(`${t.url}/v1/videos`, { token: apiKey });
    expect(listed.body.data[0].usage.cost_micro).toBe('2000');
  });

  test('the same key with another body is 409 idempotency_conflict; keys are per account', async () => {
    const { apiKey } = await provisionVideoAccount(t.url);
    const first = await create(apiKey, { model: 'sandbox/video', prompt: 'first body' }, { 'Idempotency-Key': 'k-1' });
    expect(first.status).toBe(202);
    const other = await create(apiKey, { model: 'sandbox/video', prompt: 'another body' }, { 'Idempotency-Key': 'k-1' });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'idempotency_conflict', details: { field: 'Idempotency-Key' } });
    const stranger = await provisionVideoAccount(t.url);
    const theirs = await create(stranger.apiKey, { model: 'sandbox/video', prompt: 'another body' }, { 'Idempotency-Key': 'k-1' });
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  test('an account whose concurrency is full of its jobs still gets its replay (or its 409), answered before admission', async () => {
    // Five slow jobs, each holding a concurrency slot; then the operator pins tier 1: five concurrent in all.
    const { apiKey, accountId } = await provisionVideoAccount(t.url, '5000000', 2);
    const bodies = Array.from({ length: 5 }, (_, i) => ({ model: 'sandbox/video', prompt: `full house ${i} [sandbox:slow]`, seconds: 2 }));
    const jobs = [];
    for (const [i, body] of bodies.entries()) {
      const made = await create(apiKey, body, { 'Idempotency-Key': `full-${i}` });
      expect(made.status).toBe(202);
      jobs.push(made.body.id as string);
    }
    expect(
      (await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:1}){tier}}', { a: accountId }, ADMIN_TOKEN)).data
        .setAccountTier.tier,
    ).toBe(1);
    const refused = await create(apiKey, { model: 'sandbox/video', prompt: 'a sixth', seconds: 2 }, { 'Idempotency-Key': 'full-new' });
    expect(refused).toMatchObject({ status: 429, body: { error: { code: 'api_concurrency_limit' } } });

    const replay = await create(apiKey, bodies[0]!, { 'Idempotency-Key': 'full-0' });
    expect(replay.status).toBe(200);
    expect(replay.body.id).toBe(jobs[0]);
    expect(replay.headers.get('x-service-idempotent-replay')).toBe('true');
    expect(replay.headers.get('x-ratelimit-limit-requests')).toBe('100');
    const conflict = await create(apiKey, { ...bodies[0]!, prompt: 'another body' }, { 'Idempotency-Key': 'full-0' });
    expect(conflict).toMatchObject({ status: 409, body: { error: { code: 'idempotency_conflict' } } });
  });

  test('a create refused for money leaves its key free for a retry after a top-up', async () => {
    const poor = await provisionVideoAccount(t.url, '1000'); // $0.001: less than 2 s of sandbox video
    const refused = await create(
      poor.apiKey,
      { model: 'sandbox/video', prompt: 'too dear', seconds: 8 },
      { 'Idempotency-Key': 'retry-me' },
    );
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('api_insufficient_balance');
    expect(await count('select count(*)::int as n from videos where account_id = $1', [poor.accountId])).toBe(0);
    expect(await count('select count(*)::int as n from video_idempotency_keys where account_id = $1', [poor.accountId])).toBe(0);
    expect(await t.tollgate.services.admission.slotsInUse(poor.accountId)).toBe(0);
    expect(await t.tollgate.services.billing.listActiveHolds(poor.accountId)).toEqual([]);
  });
});

describe('refusals before anything is reserved', () => {
  test.each([
    ['model', { prompt: 'no model' }],
    ['prompt', { model: 'sandbox/video' }],
    ['prompt', { model: 'sandbox/video', prompt: 'x'.repeat(4001) }],
    ['seconds', { model: 'sandbox/video', prompt: 'p', seconds: 3 }],
    ['seconds', { model: 'sandbox/video', prompt: 'p', seconds: 2.5 }],
    ['seconds', { model: 'sandbox/video', prompt: 'p', seconds: 'two' }],
    ['resolution', { model: 'sandbox/video', prompt: 'p', resolution: '1080p' }],
    ['resolution', { model: 'sandbox/video', prompt: 'p', resolution: 'hd' }],
    ['ratio', { model: 'sandbox/video', prompt: 'p', ratio: '4:3' }],
    ['size', { model: 'sandbox/video', prompt: 'p', size: '1920x1080' }],
    ['style', { model: 'sandbox/video', prompt: 'p', style: 'noir' }],
    ['prompt', { model: 'sandbox/video', prompt: 'nul\u0000inside' }],
  ])('a bad %s is 400 naming it', async (field, body) => {
    const { apiKey, accountId } = await provisionVideoAccount(t.url);
    const answer = await create(apiKey, body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('bad_request');
    expect(answer.body.error.details.field).toBe(field);
    expect(await count('select count(*)::int as n from holds where account_id = $1', [accountId])).toBe(0);
    expect(await count('select count(*)::int as n from videos where account_id = $1', [accountId])).toBe(0);
  });

  test('a bad Idempotency-Key, malformed JSON and an unknown model are refused; OpenAI sizes are read as resolution and ratio', async () => {
    const { apiKey } = await provisionVideoAccount(t.url);
    const badKey = await create(apiKey, { model: 'sandbox/video', prompt: 'p' }, { 'Idempotency-Key': 'has space' });
    expect(badKey.status).toBe(400);
    expect(badKey.body.error.message).toContain('Idempotency-Key');
    const malformed = await call(`${t.url}/v1/videos`, {
      token: apiKey,
      rawBody: '{"model":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    const unknown = await create(apiKey, { model: 'sandbox/nope', prompt: 'p' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('model_not_available');
    const sized = await create(apiKey, { model: 'sandbox/video', prompt: 'p', size: '1280x720' });
    expect(sized.status).toBe(202);
    expect(sized.body).toMatchObject({ resolution: '720p', ratio: '16:9' });
  });

  test('malformed video ids name no video (404) and a malformed list cursor is 400 naming after', async () => {
    const { apiKey } = await provisionVideoAccount(t.url);
    for (const id of ['vid_%00', 'x'.repeat(300), 'vid_0123456789abcdefghjkmnpqrs%27']) {
      expect((await call(`${t.url}/v1/videos/${id}`, { token: apiKey })).body.error.code).toBe('not_found');
      expect((await call(`${t.url}/v1/videos/${id}/content`, { token: apiKey })).body.error.code).toBe('not_found');
    }
    const cursor = await call(`${t.url}/v1/videos?after=%00`, { token: apiKey });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.details).toEqual({ field: 'after' });
  });

  test('a plan-billed key is 403 api_wallet_key_required on every video path', async () => {
    const account = await provisionAccount(t.url, { fundsMicro: '1000000', plan: 'starter' });
    const plan = await createKey(t.url, account.sessionToken, { name: 'plan', kind: 'plan' });
    for (const [path, body] of [
      ['/v1/videos', { model: 'sandbox/video', prompt: 'p' }],
      ['/v1/videos', undefined],
      ['/v1/videos/vid_x', undefined],
      ['/v1/videos/vid_x/content', undefined],
    ] as const) {
      const answer = await call(`${t.url}${path}`, { token: plan.secret, body });
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('api_wallet_key_required');
    }
  });
});

describe('jobs', () => {
  test('a failed job charges nothing, releases its hold and its slot, and says why', async () => {
    const { apiKey, accountId } = await provisionVideoAccount(t.url);
    const before = await t.tollgate.services.billing.auditAccount(accountId);
    const created = await create(apiKey, { model: 'sandbox/video', prompt: 'doomed [sandbox:fail]', seconds: 8 });
    expect(created.status).toBe(202);
    const failed = await waitForVideo(t.url, apiKey, created.body.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'generation_failed' }, expires_at: null });
    expect(failed.usage).toBeUndefined();
    const after = await t.tollgate.services.billing.auditAccount(accountId);
    expect(after.balanceMicro).toBe(before.balanceMicro);
    expect(after.reservedMicro).toBe(0n);
    const holds = await db.query(`select status, charged_micro from holds where account_id = $1 and purpose = 'video'`, [accountId]);
    expect(holds.rows).toEqual([{ status: 'released', charged_micro: '0' }]);
    expect(await t.tollgate.services.admission.slotsInUse(accountId)).toBe(0);
    const content = await call(`${t.url}/v1/videos/${created.body.id}/content`, { token: apiKey });
    expect(content.status).toBe(409);
    expect(content.body.error.details).toEqual({ status: 'failed' });
  });

  test('when a job is failed elsewhere while it finishes (its hold released), it ends failed and uncharged, its file dropped', async () => {
    const { apiKey, accountId } = await provisionVideoAccount(t.url);
    const before = await t.tollgate.services.billing.auditAccount(accountId);
    const created = await create(apiKey, { model: 'sandbox/video', prompt: 'raced [sandbox:delay=500]' });
    await waitForVideo(t.url, apiKey, created.body.id, (v) => v.status === 'in_progress');
    const {
      rows: [{ hold_id }],
    } = await db.query('select hold_id from videos where id = $1', [created.body.id]);
    await t.tollgate.services.billing.releaseHold(hold_id); // as a timing-out sweeper on another instance would
    const ended = await waitForVideo(t.url, apiKey, created.body.id);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'reservation_ended' } });
    expect((await t.tollgate.services.billing.auditAccount(accountId)).balanceMicro).toBe(before.balanceMicro);
    expect(await t.tollgate.services.admission.slotsInUse(accountId)).toBe(0);
  });

  test('a running job holds a concurrency slot of its account until it ends', async () => {
    const { apiKey, accountId } = await provisionVideoAccount(t.url, '5000000', 1); // tier 1: 5 concurrent
    const created = await create(apiKey, { model: 'sandbox/video', prompt: 'slot [sandbox:delay=800]' });
    expect(await t.tollgate.services.admission.slotsInUse(accountId)).toBe(1);
    const deadline = Date.now() + 10_000;
    while ((await t.tollgate.services.videos.get(accountId, created.body.id)).status !== 'completed' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(await t.tollgate.services.admission.slotsInUse(accountId)).toBe(0);
  });

  test('a graphql-ws subscriber sees its video go from queued through in_progress to completed, with progress', async () => {
    const { apiKey, sessionToken } = await provisionVideoAccount(t.url);
    const client = createClient({
      url: t.url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${sessionToken}` },
      retryAttempts: 0,
    });
    const seen: { id: string; status: string; progress: number }[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe<{ videoUpdated: { id: string; status: string; progress: number } }>(
        { query: 'subscription { videoUpdated { id status progress } }' },
        {
          next: (message) => {
            seen.push(message.data!.videoUpdated);
            if (message.data!.videoUpdated.status === 'completed') resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    await waitForSubscriptions(t.url, 1); // the subscription is registered
    const other = await provisionVideoAccount(t.url);
    await create(other.apiKey, { model: 'sandbox/video', prompt: 'not mine' });
    const created = await create(apiKey, { model: 'sandbox/video', prompt: 'watched [sandbox:delay=300]' });
    await done;
    await client.dispose();
    expect(seen.every((v) => v.id === created.body.id)).toBe(true);
    const statuses = seen.map((v) => v.status);
    expect(statuses[0]).toBe('queued');
    expect(statuses).toContain('in_progress');
    expect(statuses.at(-1)).toBe('completed');
    expect(seen.at(-1)!.progress).toBe(100);
    const progress = seen.map((v) => v.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));

    const foreign = createClient({
      url: t.url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${other.sessionToken}` },
      retryAttempts: 0,
    });
    const refused = await new Promise<unknown>((resolve) => {
      foreign.subscribe(
        { query: 'subscription($id: ID) { videoUpdated(id: $id) { status } }', variables: { id: created.body.id } },
        { next: (message) => resolve(message.errors), error: resolve, complete: () => resolve(null) },
      );
    });
    await foreign.dispose();
    expect(JSON.stringify(refused)).toContain('not_found');

    const listed = await call(`${t.url}/graphql`, {
      token: sessionToken,
      body: { query: '{ videos(first: 5) { data { id status } hasMore } }' },
    });
    expect(listed.body.data.videos.data).toEqual([{ id: created.body.id, status: 'completed' }]);
    const one = await call(`${t.url}/graphql`, {
      token: sessionToken,
      body: { query: `{ video(id: "${created.body.id}") { status seconds ratio expiresAt } missing: video(id: "vid_none") { id } }` },
    });
    expect(one.body.data.video).toMatchObject({ status: 'completed', seconds: 2, ratio: '16:9' });
    expect(one.body.data.missing).toBeNull();
  });
});

describe('content byte ranges', () => {
  let apiKey: string;
  let id: string;
  let full: Buffer;
  beforeAll(async () => {
    apiKey = (await provisionVideoAccount(t.url)).apiKey;
    id = (await create(apiKey, { model: 'sandbox/video', prompt: 'ranges', seconds: 4 })).body.id;
    await waitForVideo(t.url, apiKey, id);
    const response = await fetch(`${t.url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    full = Buffer.from(await response.arrayBuffer());
    expect(Number(response.headers.get('content-length'))).toBe(full.length);
  });

  const ranged = (range: string) => fetch(`${t.url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${apiKey}`, range } });

  test('the first bytes, a middle range and a suffix are 206 with Content-Range', async () => {
    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99],
      ['bytes=1000-1999', 1000, 1999],
      ['bytes=-50', full.length - 50, full.length - 1],
    ] as const) {
      const response = await ranged(range);
      expect(response.status).toBe(206);
      expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${full.length}`);
      expect(response.headers.get('accept-ranges')).toBe('bytes');
      expect(Buffer.from(await response.arrayBuffer()).equals(full.subarray(start, end + 1))).toBe(true);
    }
  });

  test('an unsatisfiable range is 416 with the size; a malformed one gets the whole file', async () => {
    const response = await ranged(`bytes=${full.length + 10}-`);
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe(`bytes */${full.length}`);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('range_not_satisfiable');
    const malformed = await ranged('pages=1-2');
    expect(malformed.status).toBe(200);
    expect(Buffer.from(await malformed.arrayBuffer()).length).toBe(full.length);
  });
});
