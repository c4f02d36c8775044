/**
 * Every route Tollgate serves, one entry each: the API document is generated from this table,
 * and metrics and traces label requests with its path patterns. A test enumerates the routes
 * the app really serves and fails on any missing here. Adding a route is adding an entry
 * (plus, when it has a body, its schema in components.ts).
 */

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/** Who may call: an API key, a signed-in session, the operator token, or anyone. */
export type RouteAuth = 'apiKey' | 'session' | 'operator' | 'none';

export interface ApiRoute {
  method: HttpMethod;
  /** OpenAPI path template (`/v1/keys/{id}`); also the `endpoint` label of metrics. */
  path: string;
  summary: string;
  tag: 'Text' | 'Images' | 'Videos' | 'Models' | 'Keys' | 'Sessions' | 'Operations';
  auth: RouteAuth;
  /** Component schema of the request body, if it takes one. */
  body?: string;
  /** Media types of the body (default JSON only); e.g. `['application/json', 'multipart/form-data']`. */
  bodyTypes?: readonly string[];
  /** Query parameters: name → description (all optional strings). */
  query?: Readonly<Record<string, string>>;
  ok: { status: number; description: string; schema?: string; contentType?: string };
  /** Statuses of the error envelope this route can answer (besides 500 and 503). */
  errors: readonly number[];
  /** The answer streams as server-sent events when the body asks for it. */
  streams?: boolean;
  /** The component schema of its errors, when not the envelope (`Error`). */
  errorSchema?: string;
}

const KEY_ERRORS = [400, 401, 403, 404];
const TEXT_ERRORS = [400, 401, 402, 404, 413, 415, 429, 502];

