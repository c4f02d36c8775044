import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

/**
 * What the dashboard's browser tests share: Debian's Chromium (never a downloaded browser), the
 * build of the current source, waits that fail with a screenshot, and an offline accessibility
 * check (axe-core from npm, run inside the page).
 */
export const ROOT = join(__dirname, '..', '..');
export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'test-results', 'dashboard');
export const haveChromium = existsSync(CHROMIUM);

/** `describe`, or `describe.skip` with a loud message when Chromium is missing outside CI. */
export function browserSuite(): jest.Describe {
  if (!haveChromium && !process.env.CI) {
    console.warn(
      `\n\n*** SKIPPED the dashboard browser test: ${CHROMIUM} is missing. Install it: apt-get install -y chromium (CI installs it and fails without it). ***\n\n`,
    );
  }
  return haveChromium || process.env.CI ? describe : describe.skip;
}

/** A digest of everything the build reads, so a build of the same source is not made twice. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  const add = (path: string) => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) if (name !== 'generated') add(join(path, name));
    } else hash.update(path).update(readFileSync(path));
  };
  add(join(ROOT, 'dashboard'));
  return hash.digest('hex');
}

/**
 * The page under test is the current source: typed operations, then the Vite build into
 * dist/dashboard. Test files run in parallel and serve the same directory, so one builds (under
 * a lock directory) while the others wait, and a build of the same source is reused: a second
 * build would empty the directory under a running test.
 */
export function buildDashboard(): void {
  if (!haveChromium) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package before the tests`);
  const out = join(ROOT, 'dist', 'dashboard');
  const stamp = join(ROOT, 'dist', 'dashboard-source.sha256');
  const lock = join(ROOT, 'dist', 'dashboard-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another test file is building; a lock older than the deadline is a crashed run's.
      if (Date.now() > deadline || Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      else execFileSync('sleep', ['0.5']);
    }
  }
  try {
    const digest = sourceDigest();
    if (existsSync(stamp) && existsSync(join(out, 'index.html')) && readFileSync(stamp, 'utf8') === digest) return;
    execFileSync(process.execPath, ['scripts/dashboard-codegen.mjs'], { cwd: ROOT, stdio: 'inherit' });
    execFileSync(
      process.execPath,
      ['node_modules/vite/bin/vite.js', 'build', '--config', 'dashboard/vite.config.ts', '--logLevel', 'error'],
      { cwd: ROOT, stdio: 'inherit' },
    );
    writeFileSync(stamp, digest);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Collects policy violations, uncaught errors and failed requests of a page, to fail the run at the end. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // Only the API's refusals may be 4xx; a missing file (a favicon, an asset) is a problem.
  page.on('response', (response) => {
    if (response.status() >= 400 && !/\/graphql$/.test(new URL(response.url()).pathname))
      problems.push(`${response.status()} ${response.url()}`);
  });
  return problems;
}

/**
 * Runs axe-core's WCAG 2.1 A and AA rules (contrast included) on the page as it is and returns
 * what it found, one line per violating element. The script is evaluated through the
 * DevTools protocol, so the page's Content-Security-Policy stays as strict as ever.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const result = await page.evaluate<{ id: string; help: string; nodes: { target: string[]; failureSummary?: string }[] }[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))`,
  );
  return result.flatMap((v) =>
    v.nodes.map((n) => `${v.id} (${v.help}) at ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`),
  );
}

/**
 * Waits until the element's text is (or matches) the expected one, doing `between` (an action)
 * after each miss; fails with the last text seen and a screenshot.
 */
export async function hasText(
  locator: Locator,
  expected: string | RegExp,
  between?: () => Promise<unknown>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | null = null;
  for (;;) {
    last = (await locator.count()) === 1 ? ((await locator.textContent()) ?? '').trim() : `(${await locator.count()} elements)`;
    if (typeof expected === 'string' ? last === expected : expected.test(last)) return;
    if (Date.now() > deadline) {
      await locator.page().screenshot({ path: join(SHOTS, 'failure.png'), fullPage: true });
      throw new Error(
        `expected text ${String(expected)}, last seen ${JSON.stringify(last)} (screenshot: test-results/dashboard/failure.png)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, between ? 250 : 50));
    await between?.();
  }
}

/** Waits until exactly `count` elements match. */
export async function hasCount(locator: Locator, count: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await locator.count();
    if (seen === count) return;
    if (Date.now() > deadline) {
      await locator.page().screenshot({ path: join(SHOTS, 'failure.png'), fullPage: true });
      throw new Error(`expected ${count} elements, last seen ${seen} (screenshot: test-results/dashboard/failure.png)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every page fits the width: nothing scrolls sideways. */
export async function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
