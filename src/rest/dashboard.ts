import { existsSync } from 'node:fs';
import { dirname, extname, join, sep } from 'node:path';
import express, { type RequestHandler } from 'express';
import { notFound } from '../domain/shared/errors';

/**
 * The browser dashboard's policy: only this origin's own files run, style and connect (the
 * GraphQL plane over HTTP and graphql-ws on the same host), nothing inline, never in a frame.
 * CSP Level 3 lets 'self' match ws:/wss: to the same host, so no other socket host is allowed.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where `npm run build` writes the dashboard: `dist/dashboard` beside the package.json above this
 * file (it runs from `dist/src/rest` when built and from `src/rest` under the test runner).
 */
export function defaultDashboardDir(): string {
  let root = __dirname;
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  return join(root, 'dist', 'dashboard');
}

/**
 * GET /dashboard: the single-page app's files, and its index.html for any other path without a
 * file extension (the app routes in the browser). Hashed assets are cached for good, the page
 * never. Without a build, the error envelope says how to make one.
 */
export function dashboard(dir: string = defaultDashboardDir()): RequestHandler {
  const assets = join(dir, 'assets') + sep;
  const files = express.static(dir, {
    index: false,
    fallthrough: true,
    redirect: false,
    setHeaders: (res, path) => {
      res.setHeader('cache-control', path.startsWith(assets) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  const index = join(dir, 'index.html');
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.setHeader('content-security-policy', DASHBOARD_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('referrer-policy', 'no-referrer');
    if (!existsSync(index)) return next(notFound('The dashboard is not built: run `npm run build`.'));
    files(req, res, () => {
      // A missing file (an old asset name) is a 404, not the page: only app routes fall back.
      if (extname(req.path) !== '') return next(notFound(`No such dashboard file: ${req.path}`));
      res.setHeader('cache-control', 'no-cache');
      res.sendFile(index, (error) => error && next(error));
    });
  };
}
