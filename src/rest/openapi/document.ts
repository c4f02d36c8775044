import { SCHEMAS } from './components';
import { API_ROUTES, type ApiRoute, type RouteAuth } from './routes';
import { ref, str, type JsonSchema } from './schema';

/** The OpenAPI 3.1 document of the REST plane, built from the route table and its schemas. */

const SECURITY: Readonly<Record<Exclude<RouteAuth, 'none'>, { scheme: JsonSchema; description: string }>> = {
  apiKey: { scheme: { type: 'http', scheme: 'bearer', description: 'An API key (tgk_…).' }, description: 'API key' },
  session: {
    scheme: { type: 'http', scheme: 'bearer', description: 'A session token (tgs_…) from POST /v1/auth/sessions.' },
    description: 'Session',
  },
  operator: {
    scheme: { type: 'http', scheme: 'bearer', description: 'The operator token (TOLLGATE_ADMIN_TOKEN).' },
    description: 'Operator',
  },
};

const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Bad request: a field is unsupported or out of range (the message names it).',
  401: 'Credential missing, wrong, revoked or expired (invalid_token).',
  402: 'Balance, key spend limit or plan allowance cannot cover the request.',
  403: 'Wrong kind of credential (session_required, api_wallet_key_required).',
  404: 'Unknown resource or model (not_found, model_not_available).',
  409: 'The resource is in a state that forbids the change (key_revoked, video_not_ready, idempotency_conflict).',
  413: 'Body larger than the configured limit.',
  415: 'Body is not JSON.',
  429: 'Rate or concurrency limit hit; Retry-After says when to retry.',
  500: 'A defect (internal_error); the message never leaks internals.',
  502: 'The vendor failed; nothing is charged for what was not delivered.',
  503: 'The database or another dependency is down; nothing charged.',
};

/** Answer headers (`#/components/headers/<name>`). */
const HEADERS: Readonly<Record<string, { description: string; schema: JsonSchema }>> = {
  'x-request-id': { description: "The request's id (the caller's, when it sent a sane one).", schema: str() },
  'x-ratelimit-limit-requests': { description: "Requests per minute for the key's account.", schema: str() },
  'x-ratelimit-remaining-requests': { description: 'Requests left in the rolling minute.', schema: str() },
  'x-ratelimit-reset-requests': { description: 'Time until the window is full again (`850ms`, `1.5s`, `6m0s`).', schema: str() },
  'x-ratelimit-limit-tokens': { description: 'Tokens per minute (prepaid keys).', schema: str() },
  'x-ratelimit-remaining-tokens': { description: 'The limit minus the last minute of usage and in-flight reservations.', schema: str() },
  'x-ratelimit-reset-tokens': { description: 'Time until the oldest of those leaves the window.', schema: str() },
  'x-service-model-routed-from': { description: 'The model id sent, when it resolved to another catalog id.', schema: str() },
  'x-service-max-output-clamped': { description: 'The output limit used, when the requested one was lowered.', schema: str() },
  'x-service-idempotent-replay': {
    description: 'true when this answer replays the job an earlier request with the same Idempotency-Key created.',
    schema: str(),
  },
  'Retry-After': { description: 'Seconds to wait (429).', schema: str() },
};

const RATE_LIMIT_HEADERS = Object.keys(HEADERS).filter((name) => name.startsWith('x-ratelimit-'));

/** The headers an answer of this route carries. */
function headersOf(route: ApiRoute, status: number): Record<string, JsonSchema> {
  const names = ['x-request-id'];
  if (route.auth === 'apiKey') names.push(...RATE_LIMIT_HEADERS);
  // Requests that name a model: the id sent may resolve to another; only text has an output limit.
  if (route.method === 'post' && (route.tag === 'Images' || route.tag === 'Videos') && status < 300)
    names.push('x-service-model-routed-from');
  if (route.tag === 'Text' && status < 300) names.push('x-service-model-routed-from', 'x-service-max-output-clamped');
  if (route.path === '/v1/videos' && route.method === 'post' && status < 300) names.push('x-service-idempotent-replay');
  if (status === 429) names.push('Retry-After');
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

const errorResponse = (route: ApiRoute, status: number) => ({
  description: ERROR_DESCRIPTIONS[status] ?? 'Error.',
  headers: headersOf(route, status),
  content: { 'application/json': { schema: ref(route.errorSchema ?? 'Error') } },
});

function operation(route: ApiRoute): Record<string, unknown> {
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: str() }));
  const queryParams = Object.entries(route.query ?? {}).map(([name, description]) => ({
    name,
    in: 'query',
    required: false,
    description,
    schema: str(),
  }));
  const parameters = [...pathParams, ...queryParams];
  const ok = route.ok;
  const okContent = ok.contentType
    ? { [ok.contentType]: { schema: str() } }
    : ok.schema
      ? {
          'application/json': { schema: ref(ok.schema) },
          ...(route.streams ? { 'text/event-stream': { schema: str('Server-sent events, when the body asks for stream: true.') } } : {}),
        }
      : undefined;
  const responses: Record<string, unknown> = {
    [String(ok.status)]: {
      description: ok.description,
      headers: headersOf(route, ok.status),
      ...(okContent ? { content: okContent } : {}),
    },
  };
  for (const status of [...route.errors, 500, 503]) responses[String(status)] ??= errorResponse(route, status);
  return {
    operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth === 'none' ? [] : [{ [route.auth]: [] }, ...(route.path.startsWith('/v1/messages') ? [{ anthropicKey: [] }] : [])],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries((route.bodyTypes ?? ['application/json']).map((type) => [type, { schema: ref(route.body!) }])),
          },
        }
      : {}),
    responses,
  };
}

export function buildOpenApiDocument(routes: readonly ApiRoute[] = API_ROUTES, version = '0.1.0'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route);
  const securitySchemes: Record<string, JsonSchema> = {
    anthropicKey: {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
      description: 'An API key, as the Anthropic SDK sends it (Messages only).',
    },
  };
  for (const [name, { scheme }] of Object.entries(SECURITY)) securitySchemes[name] = scheme;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tollgate',
      version,
      description:
        'A prepaid-balance AI model gateway. Money is a decimal string of micro-dollars; timestamps are Unix seconds. Every answer carries x-request-id; answers to API keys carry the x-ratelimit-* headers.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: { schemas: SCHEMAS, headers: HEADERS, securitySchemes },
  };
}
