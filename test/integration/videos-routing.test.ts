import { Client } from 'pg';
import { makeSandboxMp4 } from '../../src/providers/videos/mp4';
import { startFakeAzureOpenAIVideos } from '../fakes/azure-openai-videos';
import { startFakeOpenAIVideos, type FakeOpenAIVideos } from '../fakes/openai-videos';
import { createTestDatabase } from '../support/database';
import { writeCatalogFile, type CatalogFile } from '../support/routing';
import { textAccount, type TextAccount } from '../support/text';
import { startTestTollgate, type TestTollgate } from '../support/tollgate';
import { videoTestEnv, waitForVideo } from '../support/videos';

/**
 * Video models served through routing, over real HTTP with the official `openai` SDK: OpenAI
 * (east, priority 0) and an Azure OpenAI resource (west, priority 1) as each model's
 * deployments. A job fails over before a vendor accepts it, then lives on the deployment that
 * did (also across a restart of the gateway); money read from PostgreSQL to the micro-dollar.
 */

const CLIP = makeSandboxMp4({ prompt: 'from the vendor', seconds: 4, ratio: '16:9' });
const PER_SECOND = 100_000n; // $0.10, the model's price whichever deployment serves
const START_BALANCE = 100_000_000n;

let east: FakeOpenAIVideos;
let west: FakeOpenAIVideos;
let database: { url: string; drop(): Promise<void> };
let catalogFile: CatalogFile;
let files: ReturnType<typeof videoTestEnv>;
let db: Client;
let t: TestTollgate;

const videoModel = (id: string) => ({
  kind: 'video',
  id,
  vendor: 'openai_east',
  vendor_model_id: 'sora-2',
  created: 1759190400,
  modes: ['text-to-video'],
  resolutions: ['720p'],
  ratios: ['16:9', '9:16'],
  durations: [4, 8, 12],
  max_input_images: 0,
  pricing: { per_second: '0.10' },
  deployments: [
    { vendor: 'openai_east', priority: 0 },
    { vendor: 'azure_west', vendor_model_id: 'sora-west', priority: 1 },
  ],
});

beforeAll(async () => {
  east = await startFakeOpenAIVideos({ apiKey: 'east-key', content: CLIP, pollsToFinish: 3 });
  west = await startFakeAzureOpenAIVideos({ apiKey: 'west-key', deployments: ['sora-west'], content: CLIP, pollsToFinish: 3 });
  catalogFile = writeCatalogFile({
    vendors: {
      openai_east: { protocol: 'openai', base_url: east.url, api_key_env: 'OPENAI_EAST_KEY' },
      azure_west: { protocol: 'azure-openai', base_url: west.url, api_key_env: 'AZURE_WEST_KEY' },
    },
    models: [videoModel('acme/sora-routed'), videoModel('acme/sora-limited'), videoModel('acme/sora-restart')],
  });
  files = videoTestEnv({ TOLLGATE_CATALOG: catalogFile.path, OPENAI_EAST_KEY: 'east-key', AZURE_WEST_KEY: 'west-key' });
  database = await createTestDatabase();
  db = new Client({ connectionString: database.url });
  await db.connect();
  t = await startTestTollgate({ env: files.env, databaseUrl: database.url });
});

afterAll(async () => {
  await t?.tollgate.close(2_000);
  await db?.end();
  await database?.drop();
  await east?.close();
  await west?.close();
  catalogFile?.remove();
  files?.cleanup();
});

/** What east and west were asked from `since` (indexes into their request logs) on. */
const asked = (fake: FakeOpenAIVideos, since: number) => fake.requests.slice(since).map((r) => `${r.method} ${r.path}`);
const marks = () => [east.requests.length, west.requests.length] as const;

async function money(accountId: string) {
  const account = await db.query('select balance_micro::text as balance, reserved_micro::text as reserved from accounts where id = $1', [
    accountId,
  ]);
  const charges = await db.query(`select amount_micro::text as amount from ledger_entries where account_id = $1 and kind = 'charge'`, [
    accountId,
  ]);
  const usage = await db.query(
    'select status, video_seconds, cost_micro::text as cost, deployment from usage_records where account_id = $1 order by created_at',
    [accountId],
  );
  return {
    balance: BigInt(account.rows[0].balance),
    reserved: BigInt(account.rows[0].reserved),
    charges: charges.rows.map((r) => BigInt(r.amount)),
    usage: usage.rows.map((r) => [r.status, r.video_seconds, r.cost, r.deployment]),
  };
}