export const API_ROUTES: readonly ApiRoute[] = [
  // Text generation (API key)
  {
    method: 'post',
    path: '/v1/chat/completions',
    summary: 'Chat Completions (OpenAI format)',
    tag: 'Text',
    auth: 'apiKey',
    body: 'ChatCompletionRequest',
    ok: { status: 200, description: 'A chat.completion, or chat.completion.chunk events when streaming.', schema: 'OpenAiAnswer' },
    errors: TEXT_ERRORS,
    streams: true,
  },
  {
    method: 'post',
    path: '/v1/responses',
    summary: 'Responses, stateless (OpenAI format)',
    tag: 'Text',
    auth: 'apiKey',
    body: 'ResponsesRequest',
    ok: { status: 200, description: 'A response object, or its events when streaming.', schema: 'OpenAiAnswer' },
    errors: TEXT_ERRORS,
    streams: true,
  },
  {
    method: 'post',
    path: '/v1/messages',
    summary: "Messages (Anthropic format; the key may come as x-api-key; errors in Anthropic's shape)",
    tag: 'Text',
    auth: 'apiKey',
    body: 'MessagesRequest',
    ok: { status: 200, description: 'A message, or Anthropic stream events when streaming.', schema: 'MessagesAnswer' },
    errors: TEXT_ERRORS,
    streams: true,
    errorSchema: 'MessagesError',
  },
  {
    method: 'post',
    path: '/v1/messages/count_tokens',
    summary: "Count a Messages prompt's input tokens (Anthropic format; free, rate-limited like any request)",
    tag: 'Text',
    auth: 'apiKey',
    body: 'MessagesCountTokensRequest',
    ok: {
      status: 200,
      description: "The input tokens: the vendor's own count where it has one, else Tollgate's.",
      schema: 'MessagesTokenCount',
    },
    errors: [400, 401, 404, 413, 415, 429, 502],
    errorSchema: 'MessagesError',
  },

  // Model lists (API key)
  {
    method: 'get',
    path: '/v1/models',
    summary: 'Text models the key can use (prices for prepaid keys)',
    tag: 'Models',
    auth: 'apiKey',
    ok: { status: 200, description: 'Model list.', schema: 'TextModelList' },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: '/v1/models/{id}',
    summary: 'One model by any id that resolves for the key (text, image or video); `vendor/model` ids URL-encoded',
    tag: 'Models',
    auth: 'apiKey',
    ok: {
      status: 200,
      description: 'The model as its list shows it (header x-service-model-routed-from when the id was rewritten).',
      schema: 'ModelEntry',
    },
    errors: [401, 404, 429],
  },
  {
    method: 'get',
    path: '/v1/models/{namespace}/{name}',
    summary: 'One model by a `vendor/model` id sent unencoded',
    tag: 'Models',
    auth: 'apiKey',
    ok: { status: 200, description: 'As /v1/models/{id}.', schema: 'ModelEntry' },
    errors: [401, 404, 429],
  },
  {
    method: 'get',
    path: '/v1/images/models',
    summary: 'Image models the key can use (prepaid keys only)',
    tag: 'Models',
    auth: 'apiKey',
    ok: { status: 200, description: 'Image model list.', schema: 'ImageModelList' },
    errors: [401, 403, 429],
  },
  {
    method: 'get',
    path: '/v1/videos/models',
    summary: 'Video models the key can use (prepaid keys only)',
    tag: 'Models',
    auth: 'apiKey',
    ok: { status: 200, description: 'Video model list.', schema: 'VideoModelList' },
    errors: [401, 403, 429],
  },

  // Images (prepaid API key)
  {
    method: 'post',
    path: '/v1/images/generations',
    summary: 'Generate images (billed per delivered image)',
    tag: 'Images',
    auth: 'apiKey',
    body: 'ImageGenerationRequest',
    ok: { status: 200, description: 'The images, base64.', schema: 'ImageResponse' },
    errors: [400, 401, 402, 403, 404, 413, 415, 429, 502],
  },
  {
    method: 'post',
    path: '/v1/images/edits',
    summary: 'Edit images (multipart; billed per delivered image)',
    tag: 'Images',
    auth: 'apiKey',
    body: 'ImageEditRequest',
    bodyTypes: ['multipart/form-data'],
    ok: { status: 200, description: 'The images, base64.', schema: 'ImageResponse' },
    errors: [400, 401, 402, 403, 404, 413, 415, 429, 502],
  },

  // Videos (prepaid API key); creation takes an optional Idempotency-Key header (replays answer 200)
  {
    method: 'post',
    path: '/v1/videos',
    summary: 'Create a video job (JSON, or multipart with image inputs); Idempotency-Key header honoured for 7 days',
    tag: 'Videos',
    auth: 'apiKey',
    body: 'VideoCreateRequest',
    bodyTypes: ['application/json', 'multipart/form-data'],
    ok: { status: 202, description: 'The queued job (200 with x-service-idempotent-replay when replayed).', schema: 'Video' },
    errors: [400, 401, 402, 403, 404, 409, 413, 415, 429],
  },
  {
    method: 'get',
    path: '/v1/videos',
    summary: "The account's video jobs",
    tag: 'Videos',
    auth: 'apiKey',
    query: {
      limit: 'Page size, 1 to 100 (default 20).',
      order: 'desc (newest first, default) or asc.',
      after: 'A video id: the page starts after it.',
    },
    ok: { status: 200, description: 'A page of videos.', schema: 'VideoList' },
    errors: [400, 401, 403, 429],
  },
  {
    method: 'get',
    path: '/v1/videos/{id}',
    summary: 'One video job',
    tag: 'Videos',
    auth: 'apiKey',
    ok: { status: 200, description: 'The job.', schema: 'Video' },
    errors: [401, 403, 404, 429],
  },
  {
    method: 'delete',
    path: '/v1/videos/{id}',
    summary: 'Delete a completed or failed job and its file (409 while queued or running); billing records stay',
    tag: 'Videos',
    auth: 'apiKey',
    ok: { status: 200, description: 'Deleted.', schema: 'VideoDeleted' },
    errors: [401, 403, 404, 409, 429],
  },
  {
    method: 'get',
    path: '/v1/videos/{id}/content',
    summary: 'The MP4 of a completed job (Range requests answered 206)',
    tag: 'Videos',
    auth: 'apiKey',
    ok: { status: 200, description: 'The video file.', contentType: 'video/mp4' },
    errors: [401, 403, 404, 409, 410, 416, 429],
  },

  // Sessions
  {
    method: 'post',
    path: '/v1/auth/sessions',
    summary: 'Sign in (failed sign-ins are throttled: 429 with Retry-After)',
    tag: 'Sessions',
    auth: 'none',
    body: 'SignInRequest',
    ok: { status: 201, description: 'A session.', schema: 'Session' },
    errors: [400, 401, 413, 415, 429],
  },
  {
    method: 'delete',
    path: '/v1/auth/sessions/current',
    summary: 'Sign out',
    tag: 'Sessions',
    auth: 'session',
    ok: { status: 204, description: 'Signed out.' },
    errors: [401, 403],
  },

  // Key management (signed-in session)
  {
    method: 'post',
    path: '/v1/keys',
    summary: 'Create a key (its secret is returned once)',
    tag: 'Keys',
    auth: 'session',
    body: 'CreateKeyRequest',
    ok: { status: 201, description: 'The key and its secret.', schema: 'CreatedApiKey' },
    errors: [400, 401, 403, 413, 415],
  },
  {
    method: 'get',
    path: '/v1/keys',
    summary: "The account's keys",
    tag: 'Keys',
    auth: 'session',
    ok: { status: 200, description: 'Key list.', schema: 'ApiKeyList' },
    errors: [401, 403],
  },
  {
    method: 'get',
    path: '/v1/keys/{id}',
    summary: 'One key',
    tag: 'Keys',
    auth: 'session',
    ok: { status: 200, description: 'The key.', schema: 'ApiKey' },
    errors: KEY_ERRORS,
  },
  {
    method: 'patch',
    path: '/v1/keys/{id}',
    summary: 'Rename a key or set its monthly spend limit',
    tag: 'Keys',
    auth: 'session',
    body: 'UpdateKeyRequest',
    ok: { status: 200, description: 'The key.', schema: 'ApiKey' },
    errors: [...KEY_ERRORS, 409, 413, 415],
  },
  {
    method: 'delete',
    path: '/v1/keys/{id}',
    summary: 'Revoke a key (idempotent)',
    tag: 'Keys',
    auth: 'session',
    ok: { status: 200, description: 'The key, revoked_at set.', schema: 'ApiKey' },
    errors: KEY_ERRORS,
  },
  {
    method: 'get',
    path: '/v1/keys/{id}/events',
    summary: "A key's history, newest first",
    tag: 'Keys',
    auth: 'session',
    query: { limit: 'Page size, 1 to 100 (default 20).', after: 'An event id: the page starts after it.' },
    ok: { status: 200, description: 'A page of key events.', schema: 'KeyEventPage' },
    errors: KEY_ERRORS,
  },

  // Usage
  {
    method: 'get',
    path: '/v1/key',
    summary: "The calling key's own month spend, limit and what is left, and its account's balance (for tools that cannot sign in)",
    tag: 'Keys',
    auth: 'apiKey',
    ok: { status: 200, description: 'The key and its spend.', schema: 'KeyStatus' },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: '/v1/usage/requests.csv',
    summary: "The account's request log as CSV, newest first, streamed (every matching row)",
    tag: 'Keys',
    auth: 'session',
    query: {
      key_id: 'Only this key.',
      model: 'Only this service model id.',
      status: 'ok, partial or failed.',
      from: 'Unix seconds, inclusive.',
      to: 'Unix seconds, exclusive.',
    },
    ok: { status: 200, description: 'text/csv: a header line, then one line per request.', contentType: 'text/csv' },
    errors: [400, 401, 403, 404],
  },

  // Operations
  {
    method: 'get',
    path: '/v1/openapi.json',
    summary: 'This document',
    tag: 'Operations',
    auth: 'none',
    ok: { status: 200, description: 'OpenAPI 3.1 document.', schema: 'OpenApiDocument' },
    errors: [],
  },
  {
    method: 'get',
    path: '/healthz',
    summary: 'Process alive',
    tag: 'Operations',
    auth: 'none',
    ok: { status: 200, description: 'Alive.', schema: 'Status' },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Database reachable and migrated (503 otherwise)',
    tag: 'Operations',
    auth: 'none',
    ok: { status: 200, description: 'Ready.', schema: 'Status' },
    errors: [503],
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics (operator token)',
    tag: 'Operations',
    auth: 'operator',
    ok: { status: 200, description: 'Prometheus text exposition format.', contentType: 'text/plain; version=0.0.4' },
    errors: [401, 404],
  },
  {
    method: 'get',
    path: '/dashboard',
    summary: 'The browser dashboard (a web page over the GraphQL plane; its files and app routes live under this path)',
    tag: 'Operations',
    auth: 'none',
    ok: { status: 200, description: 'The dashboard page or one of its files.', contentType: 'text/html' },
    errors: [404],
  },
  {
    method: 'post',
    path: '/graphql',
    summary: 'GraphQL (sessions and operator); also graphql-ws subscriptions on the same path',
    tag: 'Operations',
    auth: 'session',
    body: 'GraphqlRequest',
    ok: { status: 200, description: 'A GraphQL result.', schema: 'GraphqlResult' },
    errors: [400, 415],
  },
];
