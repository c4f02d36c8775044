import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { seedDemoOnFirstStart, type DemoCredentials } from '../../src/infra/demo-seed';
import {
  accessibilityViolations,
  browserSuite,
  buildDashboard,
  hasCount,
  hasText,
  launchChromium,
  ROOT,
  SHOTS,
  sidewaysOverflow,
  watchProblems,
} from '../support/dashboard-browser';
import { call, graphql, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { videoTestEnv } from '../support/videos';

/**
 * The dashboard in a real headless Chromium (Debian's package, never a downloaded browser)
 * against a real Tollgate: sign in as the demo user, create a key, set its limit, see key events
 * arrive live, spend with the key over REST and see it, watch a sandbox video run to the end,
 * revoke the key, sign out. Screenshots of each page go to test-results/dashboard/; with
 * DASHBOARD_README_SCREENSHOT=1 the Keys page is also written to docs/dashboard.png.
 */

const suite = browserSuite();

suite('the dashboard in a real browser', () => {
  let t: TestTollgate;
  let videos: ReturnType<typeof videoTestEnv>;
  let dataDir: string;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  let secret = '';
  let keyId = '';

  jest.setTimeout(60_000);

  beforeAll(async () => {
    buildDashboard();
    // The sandbox renders for a while, so the page can show the job queued or running first.
    videos = videoTestEnv({ TOLLGATE_SANDBOX_VIDEO_RENDER_MS: '2500' });
    t = await startTestTollgate({ env: videos.env });
    dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-'));
    demo = (await seedDemoOnFirstStart(t.tollgate.services, dataDir))!;
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = await context.newPage();
    // A policy violation, an uncaught error or a missing file anywhere fails the run at the end.
    problems = watchProblems(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    videos?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name }).click();
  const keyCard = (name: string) => page.getByRole('listitem', { name: `Key ${name}` });

  test('the page is served under the strict policy, compressed, with its icon, and a refused sign-in shows the API message', async () => {
    const scripts: { url: string; encoding: string | undefined }[] = [];
    page.on('response', (r) => r.url().endsWith('.js') && scripts.push({ url: r.url(), encoding: r.headers()['content-encoding'] }));
    const response = await page.goto(`${t.url}/dashboard`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    // The browser accepts brotli: the page and its script come compressed.
    expect(response!.headers()['content-encoding']).toBe('br');
    await page.getByLabel('Email').waitFor();
    expect(scripts).toEqual([{ url: expect.stringMatching(/\/dashboard\/assets\/index-.+\.js$/), encoding: 'br' }]);
    // The icon the page names is served (so no browser asks for a missing /favicon.ico).
    const icon = await page.evaluate<string>("document.querySelector('link[rel=icon]').href");
    expect(icon).toBe(`${t.url}/dashboard/favicon.svg`);
    const served = await fetch(icon);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    await page.getByLabel('Email').fill(demo.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await hasText(page.getByRole('alert'), 'The email or password is wrong.');
    await shot('sign-in');
    // Guessing on: the API asks for a wait, which the form shows counting down with its button off, then lets go.
    for (let tries = 0; tries < 10 && !/Too many/.test((await page.getByRole('alert').textContent()) ?? ''); tries++) {
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
    }
    await hasText(page.getByRole('alert'), /^Too many failed sign-ins\. You can try again in \d+ s\.$/);
    expect(await page.getByRole('button', { name: 'Sign in' }).isDisabled()).toBe(true);
    await shot('sign-in-wait');
    await hasCount(page.getByRole('alert'), 0, 20_000);
    expect(await page.getByRole('button', { name: 'Sign in' }).isEnabled()).toBe(true);
  });

  test('signs in as the demo user, shows the account, and sets automatic top-up in exact amounts', async () => {
    // From the keyboard: Enter in the password field submits.
    await page.getByLabel('Password').fill(demo.password);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    await hasText(page.getByTestId('balance'), '$25.00');
    await page.getByText(`Signed in as ${demo.email}`).waitFor();
    await hasText(page.getByTestId('auto-top-up'), 'Off.');
    await shot('account');
    // Automatic top-up: a threshold over the API's bound is refused in the form's words, in dollars.
    await page.getByLabel('Threshold ($)').fill('200000');
    await page.getByLabel('Top-up amount ($)').fill('10');
    await page.getByRole('button', { name: 'Turn automatic top-up on' }).click();
    await hasText(page.getByRole('alert'), 'Top-up threshold must be between $0 and $100,000');
    // On with exact amounts, then off again.
    await page.getByLabel('Threshold ($)').fill('2.5');
    await page.getByLabel('Top-up amount ($)').fill('10');
    await page.getByRole('button', { name: 'Turn automatic top-up on' }).click();
    await hasText(page.getByTestId('auto-top-up'), 'On: when the balance falls below $2.50, add $10.00.');
    const setting = await graphql(t.url, '{ autoTopUp { enabled thresholdMicro amountMicro } }', {}, demo.session_token);
    expect(setting.data.autoTopUp).toEqual({ enabled: true, thresholdMicro: '2500000', amountMicro: '10000000' });
    await page.getByRole('button', { name: 'Turn automatic top-up off' }).click();
    await hasText(page.getByTestId('auto-top-up'), 'Off.');
  });

  test('creates a key (its secret shown once), refuses a bad limit by name, sets a limit, and shows key events live', async () => {
    await nav('Keys');
    await page.getByLabel('Key name').fill('e2e key');
    await page.getByRole('button', { name: 'Create key' }).click();
    secret = (await page.getByTestId('new-secret').textContent())!;
    expect(secret).toMatch(/^tgk_/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await hasCount(page.getByTestId('new-secret'), 0);

    const card = keyCard('e2e key');
    await card.getByRole('button', { name: 'Events' }).click();
    // The events open inside the key's card, and focus moves to them.
    const events = card.getByRole('list', { name: 'Events of e2e key' });
    await events.getByText('Created as “e2e key”, with no monthly limit.').waitFor();
    expect(await page.evaluate<string | null>('document.activeElement?.textContent ?? null')).toBe('Events of e2e key');
    await events.getByText(/by you$/).waitFor();
    await page.locator('[data-live="connected"]').waitFor();

    await card.getByRole('button', { name: 'Monthly limit' }).click();
    await card.getByLabel('Monthly limit ($)').fill('0.1234567');
    await card.getByRole('button', { name: 'Set limit' }).click();
    await hasText(card.getByRole('alert'), 'Monthly limit must be an amount in dollars with at most 6 decimals, like 25 or 12.50.');
    // The API's refusal, in the words of the form: its label and dollars.
    await card.getByLabel('Monthly limit ($)').fill('0.50');
    await card.getByRole('button', { name: 'Set limit' }).click();
    await hasText(card.getByRole('alert'), 'Monthly limit must be between $1 and $100,000');
    await card.getByLabel('Monthly limit ($)').fill('1.50');
    await card.getByRole('button', { name: 'Set limit' }).click();
    await hasText(card.getByTestId('key-spend'), 'This month: $0.00 of $1.50');
    await hasText(
      card.getByTestId('key-limit-standing'),
      /^\$0\.00 counted against the limit \(\$0\.00 in flight\), \$1\.50 left until .+\.$/,
    );

    // The events list was loaded once: the change arrives through the subscription, in words.
    await events.getByText('Monthly limit set to $1.50 (there was none).').waitFor();
    const keys = await graphql(t.url, '{ keys { id name monthlySpendLimitMicro } }', {}, demo.session_token);
    const created = keys.data.keys.find((k: { name: string }) => k.name === 'e2e key');
    expect(created.monthlySpendLimitMicro).toBe('1500000');
    keyId = created.id;

    // A change made elsewhere (the REST plane) shows up too, without reloading anything.
    const outside = await call(`${t.url}/v1/keys/${keyId}`, {
      method: 'PATCH',
      token: demo.session_token,
      body: { monthly_spend_limit_micro: '2250000' },
    });
    expect(outside.status).toBe(200);
    await events.getByText('Monthly limit changed from $1.50 to $2.25.').waitFor();
    await hasCount(events.locator('li[data-kind="spend_limit_changed"]'), 2);
    // The card follows too, with nothing reloaded by hand.
    await hasText(card.getByTestId('key-spend'), 'This month: $0.00 of $2.25');
    await shot('keys');
  });

  test('a request with the new key through the REST plane shows up as spend', async () => {
    const openai = new OpenAI({ apiKey: secret, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const answer = await openai.chat.completions.create({
      model: 'sandbox/echo',
      messages: [{ role: 'user', content: 'Hello from the browser test' }],
    });
    expect(answer.choices[0]!.message.content).toBeTruthy();

    // Text requests are served out of a budget lease that settles shortly after; the page follows by itself (no Refresh button).
    await hasCount(page.getByRole('button', { name: /^Refresh/ }), 0);
    await hasText(keyCard('e2e key').getByTestId('key-spend'), /^This month: \$0\.0\d*[1-9]\d* of \$2\.25$/, undefined, 20_000);
    await hasText(
      keyCard('e2e key').getByTestId('key-limit-standing'),
      /^\$0\.\d*[1-9]\d* counted against the limit \(\$0\.\d+ in flight\), \$2\.\d+ left until .+\.$/,
    );
    if (process.env.DASHBOARD_README_SCREENSHOT) await page.screenshot({ path: join(ROOT, 'docs', 'dashboard.png') });

    // Navigation works from the keyboard too.
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Spend' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Spend' }).waitFor();
    await hasText(page.getByTestId('spend-total'), /^\$0\.\d+ over 1 request\.$/, undefined, 20_000);
    await page.getByRole('radio', { name: 'Key', exact: true }).check();
    await page.getByRole('table', { name: 'Cost per key' }).getByRole('rowheader', { name: 'e2e key' }).waitFor();
    await page.getByRole('radio', { name: 'Model', exact: true }).check();
    await page.getByRole('table', { name: 'Cost per model' }).getByRole('rowheader', { name: 'sandbox/echo' }).waitFor();
    await page.getByRole('radio', { name: 'Day', exact: true }).check();
    await page
      .getByRole('table', { name: 'Cost per day' })
      .getByRole('rowheader', { name: new Date().toISOString().slice(0, 10) })
      .waitFor();
    await shot('spend');
  });

  test('a sandbox video appears and goes from queued to completed, live', async () => {
    await nav('Videos');
    await page.getByText('No video jobs yet.', { exact: false }).waitFor();
    await page.locator('[data-live="connected"]').waitFor();
    const created = await call(`${t.url}/v1/videos`, {
      token: secret,
      body: { model: 'sandbox/video', prompt: 'A lighthouse at dusk', seconds: 2 },
    });
    expect(created.status).toBe(202);
    const status = page.getByRole('listitem', { name: `Video ${created.body.id}` }).getByTestId('video-status');
    const seen: string[] = [];
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const text = (await status.textContent({ timeout: 20_000 }))!;
      if (seen[seen.length - 1] !== text) seen.push(text);
      if (text === 'completed' || text === 'failed') break;
      await page.waitForTimeout(50);
    }
    expect(seen[0]).toMatch(/^(queued|in progress)$/);
    expect(seen[seen.length - 1]).toBe('completed');
    const card = page.getByRole('listitem', { name: `Video ${created.body.id}` });
    await hasCount(card.getByText('Progress 100%'), 1);
    await card.getByText(`/v1/videos/${created.body.id}/content`).waitFor();
    await shot('videos');
  });

  test('renames the key, removes its limit, and revokes it: the REST plane then refuses it', async () => {
    await nav('Keys');
    await keyCard('e2e key').getByRole('button', { name: 'Rename' }).click();
    await keyCard('e2e key').getByLabel('New name').fill('e2e key, renamed');
    await keyCard('e2e key').getByRole('button', { name: 'Save name' }).click();
    const card = keyCard('e2e key, renamed');
    await card.getByRole('button', { name: 'Monthly limit' }).click();
    await card.getByRole('button', { name: 'Remove limit' }).click();
    await hasText(card.getByTestId('key-spend'), /^This month: \$0\.\d+ \(no limit\)$/);
    await hasCount(card.getByTestId('key-limit-standing'), 0);
    await card.getByRole('button', { name: 'Revoke' }).click();
    await card.getByRole('button', { name: 'Revoke e2e key, renamed now' }).click();
    await hasText(card.getByTestId('key-state'), 'revoked');
    await card.getByTestId('key-revoked').waitFor();
    // Nothing can be done to a revoked key: its actions are gone, only its events remain.
    for (const action of ['Rename', 'Monthly limit', 'Revoke']) await hasCount(card.getByRole('button', { name: action, exact: true }), 0);
    await card.getByRole('button', { name: 'Events' }).click();
    const events = card.getByRole('list', { name: 'Events of e2e key, renamed' });
    await events.getByText('Renamed from “e2e key” to “e2e key, renamed”.').waitFor();
    await events.getByText('Monthly limit removed (it was $2.25).').waitFor();
    await events.getByText('Revoked: requests with this key are refused from now on.').waitFor();
    const key = await graphql(
      t.url,
      'query($id: ID!) { key(id: $id) { name monthlySpendLimitMicro revokedAt } }',
      { id: keyId },
      demo.session_token,
    );
    expect(key.data.key).toMatchObject({ name: 'e2e key, renamed', monthlySpendLimitMicro: null });
    expect(key.data.key.revokedAt).not.toBeNull();
    const refused = await call(`${t.url}/v1/models`, { token: secret });
    expect(refused.status).toBe(401);
  });

  test('a key revoked elsewhere loses its actions on the page at once, even a form left open', async () => {
    const made = await call(`${t.url}/v1/keys`, {
      token: demo.session_token,
      body: { name: 'revoked elsewhere', monthly_spend_limit_micro: '5000000' },
    });
    expect(made.status).toBe(201);
    const card = keyCard('revoked elsewhere');
    await hasText(card.getByTestId('key-spend'), 'This month: $0.00 of $5.00', undefined, 20_000);
    await card.getByRole('button', { name: 'Monthly limit' }).click();
    await card.getByLabel('Monthly limit ($)').waitFor();
    await page.locator('[data-live="connected"]').waitFor();
    const revoked = await call(`${t.url}/v1/keys/${made.body.id}`, { method: 'DELETE', token: demo.session_token });
    expect(revoked.status).toBe(200);
    await hasText(card.getByTestId('key-state'), 'revoked');
    await hasCount(card.getByLabel('Monthly limit ($)'), 0);
    for (const action of ['Rename', 'Monthly limit', 'Revoke']) await hasCount(card.getByRole('button', { name: action, exact: true }), 0);
    await hasText(card.getByTestId('key-spend'), 'This month: $0.00 (its limit was $5.00)');
  });

  test('many keys are paged and searchable, and older events of a key are there on demand', async () => {
    for (let i = 1; i <= 11; i++) {
      const made = await call(`${t.url}/v1/keys`, { token: demo.session_token, body: { name: `many ${String(i).padStart(2, '0')}` } });
      expect(made.status).toBe(201);
      if (i === 1) {
        // 24 limit changes: with its creation, 25 events, more than one page of them.
        for (let change = 1; change <= 24; change++) {
          const changed = await call(`${t.url}/v1/keys/${made.body.id}`, {
            method: 'PATCH',
            token: demo.session_token,
            body: { monthly_spend_limit_micro: String(1_000_000 * change) },
          });
          expect(changed.status).toBe(200);
        }
      }
    }
    const all = (await graphql(t.url, '{ keys { id } }', {}, demo.session_token)).data.keys.length;
    expect(all).toBeGreaterThan(12);
    expect(all).toBeLessThanOrEqual(20);
    const cards = page.getByRole('list', { name: 'API keys' }).locator(':scope > li');
    await hasText(page.getByTestId('keys-page'), 'Page 1', undefined, 20_000);
    await hasCount(cards, 10);
    await hasText(cards.first().locator('h3'), 'many 11');
    await page.getByRole('button', { name: 'Next keys' }).click();
    await hasText(page.getByTestId('keys-page'), 'Page 2');
    await hasCount(cards, all - 10);
    expect(await page.getByRole('button', { name: 'Next keys' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous keys' }).click();
    await hasText(cards.first().locator('h3'), 'many 11');
    // Search by name (on the server): nine of them contain "many 0", so one page and no pager.
    await page.getByLabel('Search keys').fill('many 0');
    await hasCount(cards, 9);
    await hasCount(page.getByTestId('keys-page'), 0);
    await page.getByLabel('Search keys').fill('');
    await page.getByLabel('Show').selectOption('revoked');
    await hasCount(cards, 2);
    await keyCard('revoked elsewhere').waitFor();
    await page.getByLabel('Show').selectOption({ label: 'all keys' });

    await page.getByLabel('Search keys').fill('many 01');
    const card = keyCard('many 01');
    await card.getByRole('button', { name: 'Events' }).click();
    const events = card.getByRole('list', { name: 'Events of many 01' }).locator(':scope > li[data-kind]');
    await hasCount(events, 20);
    await card.getByRole('button', { name: 'Show older events' }).click();
    await hasCount(events, 25);
    await hasText(events.last(), /^Created as “many 01”, with no monthly limit\./);
    await hasCount(card.getByRole('button', { name: 'Show older events' }), 0);
    await page.getByLabel('Search keys').fill('');
  });

  test('every page passes the accessibility rules (WCAG 2.1 AA, contrast included) on a desktop and a phone', async () => {
    // Desktop and phone in the light scheme, and the desktop in the dark one.
    for (const [width, colorScheme] of [
      [1100, 'light'],
      [360, 'light'],
      [1100, 'dark'],
    ] as const) {
      await page.setViewportSize({ width, height: width > 400 ? 900 : 780 });
      await page.emulateMedia({ colorScheme });
      for (const name of ['Account', 'Keys', 'Spend', 'Request log', 'Ledger', 'Videos', 'Models']) {
        await nav(name);
        await page.getByRole('heading', { level: 1, name }).waitFor();
        await page.waitForLoadState('networkidle').catch(() => undefined);
        expect({ page: name, width, colorScheme, violations: await accessibilityViolations(page) }).toEqual({
          page: name,
          width,
          colorScheme,
          violations: [],
        });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    // The events of a revoked key are part of the Keys page too.
    await nav('Keys');
    await page.getByLabel('Search keys').fill('e2e key');
    await keyCard('e2e key, renamed').getByRole('button', { name: 'Events' }).click();
    await keyCard('e2e key, renamed')
      .getByText(/^Revoked:/)
      .waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  test('every page fits a phone screen, and signing out ends the session', async () => {
    await page.setViewportSize({ width: 360, height: 780 });
    for (const name of ['Account', 'Keys', 'Spend', 'Request log', 'Ledger', 'Videos', 'Models']) {
      await nav(name);
      await page.getByRole('heading', { level: 1, name }).waitFor();
      const overflow = await sidewaysOverflow(page);
      expect({ page: name, overflow }).toEqual({ page: name, overflow: 0 });
    }
    await shot('videos-phone');
    const token = await page.evaluate<string | null>("sessionStorage.getItem('tollgate.session')");
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const after = await graphql(t.url, '{ me { id } }', {}, token!);
    expect(after.errors?.[0]?.extensions.code).toBe('invalid_token');
    expect(problems).toEqual([]);
  });
});
