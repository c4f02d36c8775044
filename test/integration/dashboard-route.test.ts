import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>page</title><script type="module" src="/dashboard/assets/app-1.js"></script>');
  writeFileSync(join(dir, 'assets', 'app-1.js'), 'console.log(1)');
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