const boundDeployment = async (id: string): Promise<string | null> =>
  (await db.query('select deployment from videos where id = $1', [id])).rows[0]?.deployment ?? null;

async function create(acct: TextAccount, model: string, prompt: string) {
  const created = await acct.openai.videos.create({ model, prompt, seconds: '4', size: '1280x720' });
  expect(created.status).toBe('queued');
  return created.id;
}

it('moves a job to the second deployment when the first answers 503: one job, polled and downloaded there only, one charge at the model price', async () => {
  const acct = await textAccount(t);
  const [eastFrom, westFrom] = marks();
  const [eastJobs, westJobs] = [east.creations, west.creations];
  east.failNextCreations(1, 503);
  const id = await create(acct, 'acme/sora-routed', 'a harbour at dawn');
  expect((await waitForVideo(t.url, acct.secret, id)).status).toBe('completed');

  // East was asked once, as OpenAI is, and created nothing.
  expect(asked(east, eastFrom)).toEqual(['POST /v1/videos']);
  expect(east.creations).toBe(eastJobs);
  // West created one job, as Azure's v1 API takes it (its deployment's name as model, the api-key header)…
  expect(west.creations).toBe(westJobs + 1);
  const job = [...west.jobs.values()].find((j) => j.prompt === 'a harbour at dawn')!;
  expect(job).toMatchObject({ model: 'sora-west', seconds: '4', size: '1280x720' });
  // …and every poll and the download went to it.
  const westAsked = asked(west, westFrom);
  expect(westAsked[0]).toBe('POST /openai/v1/videos');
  expect(westAsked.slice(1, -1).every((r) => r === `GET /openai/v1/videos/${job.id}`)).toBe(true);
  expect(westAsked.length).toBeGreaterThanOrEqual(1 + 3 + 1);
  expect(westAsked.at(-1)).toBe(`GET /openai/v1/videos/${job.id}/content`);
  expect(await boundDeployment(id)).toBe('azure_west');

  const content = await acct.openai.videos.downloadContent(id);
  expect(Buffer.from(await content.arrayBuffer()).equals(CLIP)).toBe(true);
  const ledger = await money(acct.accountId);
  expect(ledger.charges).toEqual([-4n * PER_SECOND]);
  expect(ledger.usage).toEqual([['ok', 4, String(4n * PER_SECOND), 'azure_west']]);
  expect(ledger.balance).toBe(START_BALANCE - 4n * PER_SECOND);
  expect(ledger.reserved).toBe(0n);
});

it('does not retry a 400 the request causes: the job fails, the other deployment is not asked, nothing is charged', async () => {
  const acct = await textAccount(t);
  const [eastFrom, westFrom] = marks();
  east.failNextCreations(1, 400);
  const id = await create(acct, 'acme/sora-routed', 'refused by the vendor');
  const failed = await waitForVideo(t.url, acct.secret, id);
  expect(failed.status).toBe('failed');
  expect(failed.error.code).toBe('provider_error');
  expect(asked(east, eastFrom)).toEqual(['POST /v1/videos']);
  expect(asked(west, westFrom)).toEqual([]);
  expect(await boundDeployment(id)).toBeNull();
  const ledger = await money(acct.accountId);
  expect(ledger.charges).toEqual([]);
  expect(ledger.usage).toEqual([['failed', 0, '0', null]]);
  expect(ledger.balance).toBe(START_BALANCE);
  expect(ledger.reserved).toBe(0n);
});

it("honours a 429's Retry-After through the breaker: the job moves to the second deployment, and the next job does not ask the first", async () => {
  const acct = await textAccount(t);
  const [eastFrom, westFrom] = marks();
  east.failNextCreations(1, 429, { 'retry-after': '30' });
  const first = await create(acct, 'acme/sora-limited', 'rate limited at first');
  expect((await waitForVideo(t.url, acct.secret, first)).status).toBe('completed');
  // Cooled for 30 s: the next job of the model goes to west without asking east.
  const second = await create(acct, 'acme/sora-limited', 'while east cools');
  expect((await waitForVideo(t.url, acct.secret, second)).status).toBe('completed');
  expect(asked(east, eastFrom)).toEqual(['POST /v1/videos']);
  expect(asked(west, westFrom).filter((r) => r.startsWith('POST'))).toHaveLength(2);
  expect([await boundDeployment(first), await boundDeployment(second)]).toEqual(['azure_west', 'azure_west']);
  // The breaker is the model's, not the vendor's: another model still starts on east.
  const other = await create(acct, 'acme/sora-routed', 'east is fine for this one');
  expect((await waitForVideo(t.url, acct.secret, other)).status).toBe('completed');
  expect(await boundDeployment(other)).toBe('openai_east');

  const ledger = await money(acct.accountId);
  expect(ledger.charges).toEqual([-4n * PER_SECOND, -4n * PER_SECOND, -4n * PER_SECOND]);
  expect(ledger.usage.map((u) => u[3])).toEqual(['azure_west', 'azure_west', 'openai_east']);
  expect(ledger.reserved).toBe(0n);
});

