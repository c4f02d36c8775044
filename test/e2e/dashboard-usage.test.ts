import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { seedDemoOnFirstStart, type DemoCredentials } from '../../src/infra/demo-seed';
import { formatMicro } from '../../dashboard/src/money';
import {
  accessibilityViolations,
  browserSuite,
  buildDashboard,
  hasCount,
  hasText,
  launchChromium,
  SHOTS,
  sidewaysOverflow,
  watchProblems,
} from '../support/dashboard-browser';
import { ADMIN_TOKEN, call, graphql, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { videoTestEnv, waitForVideo } from '../support/videos';

/**
 * The dashboard's usage pages in a real Chromium, over an account that made 23 sandbox videos
 * and then 60 real text requests through the OpenAI SDK with two keys: the request log paged by
 * cursor, filtered and opened row by row, the videos paged, at desktop and phone widths,
 * passing the accessibility rules.
 */
const VIDEOS = 23;
const TEXT_REQUESTS = 60;
const suite = browserSuite();

suite('the usage pages of the dashboard in a real browser', () => {
  let t: TestTollgate;
  let videos: ReturnType<typeof videoTestEnv>;
  let dataDir: string;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  const keys: Record<'busy' | 'quiet', { id: string; secret: string }> = { busy: { id: '', secret: '' }, quiet: { id: '', secret: '' } };

  jest.setTimeout(60_000);

  beforeAll(async () => {
    buildDashboard();
    videos = videoTestEnv();
    t = await startTestTollgate({ env: videos.env });
    dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-usage-'));
    demo = (await seedDemoOnFirstStart(t.tollgate.services, dataDir))!;
    // The top tier (1,000 requests a second), so 60 quick requests in a row are not rate limited.
    const tier = await graphql(
      t.url,
      'mutation($input: SetAccountTierInput!) { setAccountTier(input: $input) { tier } }',
      { input: { accountId: demo.account_id, tier: 5 } },
      ADMIN_TOKEN,
    );
    expect(tier.data.setAccountTier.tier).toBe(5);
    // The videos first (each one is a request of the log too, once it completes), then the text requests.
    const jobs: string[] = [];
    for (let i = 0; i < VIDEOS; i++) {
      const created = await call(`${t.url}/v1/videos`, {
        token: demo.api_key,
        body: { model: 'sandbox/video', prompt: `video number ${i + 1}`, seconds: 2 },
      });
      expect(created.status).toBe(202);
      jobs.push(created.body.id);
    }
    for (const id of jobs) expect((await waitForVideo(t.url, demo.api_key, id)).status).toBe('completed');
    for (const [name, count] of [
      ['busy', 55],
      ['quiet', 5],
    ] as const) {
      const made = await call(`${t.url}/v1/keys`, { token: demo.session_token, body: { name: `${name} key` } });
      expect(made.status).toBe(201);
      keys[name] = { id: made.body.id, secret: made.body.secret };
      const openai = new OpenAI({ apiKey: made.body.secret, baseURL: `${t.url}/v1`, maxRetries: 0 });
      for (let i = 0; i < count; i++)
        await openai.chat.completions.create({
          model: 'sandbox/echo',
          messages: [{ role: 'user', content: `request ${i} of the ${name} key` }],
        });
    }
    // Settlements are written in batches shortly after each answer: wait until all are in the log.
    const deadline = Date.now() + 20_000;
    while ((await usageRecords()).length < VIDEOS + TEXT_REQUESTS && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await usageRecords()).toHaveLength(VIDEOS + TEXT_REQUESTS);

    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    problems = watchProblems(page);
    // Signed in as the demo user (the sign-in form itself is the other browser test's subject).
    await page.goto(`${t.url}/dashboard`);
    await page.evaluate(`sessionStorage.setItem('tollgate.session', ${JSON.stringify(demo.session_token)})`);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    videos?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Every usage record of the account over GraphQL, newest first (what the pages must agree with). */
  async function usageRecords(): Promise<{ id: string; keyId: string; costMicro: string; requestId: string; model: string }[]> {
    const all = [];
    let after: string | null = null;
    for (;;) {
      const answer: any = await graphql(
        t.url,
        'query($after: String) { usageRecords(first: 100, after: $after) { data { id keyId costMicro requestId model } lastId hasMore } }',
        { after },
        demo.session_token,
      );
      all.push(...answer.data.usageRecords.data);
      if (!answer.data.usageRecords.hasMore) return all;
      after = answer.data.usageRecords.lastId;
    }
  }

  const nav = (name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
  const logRows = () => page.getByRole('table', { name: 'Request log' }).locator('tbody > tr');

  test('the request log shows every request, 50 to a page, newest first, walked by cursor', async () => {
    const records = await usageRecords();
    await nav('Request log');
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    await hasCount(logRows(), 50);
    await hasText(page.getByTestId('log-page'), 'Page 1');
    await hasText(logRows().first().locator('td').nth(1), 'quiet key');
    await page.getByRole('button', { name: 'Details of request ' + records[0]!.requestId }).waitFor();
    await page.getByRole('button', { name: 'Older requests' }).click();
    await hasText(page.getByTestId('log-page'), 'Page 2');
    await hasCount(logRows(), records.length - 50);
    await page.getByRole('button', { name: 'Details of request ' + records[records.length - 1]!.requestId }).waitFor();
    // The oldest request is the first video: it is shown in its own unit.
    await hasText(logRows().last().locator('td').nth(4), '2 s of video');
    expect(await page.getByRole('button', { name: 'Older requests' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newer requests' }).click();
    await hasText(page.getByTestId('log-page'), 'Page 1');
    await hasCount(logRows(), 50);
  });

  test('a filter by key narrows the log, and a row opens its details with the focus', async () => {
    await page.getByLabel('Key', { exact: true }).selectOption({ label: 'quiet key' });
    await hasCount(logRows(), 5);
    await hasCount(page.getByTestId('log-page'), 0);
    const quiet = (await usageRecords()).filter((r) => r.keyId === keys.quiet.id);
    expect(quiet).toHaveLength(5);
    const chosen = quiet[2]!;
    await page.getByRole('button', { name: `Details of request ${chosen.requestId}` }).click();
    const detail = page.getByTestId('request-detail');
    await detail.waitFor();
    expect(await page.evaluate<string | null>('document.activeElement?.textContent ?? null')).toBe(`Request ${chosen.requestId}`);
    const figure = (term: string) => detail.locator('div', { has: page.locator('dt', { hasText: new RegExp(`^${term}$`) }) }).locator('dd');
    await hasText(figure('Key'), 'quiet key');
    await hasText(figure('Model'), chosen.model);
    await hasText(figure('Cost'), formatMicro(chosen.costMicro));
    await hasText(figure('Request id'), chosen.requestId);
    await page.getByRole('button', { name: 'Close details' }).click();
    await hasCount(detail, 0);
  });

  test('a request is found by its request id, whatever page it is on', async () => {
    const oldest = (await usageRecords()).at(-1)!;
    await page.getByLabel('Request id').fill(oldest.requestId);
    await page.getByRole('button', { name: 'Find this request' }).click();
    await page.getByTestId('request-detail').waitFor();
    await hasText(
      page
        .getByTestId('request-detail')
        .locator('div', { has: page.locator('dt', { hasText: /^Request id$/ }) })
        .locator('dd'),
      oldest.requestId,
    );
    await page.getByLabel('Request id').fill('req_nobody_has_this');
    await page.getByRole('button', { name: 'Find this request' }).click();
    await hasText(
      page.getByRole('form', { name: 'Find a request' }).getByRole('alert'),
      'No request of this account has the id req_nobody_has_this.',
    );
    await page.getByRole('button', { name: 'Close details' }).click();
  });

  test('a custom period with no requests says so; a wrong one is refused in the words of the form', async () => {
    await page.getByRole('radio', { name: 'Custom' }).check();
    await page.getByLabel('First day').fill('2020-01-02');
    await page.getByLabel('Last day').fill('2020-01-01');
    await page.getByRole('button', { name: 'Show these days' }).click();
    await hasText(page.getByRole('form', { name: 'Custom period' }).getByRole('alert'), 'Last day must not be before the first day.');
    await page.getByLabel('Last day').fill('2020-01-31');
    await page.getByRole('button', { name: 'Show these days' }).click();
    await page.getByText('No requests in this period.').waitFor();
    await page.getByRole('radio', { name: 'Last 7 days' }).check();
    await hasCount(logRows(), 5);
  });

  test('spend is computed by the server: its total equals the ledger, per key, per model and per zero-filled UTC day', async () => {
    const records = await usageRecords();
    const sum = (list: { costMicro: string }[]) => list.reduce((total, r) => total + BigInt(r.costMicro), 0n);
    const total = sum(records);
    // The ledger's charges are the same money, read separately.
    let charged = 0n;
    for (let after: string | null = null, more = true; more;) {
      const answer: any = await graphql(
        t.url,
        'query($after: String) { ledger(first: 100, after: $after, kind: "charge") { data { amountMicro } lastId hasMore } }',
        { after },
        demo.session_token,
      );
      charged -= answer.data.ledger.data.reduce((s: bigint, e: { amountMicro: string }) => s + BigInt(e.amountMicro), 0n);
      more = answer.data.ledger.hasMore;
      after = answer.data.ledger.lastId;
    }
    expect(charged).toBe(total);

    await nav('Spend');
    await hasText(page.getByTestId('spend-total'), `${formatMicro(total.toString())} over ${records.length} requests.`);
    await page.getByText(/Days are UTC days \(UTC\)/).waitFor();
    const days = page.getByRole('table', { name: 'Cost per day' }).locator('tbody > tr');
    await hasCount(days, 30);
    await page.getByRole('radio', { name: 'Key', exact: true }).check();
    const perKey = page.getByRole('table', { name: 'Cost per key' });
    for (const [name, id] of [
      ['busy key', keys.busy.id],
      ['quiet key', keys.quiet.id],
    ] as const) {
      await hasText(
        perKey
          .getByRole('row', { name: new RegExp(`^${name} `) })
          .locator('td')
          .first(),
        formatMicro(sum(records.filter((r) => r.keyId === id)).toString()),
      );
    }
    await page.getByRole('radio', { name: 'Requests', exact: true }).check();
    const requestsPerKey = page.getByRole('table', { name: 'Requests per key' });
    await hasText(
      requestsPerKey
        .getByRole('row', { name: /^busy key / })
        .locator('td')
        .first(),
      '55',
    );
    await hasText(
      requestsPerKey
        .getByRole('row', { name: /^Demo key / })
        .locator('td')
        .first(),
      String(VIDEOS),
    );
    await page.getByRole('radio', { name: 'Model', exact: true }).check();
    await page.getByRole('table', { name: 'Requests per model' }).getByRole('rowheader', { name: 'sandbox/video' }).waitFor();
    await page.getByRole('radio', { name: 'Last 7 days' }).check();
    await page.getByRole('radio', { name: 'Day', exact: true }).check();
    await hasCount(page.getByRole('table', { name: 'Requests per day' }).locator('tbody > tr'), 7);
    await hasText(page.getByTestId('spend-total'), `${formatMicro(total.toString())} over ${records.length} requests.`);
  });

  test('the ledger lists every change of the balance, 50 to a page, in words and dollars', async () => {
    await nav('Ledger');
    const rows = page.getByRole('table', { name: 'Ledger' }).locator('tbody > tr');
    await hasCount(rows, 50);
    await hasText(rows.first().locator('td').nth(1), 'Charge');
    await hasText(rows.first().locator('td').nth(3), 'quiet key');
    await page.getByLabel('Show', { exact: true }).selectOption('top_up');
    await hasCount(rows, 1);
    await hasText(rows.first().locator('td').nth(2), '+$25.00');
  });

  test('the request log filters by model and status, and downloads exactly what it shows as CSV', async () => {
    await nav('Account');
    await nav('Request log');
    await page.getByLabel('Model').selectOption('sandbox/video');
    await hasCount(logRows(), VIDEOS);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download these requests as CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toMatch(/^created_at,id,request_id,key_id,key_name,model,status,/);
    expect(csv.slice(1)).toHaveLength(VIDEOS);
    expect(csv.slice(1).every((line) => line.includes(',sandbox/video,ok,'))).toBe(true);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No requests in this period.').waitFor();
  });

  test('the video jobs are paged, 20 at a time, with every one there on demand, and searched', async () => {
    await nav('Videos');
    const cards = page.getByRole('list', { name: 'Video jobs' }).locator(':scope > li.card');
    await hasCount(cards, 20);
    await page.getByRole('button', { name: 'Show older video jobs' }).click();
    await hasCount(cards, VIDEOS);
    await hasText(cards.last().locator('h3'), 'video number 1');
    await hasCount(page.getByRole('button', { name: 'Show older video jobs' }), 0);
    // Searched in the prompts on the server: "video number 1" and 10 to 19.
    await page.getByLabel('Search prompts').fill('number 1');
    await hasCount(cards, 11);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No video job matches.').waitFor();
    await hasCount(cards, 0);
  });

  test('the models page lists what the account can call at the prices the API gives, searchable, per million tokens in dollars', async () => {
    const answer: any = await graphql(
      t.url,
      '{ models { id modality inputPerMTokMicro outputPerMTokMicro perImageMicro perVideoSecondMicro } }',
      {},
      demo.session_token,
    );
    const models: {
      id: string;
      modality: string;
      inputPerMTokMicro: string | null;
      outputPerMTokMicro: string | null;
      perImageMicro: string | null;
      perVideoSecondMicro: string | null;
    }[] = answer.data.models;
    await nav('Models');
    const table = page.getByRole('table', { name: 'Models and prices' });
    const rows = table.locator('tbody > tr');
    await hasCount(rows, models.length);
    const echo = models.find((m) => m.id === 'sandbox/echo')!;
    await page.getByLabel('Search').fill('ECHO');
    await hasCount(rows, models.filter((m) => m.id.includes('echo')).length);
    const row = table.getByRole('row', { name: /sandbox\/echo/ });
    await hasText(row.locator('td').nth(0), 'Text');
    await hasText(row.locator('td').nth(1), formatMicro(echo.inputPerMTokMicro));
    await hasText(row.locator('td').nth(5), formatMicro(echo.outputPerMTokMicro));
    await hasText(row.locator('td').nth(6), '—');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Kind').selectOption('video');
    const videoModels = models.filter((m) => m.modality === 'video');
    expect(videoModels.length).toBeGreaterThan(0);
    await hasCount(rows, videoModels.length);
    await hasText(rows.first().locator('td').nth(7), formatMicro(videoModels[0]!.perVideoSecondMicro));
    await hasText(
      page.getByTestId('models-count'),
      `${videoModels.length === 1 ? '1 model' : `${videoModels.length} models`} of ${models.length}`,
    );
    await page.getByLabel('Search').fill('no such model');
    await page.getByText('No model matches.').waitFor();
  });

  test('the usage pages fit a phone and pass the accessibility rules', async () => {
    for (const width of [1100, 360]) {
      await page.setViewportSize({ width, height: width > 400 ? 900 : 780 });
      for (const name of ['Spend', 'Request log', 'Ledger', 'Models']) {
        // Through another page, so that each page starts afresh (its filters as they open).
        await nav('Account');
        await nav(name);
        await page.getByRole('heading', { level: 1, name }).waitFor();
        if (name === 'Request log') await hasCount(logRows(), 50);
        if (name === 'Spend') await page.getByTestId('spend-total').waitFor();
        if (name === 'Ledger') await page.getByRole('table', { name: 'Ledger' }).waitFor();
        if (name === 'Models') await page.getByRole('table', { name: 'Models and prices' }).waitFor();
        expect({ name, width, overflow: await sidewaysOverflow(page) }).toEqual({ name, width, overflow: 0 });
        expect({ name, width, violations: await accessibilityViolations(page) }).toEqual({ name, width, violations: [] });
      }
    }
    await page.screenshot({ path: join(SHOTS, 'request-log-phone.png'), fullPage: true });
    expect(problems).toEqual([]);
  });
});
