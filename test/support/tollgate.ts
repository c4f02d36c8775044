import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { loadConfig } from '../../src/config';
import type { Clock } from '../../src/domain/shared/clock';
import { createTollgate, type Tollgate } from '../../src/server';
import { createTestDatabase } from './database';

export const ADMIN_TOKEN = 'test-operator-token-0123456789';

export interface TestTollgate {
  url: string;
  tollgate: Tollgate;
  databaseUrl: string;
  stop(): Promise<void>;
}

/**
 * A real Tollgate over real HTTP on an ephemeral port, with its own fresh database, and its
 * video files in a temporary directory that stop() removes (never the checkout's .tollgate).
 */
export async function startTestTollgate(
  options: { env?: Record<string, string>; clock?: Clock; databaseUrl?: string; log?: Logger; sessionCheckIntervalMs?: number } = {},
): Promise<TestTollgate> {
  const db = options.databaseUrl ? null : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? db!.url;
  // File storage only: a test of S3 storage (TOLLGATE_VIDEO_STORAGE=s3) names its own bucket.
  const videoDir =
    options.env?.TOLLGATE_VIDEO_DIR || options.env?.TOLLGATE_VIDEO_STORAGE === 's3'
      ? null
      : mkdtempSync(join(tmpdir(), 'tollgate-test-videos-'));
  const cleanUp = async () => {
    await db?.drop();
    if (videoDir) rmSync(videoDir, { recursive: true, force: true });
  };
  let tollgate: Tollgate | undefined;
  let port: number;
  try {
    const config = loadConfig({
      TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      ...(videoDir ? { TOLLGATE_VIDEO_DIR: videoDir } : {}),
      ...options.env,
    });
    tollgate = await createTollgate({
      config,
      databaseUrl,
      clock: options.clock,
      sessionCheckIntervalMs: options.sessionCheckIntervalMs,
      log: options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    });
    port = await tollgate.listen(0, '127.0.0.1');
  } catch (error) {
    // A start that fails (a test of a bad setting) leaves nothing behind.
    await tollgate?.close(0);
    await cleanUp();
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    tollgate: tollgate!,
    databaseUrl,
    stop: async () => {
      await tollgate!.close(2_000);
      await cleanUp();
    },
  };
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** One HTTP call; the body is parsed as JSON when it is JSON. */
export async function call<T = any>(
  url: string,
  init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? (init.body !== undefined || init.rawBody !== undefined ? 'POST' : 'GET'),
    headers,
    body: init.rawBody ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, headers: response.headers, body: body as T };
}

export async function graphql<T = any>(
  baseUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<{ data: T; errors?: { message: string; extensions: { code: string; details?: unknown } }[] }> {
  const response = await call(`${baseUrl}/graphql`, { body: { query, variables }, token });
  return response.body;
}

/** Provisions an account, funds it and signs a user in, all through the operator and REST APIs. */
export async function provisionAccount(baseUrl: string, options: { fundsMicro?: string; plan?: string | null; email?: string } = {}) {
  const account = await graphql(baseUrl, 'mutation($n:String!){createAccount(input:{name:$n}){id}}', { n: 'Test account' }, ADMIN_TOKEN);
  const accountId: string = account.data.createAccount.id;
  if (options.fundsMicro) {
    await graphql(
      baseUrl,
      'mutation($a:ID!,$m:String!){addFunds(input:{accountId:$a,amountMicro:$m}){id}}',
      { a: accountId, m: options.fundsMicro },
      ADMIN_TOKEN,
    );
  }
  const email = options.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery staple';
  const user = await graphql(
    baseUrl,
    'mutation($a:ID!,$e:String!,$p:String!,$plan:String){createUser(input:{accountId:$a,email:$e,password:$p,plan:$plan}){id}}',
    { a: accountId, e: email, p: password, plan: options.plan ?? null },
    ADMIN_TOKEN,
  );
  if (user.errors) throw new Error(JSON.stringify(user.errors));
  const session = await call(`${baseUrl}/v1/auth/sessions`, { body: { email, password } });
  return { accountId, userId: user.data.createUser.id as string, email, password, sessionToken: session.body.token as string };
}

export async function createKey(
  baseUrl: string,
  sessionToken: string,
  body: Record<string, unknown> = { name: 'test key' },
): Promise<{ id: string; secret: string }> {
  const created = await call(`${baseUrl}/v1/keys`, { token: sessionToken, body });
  if (created.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(created.body)}`);
  return { id: created.body.id, secret: created.body.secret };
}

/**
 * Waits (bounded) until the instance at `baseUrl` serves `count` GraphQL subscriptions: a
 * graphql-ws subscribe has no acknowledgement, so this is how a test knows the server listens.
 */
export async function waitForSubscriptions(baseUrl: string, count: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metrics = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
    const live = Number(/^tollgate_graphql_subscriptions (\d+)$/m.exec(metrics)?.[1] ?? NaN);
    if (live === count) return;
    if (Date.now() > deadline) throw new Error(`${baseUrl} serves ${live} GraphQL subscriptions, not ${count}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