it('makes one vendor job of racing creates with one Idempotency-Key, through a failover, and charges it once', async () => {
  const acct = await textAccount(t);
  const [eastJobs, westJobs] = [east.creations, west.creations];
  east.failNextCreations(1, 503);
  const key = `routed-${Date.now()}`;
  const answers = await Promise.all(
    Array.from({ length: 5 }, () =>
      acct.openai.videos
        .create({ model: 'acme/sora-routed', prompt: 'made once', seconds: '4', size: '1280x720' }, { headers: { 'Idempotency-Key': key } })
        .withResponse(),
    ),
  );
  const ids = new Set(answers.map((a) => a.data.id));
  expect(ids.size).toBe(1);
  expect(answers.filter((a) => a.response.headers.get('x-service-idempotent-replay') === 'true')).toHaveLength(4);
  const [id] = [...ids];
  expect((await waitForVideo(t.url, acct.secret, id!)).status).toBe('completed');
  expect(east.creations).toBe(eastJobs);
  expect(west.creations).toBe(westJobs + 1);
  const ledger = await money(acct.accountId);
  expect(ledger.charges).toEqual([-4n * PER_SECOND]);
  expect(ledger.reserved).toBe(0n);
});

it('keeps a job on its deployment across a restart of the gateway: the new instance polls and downloads there, and charges once', async () => {
  const acct = await textAccount(t);
  const [eastFrom] = marks();
  const [eastJobs, westJobs] = [east.creations, west.creations];
  east.failNextCreations(1, 503);
  // West answers its polls 503 (a transient fault, retried) until the new instance runs: the job cannot finish before the restart.
  west.failNextPolls(1_000_000, 503);
  const id = await create(acct, 'acme/sora-restart', 'survives a restart');
  const bound = Date.now() + 10_000;
  while ((await boundDeployment(id)) === null && Date.now() < bound) await new Promise((r) => setTimeout(r, 20));
  expect(await boundDeployment(id)).toBe('azure_west');
  await t.tollgate.close(2_000);
  expect((await db.query('select status from videos where id = $1', [id])).rows[0].status).toBe('in_progress');

  // A fresh instance: east is healthy in its eyes (new breakers), so only the binding can send the job to west.
  const westFrom = west.requests.length;
  west.failNextPolls(0, 503);
  t = await startTestTollgate({ env: files.env, databaseUrl: database.url });
  expect((await waitForVideo(t.url, acct.secret, id)).status).toBe('completed');
  expect(asked(east, eastFrom)).toEqual(['POST /v1/videos']);
  expect(east.creations).toBe(eastJobs);
  expect(west.creations).toBe(westJobs + 1);
  const job = [...west.jobs.values()].find((j) => j.prompt === 'survives a restart')!;
  const after = asked(west, westFrom);
  expect(after).toContain(`GET /openai/v1/videos/${job.id}`);
  expect(after.at(-1)).toBe(`GET /openai/v1/videos/${job.id}/content`);
  expect(after.some((r) => r.startsWith('POST'))).toBe(false);

  const ledger = await money(acct.accountId);
  expect(ledger.charges).toEqual([-4n * PER_SECOND]);
  expect(ledger.usage).toEqual([['ok', 4, String(4n * PER_SECOND), 'azure_west']]);
  expect(ledger.reserved).toBe(0n);
});

it('refuses at start a video model whose deployment is a vendor kind without a video API, naming the field', async () => {
  const bad = writeCatalogFile({
    vendors: { openai_east: { protocol: 'openai' }, claude: { protocol: 'anthropic' } },
    models: [{ ...videoModel('acme/sora-bad'), deployments: [{ vendor: 'openai_east' }, { vendor: 'claude' }] }],
  });
  try {
    await expect(startTestTollgate({ env: { ...files.env, TOLLGATE_CATALOG: bad.path, CLAUDE_API_KEY: 'k' } })).rejects.toThrow(
      `TOLLGATE_CATALOG ${bad.path}: models[0].deployments[1].vendor must be an "openai", "azure-openai" or "gemini" vendor (video APIs)`,
    );
  } finally {
    bad.remove();
  }
});
