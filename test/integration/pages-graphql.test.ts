import { call, createKey, graphql, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { provisionVideoAccount, videoTestEnv, waitForVideo } from '../support/videos';

/** Pagination and search of keys, key events and videos over GraphQL: nothing is cut off silently. */
let t: TestTollgate;
let videoEnv: ReturnType<typeof videoTestEnv>;
let owner: Awaited<ReturnType<typeof provisionVideoAccount>>;

beforeAll(async () => {
  videoEnv = videoTestEnv();
  t = await startTestTollgate({ env: videoEnv.env });
  owner = await provisionVideoAccount(t.url, '50000000');
});
afterAll(async () => {
  await t?.stop();
  videoEnv?.cleanup();
});

const KEYS =
  'query($first:Int,$after:String,$search:String,$status:KeyStatus){keyPage(first:$first,after:$after,search:$search,status:$status){data{id name prefix revokedAt} firstId lastId hasMore}}';

async function allPages<T>(query: string, field: string, vars: Record<string, unknown>, first: number): Promise<T[]> {
  const items: T[] = [];
  let after: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const answer: { data: Record<string, { data: T[]; lastId: string; hasMore: boolean }>; errors?: unknown } = await graphql(
      t.url,
      query,
      { ...vars, first, after },
      owner.sessionToken,
    );
    expect(answer.errors).toBeUndefined();
    const page = answer.data[field]!;
    items.push(...page.data);
    if (!page.hasMore) return items;
    after = page.lastId;
  }
  throw new Error('no last page');
}

test('keys: 28 keys page by 5 without a gap or a repeat, newest first; search by name or prefix; by status', async () => {
  for (let i = 1; i <= 27; i++) await createKey(t.url, owner.sessionToken, { name: i % 9 === 0 ? `Billing job ${i}` : `service ${i}` });
  const listed = (await graphql(t.url, '{ keys { id } }', {}, owner.sessionToken)).data.keys.map((k: { id: string }) => k.id);
  expect(listed).toHaveLength(28);
  const paged = await allPages<{ id: string }>(KEYS, 'keyPage', {}, 5);
  expect(paged.map((k) => k.id)).toEqual(listed);

  const billing = await allPages<{ name: string }>(KEYS, 'keyPage', { search: 'billing JOB' }, 2);
  expect(billing.map((k) => k.name)).toEqual(['Billing job 27', 'Billing job 18', 'Billing job 9']);
  const wild = await graphql(t.url, KEYS, { search: '%' }, owner.sessionToken);
  expect(wild.data.keyPage.data).toEqual([]); // a LIKE wildcard is a character, not "anything"
  const one = paged[3] as unknown as { id: string; prefix: string };
  const byPrefix = await graphql(t.url, KEYS, { search: one.prefix }, owner.sessionToken);
  expect(byPrefix.data.keyPage.data.map((k: { id: string }) => k.id)).toEqual([one.id]);

  await graphql(t.url, 'mutation($id:ID!){revokeKey(id:$id){id}}', { id: one.id }, owner.sessionToken);
  const revoked = await graphql(t.url, KEYS, { status: 'revoked' }, owner.sessionToken);
  expect(revoked.data.keyPage.data.map((k: { id: string }) => k.id)).toEqual([one.id]);
  expect((await allPages<{ id: string }>(KEYS, 'keyPage', { status: 'active' }, 10)).map((k) => k.id)).not.toContain(one.id);

  for (const [vars, message] of [
    [{ first: 101 }, /^Page size must be a whole number from 1 to 100/],
    [{ after: 'nonsense' }, /^The page cursor must be the id of a key/],
    [{ search: 'x'.repeat(101) }, /^search must be at most 100/],
  ] as const) {
    expect((await graphql(t.url, KEYS, vars, owner.sessionToken)).errors?.[0].message).toMatch(message);
  }
});

test('key events: more than 20 page through, newest first', async () => {
  const key = await createKey(t.url, owner.sessionToken, { name: 'busy' });
  for (let i = 0; i < 24; i++)
    await graphql(
      t.url,
      'mutation($id:ID!,$n:String){updateKey(id:$id,input:{name:$n}){id}}',
      { id: key.id, n: `busy ${i}` },
      owner.sessionToken,
    );
  const EVENTS = 'query($k:ID!,$first:Int,$after:String){keyEvents(keyId:$k,first:$first,after:$after){data{id kind data} lastId hasMore}}';
  const events = await allPages<{ kind: string; data: { new_name?: string } }>(EVENTS, 'keyEvents', { k: key.id }, 7);
  expect(events).toHaveLength(25);
  expect(events[0]).toMatchObject({ kind: 'renamed', data: { new_name: 'busy 23' } });
  expect(events.at(-1)!.kind).toBe('created');
});

test('videos: page past 50, filter by status, search the prompt; the cost of a completed job', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 53; i++) {
    const created = await call(`${t.url}/v1/videos`, {
      token: owner.apiKey,
      body: { model: 'sandbox/video', prompt: i % 10 === 0 ? `A red fox number ${i}` : `a calm lake ${i}`, seconds: 2 },
    });
    expect(created.status).toBe(202);
    ids.push(created.body.id);
  }
  for (const id of ids) await waitForVideo(t.url, owner.apiKey, id);
  const VIDEOS =
    'query($first:Int,$after:String,$status:VideoStatus,$search:String){videos(first:$first,after:$after,status:$status,search:$search){data{id prompt status costMicro} lastId hasMore}}';
  const all = await allPages<{ id: string; costMicro: string }>(VIDEOS, 'videos', {}, 20);
  expect(all.map((v) => v.id)).toEqual([...ids].reverse());
  expect(all.every((v) => BigInt(v.costMicro) > 0n)).toBe(true);
  const foxes = await allPages<{ prompt: string }>(VIDEOS, 'videos', { search: 'red FOX' }, 2);
  expect(foxes.map((v) => v.prompt)).toEqual([
    'A red fox number 50',
    'A red fox number 40',
    'A red fox number 30',
    'A red fox number 20',
    'A red fox number 10',
    'A red fox number 0',
  ]);
  expect((await graphql(t.url, VIDEOS, { status: 'failed' }, owner.sessionToken)).data.videos.data).toEqual([]);
  expect((await graphql(t.url, VIDEOS, { status: 'sideways' }, owner.sessionToken)).errors?.[0].message).toMatch(/VideoStatus/);
}, 60_000);
