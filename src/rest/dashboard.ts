import { existsSync } from 'node:fs';
import { dirname, extname, join, normalize, sep } from 'node:path';
import express, { type Request, type RequestHandler, type Response } from 'express';
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

/** Compressed siblings the build writes beside each text file (`app.js.br`, `app.js.gz`), best first. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;

/**
 * Chooses the compressed sibling of `file` the client accepts (brotli before gzip), sets the
 * headers that describe it (the original's type, its encoding, Vary) and returns its suffix;
 * '' serves the file as it is. Compression happens once, at build time, never per request.
 */
function negotiateEncoding(req: Request, res: Response, file: string): string {
  const present = ENCODINGS.filter((e) => existsSync(file + e.suffix));
  if (present.length === 0) return '';
  res.setHeader('vary', 'Accept-Encoding');
  const weights = acceptedEncodings(req.headers['accept-encoding']);
  const weight = (name: string) => weights.get(name) ?? weights.get('*') ?? 0;
  // The highest weight wins; on a tie, our order (brotli is smaller) rather than the client's listing.
  const encoding = present.reduce<(typeof present)[number] | null>(
    (best, e) => (weight(e.name) > (best ? weight(best.name) : 0) ? e : best),
    null,
  );
  if (!encoding) return '';
  res.type(extname(file));
  res.setHeader('content-encoding', encoding.name);
  return encoding.suffix;
}

/** Accept-Encoding as weights by coding name (`gzip, br;q=0.5` → gzip 1, br 0.5). */
function acceptedEncodings(header: string | undefined): Map<string, number> {
  const weights = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const weight = q === undefined ? 1 : Number(q);
    weights.set(name, Number.isFinite(weight) ? Math.min(Math.max(weight, 0), 1) : 0);
  }
  return weights;
}

/** The file under `dir` that a request path names, or null when it would step outside. */
function fileUnder(dir: string, path: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = normalize(join(dir, decoded));
  return file.startsWith(dir + sep) ? file : null;
}

/**
 * GET /dashboard: the single-page app's files, and its index.html for any other path without a
 * file extension (the app routes in the browser). Hashed assets are cached for good, the page
 * never. Each is sent brotli- or gzip-compressed when the client accepts it and the build made
 * that sibling. Without a build, the error envelope says how to make one.
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
    const path = req.path;
    const file = extname(path) === '' ? null : fileUnder(dir, path);
    const suffix = file && existsSync(file) ? negotiateEncoding(req, res, file) : '';
    if (suffix) req.url = req.url.replace(/^[^?]*/, (p) => p + suffix);
    files(req, res, () => {
      // A missing file (an old asset name) is a 404, not the page: only app routes fall back.
      if (extname(path) !== '') return next(notFound(`No such dashboard file: ${path}`));
      res.setHeader('cache-control', 'no-cache');
      res.sendFile(index + negotiateEncoding(req, res, index), (error) => error && next(error));
    });
  };
}
