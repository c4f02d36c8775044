import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsOrigins } from '../config/cors';
import { beginRequest, type RequestObservers } from './http';

/**
 * CORS for browser clients (docs/api.md, "Browsers"): chat UIs that call the API from the page
 * with the user's key, and the SDKs' browser mode. The API-key endpoints answer the origins of
 * TOLLGATE_CORS_ORIGINS (any by default: a key travels in a header, never a cookie, so a page
 * can only use a key it was given); the session and operator planes answer only those of
 * TOLLGATE_CORS_SESSION_ORIGINS (none by default: same-origin). Runs before any route, so that
 * preflights are answered and refusals (401, 429…) stay readable by the page.
 */

type Plane = 'api' | 'session';

/** The API-key endpoints: text, images, videos, models, the API document. */
const API_PATHS =
  /^\/v1\/(?:chat\/completions|responses|messages(?:\/count_tokens)?|images\/|videos(?:\/|$)|models(?:\/|$)|openapi\.json)/i;
/** Keys and sessions (REST), GraphQL, metrics. */
const SESSION_PATHS = /^\/(?:v1\/(?:keys|auth)(?:\/|$)|graphql(?:\/|$)|metrics(?:\/|$))/i;

/** What a page may read of an answer besides the simple headers. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'x-service-model-routed-from',
  'x-service-max-output-clamped',
  'x-service-idempotent-replay',
  'retry-after',
  'content-range',
  'accept-ranges',
].join(', ');

const METHODS: Readonly<Record<Plane, string>> = { api: 'GET, POST, DELETE', session: 'GET, POST, PATCH, DELETE' };

/** Header names a preflight may ask for (tokens and commas): echoed, since the SDKs send many of their own. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(?:\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

const PREFLIGHT_MAX_AGE_SECONDS = '600';

export interface CorsSettings {
  apiOrigins: CorsOrigins;
  sessionOrigins: CorsOrigins;
}

function planeOf(path: string): Plane | null {
  if (API_PATHS.test(path)) return 'api';
  if (SESSION_PATHS.test(path)) return 'session';
  return null;
}

/**
 * The CORS step of every request: sets the headers for an allowed origin and answers a
 * preflight itself (true: nothing more to do). Requests without an `Origin`, and origins not
 * allowed, pass untouched (the browser then keeps the answer from the page).
 */
export function corsStep(settings: CorsSettings, observers: RequestObservers): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    const path = (req.url ?? '/').split('?')[0]!;
    const plane = planeOf(path);
    if (plane === null) return false;
    const allowed = plane === 'api' ? settings.apiOrigins : settings.sessionOrigins;
    if (allowed !== '*') res.setHeader('vary', 'Origin');
    if (allowed !== '*' && !allowed.includes(origin.toLowerCase())) return false;
    res.setHeader('access-control-allow-origin', allowed === '*' ? '*' : origin);
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
      return false;
    }
    beginRequest(req, res, observers, path, 'CORS preflight');
    res.setHeader('access-control-allow-methods', METHODS[plane]);
    const requested = req.headers['access-control-request-headers'];
    if (requested !== undefined && HEADER_LIST.test(requested.trim())) res.setHeader('access-control-allow-headers', requested.trim());
    res.setHeader('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS);
    res.statusCode = 204;
    res.end();
    return true;
  };
}
