import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import express from 'express';
import pino from 'pino';
import { dashboard, DASHBOARD_CSP, defaultDashboardDir } from '../../src/rest/dashboard';
import { errorHandler, unknownPath } from '../../src/rest/http';
import { call } from '../support/tollgate';

/**
 * GET /dashboard over real HTTP, on a stand-in build: the page for every app route, its files,
 * the security headers on all of them, and plain 404 envelopes for a missing file or no build.
 */
let dir: string;
let server: Server;
let url: string;

function serve(buildDir: string): Promise<{ server: Server; url: string }> {
  const app = express();
  app.use('/dashboard', dashboard(buildDir));
  app.use(unknownPath);
  app.use(errorHandler(pino({ level: 'silent' })));
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve({ server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` }));
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-dashboard-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><title>page</title><script type="module" src="/dashboard/assets/app-1.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'app-1.js'), 'console.log(1)');
  // The build writes compressed siblings of its text files; these stand in for them.
  const script = 'console.log("compressed");'.repeat(50);
  writeFileSync(join(dir, 'assets', 'app-2.js'), script);
  writeFileSync(join(dir, 'assets', 'app-2.js.br'), brotliCompressSync(script));
  writeFileSync(join(dir, 'assets', 'app-2.js.gz'), gzipSync(script));
  const page = '<!doctype html><title>page</title>';
  writeFileSync(join(dir, 'index.html.br'), brotliCompressSync(page));
  writeFileSync(join(dir, 'index.html.gz'), gzipSync(page));
  ({ server, url } = await serve(dir));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

test('every app route answers with the page, under the strict policy and never cached', async () => {
  for (const path of ['/dashboard', '/dashboard/', '/dashboard/keys', '/dashboard/videos/']) {
    const response = await call(`${url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.body).toContain('<title>page</title>');
    expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  }
  expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
  expect(DASHBOARD_CSP).not.toContain('unsafe-inline');
});

test('hashed assets are served with a long cache; a missing file is a 404 envelope, not the page', async () => {
  const asset = await call(`${url}/dashboard/assets/app-1.js`);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toMatch(/javascript/);
  expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  const missing = await call(`${url}/dashboard/assets/app-0.js`);
  expect(missing.status).toBe(404);
  expect(missing.body.error.message).toBe('No such dashboard file: /assets/app-0.js');
});

test('a method other than GET is not the dashboard: the usual 404 envelope', async () => {
  const response = await call(`${url}/dashboard/keys`, { body: {} });
  expect(response.status).toBe(404);
  expect(response.body.error.message).toBe('No such endpoint: POST /dashboard/keys');
});

test('without a build, the answer says how to make one', async () => {
  const empty = await serve(join(dir, 'not-built'));
  try {
    const response = await call(`${empty.url}/dashboard`);
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({ code: 'not_found', message: 'The dashboard is not built: run `npm run build`.' });
  } finally {
    await new Promise((resolve) => empty.server.close(resolve));
  }
});

test('the default build directory is dist/dashboard at the top of the checkout', () => {
  expect(defaultDashboardDir()).toBe(join(__dirname, '..', '..', 'dist', 'dashboard'));
});

/** GET with exactly the Accept-Encoding given, and the body's bytes as they came (no decoding). */
function rawGet(target: string, acceptEncoding?: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(target, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

test('files are sent brotli- or gzip-compressed as the client accepts, with their own type, and as they are otherwise', async () => {
  const script = 'console.log("compressed");'.repeat(50);
  const br = await rawGet(`${url}/dashboard/assets/app-2.js`, 'gzip, deflate, br');
  expect(br.status).toBe(200);
  expect(br.headers['content-encoding']).toBe('br');
  expect(br.headers['content-type']).toMatch(/^text\/javascript/);
  expect(br.headers.vary).toBe('Accept-Encoding');
  expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(Number(br.headers['content-length'])).toBe(br.body.length);
  expect(br.body.length).toBeLessThan(script.length / 5);
  expect(brotliDecompressSync(br.body).toString()).toBe(script);

  // The client's preference (q-values) decides between the two.
  const gz = await rawGet(`${url}/dashboard/assets/app-2.js`, 'br;q=0.5, gzip');
  expect(gz.headers['content-encoding']).toBe('gzip');
  expect(gunzipSync(gz.body).toString()).toBe(script);

  for (const accept of [undefined, 'identity', 'br;q=0, gzip;q=0']) {
    const plain = await rawGet(`${url}/dashboard/assets/app-2.js`, accept);
    expect({ accept, encoding: plain.headers['content-encoding'], vary: plain.headers.vary }).toEqual({
      accept,
      encoding: undefined,
      vary: 'Accept-Encoding',
    });
    expect(plain.body.toString()).toBe(script);
  }
  // A file the build did not compress is sent as it is, with no Vary.
  const small = await rawGet(`${url}/dashboard/assets/app-1.js`, 'br');
  expect(small.headers['content-encoding']).toBeUndefined();
  expect(small.body.toString()).toBe('console.log(1)');
});

test('the page of every app route is compressed too, still never cached', async () => {
  const page = await rawGet(`${url}/dashboard/keys`, 'br');
  expect(page.status).toBe(200);
  expect(page.headers['content-encoding']).toBe('br');
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(page.headers['cache-control']).toBe('no-cache');
  expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
  expect(brotliDecompressSync(page.body).toString()).toContain('<title>page</title>');
});

test('a compressed sibling is never reachable outside the build directory', async () => {
  writeFileSync(join(dir, '..', 'outside.js.br'), brotliCompressSync('secret'));
  try {
    const escaped = await rawGet(`${url}/dashboard/%2e%2e/outside.js`, 'br');
    expect(escaped.status).toBeGreaterThanOrEqual(400);
    expect(escaped.body.toString()).not.toContain('secret');
  } finally {
    rmSync(join(dir, '..', 'outside.js.br'), { force: true });
  }
});
