import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * The official `openai` SDK in a real browser (its `dangerouslyAllowBrowser` mode), on a page
 * of another origin than Tollgate's: the browser's preflights pass and the page reads answers,
 * streams and the headers Tollgate exposes, while the session plane stays closed to it.
 * Debian's chromium, as the dashboard test; the SDK's own ES modules are served to the page.
 */

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && !process.env.CI) {
  console.warn(
    `\n\n*** SKIPPED the CORS browser test: ${CHROMIUM} is missing. Install it: apt-get install -y chromium (CI installs it and fails without it). ***\n\n`,
  );
}
const suite = haveChromium || process.env.CI ? describe : describe.skip;
const OPENAI_DIR = join(__dirname, '..', '..', 'node_modules', 'openai');

/** The page's origin: an HTML page, and the SDK's modules under /openai/. */
function startPageServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>chat</title><p>chat page</p>');
      return;
    }
    const file = normalize(join(OPENAI_DIR, path.replace(/^\/openai\//, '')));
    if (!path.startsWith('/openai/') || !file.startsWith(OPENAI_DIR) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

suite('the openai SDK in a browser page of another origin', () => {
  let t: TestTollgate;
  let pages: Server;
  let browser: Browser;
  let page: Page;
  let key: string;
  let session: string;
  let api: string;

  jest.setTimeout(60_000);

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package before the tests`);
    t = await startTestTollgate();
    const account = await provisionAccount(t.url, { fundsMicro: '10000000' });
    session = account.sessionToken;
    key = (await createKey(t.url, account.sessionToken)).secret;
    // Another origin than the page's: localhost, not 127.0.0.1, and another port.
    api = t.url.replace('127.0.0.1', 'localhost');
    pages = await startPageServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(pages.address() as AddressInfo).port}/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pages?.close(resolve));
    await t?.stop();
  });

  /**
   * Runs `body` in the page with `client`, the SDK pointed at Tollgate. Passed as source text:
   * a function would be compiled for Node by the test transform (its dynamic import included).
   */
  const inPage = <T>(apiKey: string, body: string): Promise<T> =>
    page.evaluate(`(async () => {
      const { default: OpenAI } = await import('/openai/index.mjs');
      const client = new OpenAI({ apiKey: ${JSON.stringify(apiKey)}, baseURL: ${JSON.stringify(`${api}/v1`)}, dangerouslyAllowBrowser: true, maxRetries: 0 });
      ${body}
    })()`) as Promise<T>;

  test('chat, a stream, responses and models.retrieve are served, and the page reads the exposed headers', async () => {
    const result = await inPage(
      key,
      `
      const { data: chat, response } = await client.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'Hello from a page' }] }).withResponse();
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ model: 'sandbox/echo', stream: true, messages: [{ role: 'user', content: 'Streamed to a page' }] })) streamed += chunk.choices[0]?.delta.content ?? '';
      const answer = await client.responses.create({ model: 'sandbox/echo', input: 'Responses in a page' });
      const { response: modelResponse } = await client.models.retrieve('echo').withResponse();
      return {
        chat: chat.choices[0].message.content,
        requestId: response.headers.get('x-request-id'),
        remaining: response.headers.get('x-ratelimit-remaining-requests'),
        streamed,
        responses: answer.output_text,
        routedFrom: modelResponse.headers.get('x-service-model-routed-from'),
      };`,
    );
    expect(result).toEqual({
      chat: 'Hello from a page',
      requestId: expect.stringMatching(/^req_/),
      remaining: expect.stringMatching(/^\d+$/),
      streamed: 'Streamed to a page',
      responses: 'Responses in a page',
      routedFrom: 'echo',
    });
  });

  test('a refusal is readable by the page (401 with its envelope)', async () => {
    const status = await inPage(
      'tgk_wrong',
      `
      try {
        await client.models.list();
        return null;
      } catch (error) {
        return { status: error.status, code: error.code };
      }`,
    );
    expect(status).toEqual({ status: 401, code: 'invalid_token' });
  });

  test('the session plane is closed to the page: the browser refuses its answer', async () => {
    const outcome = await page.evaluate(
      async ({ api, session }) => {
        try {
          await fetch(`${api}/v1/keys`, { headers: { authorization: `Bearer ${session}` } });
          return 'read';
        } catch (error) {
          return (error as Error).name;
        }
      },
      { api, session },
    );
    expect(outcome).toBe('TypeError');
  });
});
