import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createTestDatabase } from '../support/database';
import { openaiClient } from '../support/text';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount } from '../support/tollgate';

/**
 * OpenTelemetry traces, on because OTEL_EXPORTER_OTLP_ENDPOINT names a local HTTP server that
 * receives them as OTLP/HTTP JSON, as a collector would: one server span per request, a client
 * span per vendor call under it, GenAI attributes with the answer's own usage. The gateway runs
 * in its own process (test/support/gateway-process.ts): the exporter loads node:http through a
 * dynamic import, which jest's module sandbox does not allow.
 */

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
}

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

let collector: Server;
const received: { path: string; contentType: string; spans: OtlpSpan[]; service: string }[] = [];
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let gateway: ChildProcess;
let url: string;
let account: { keyId: string; secret: string; sessionToken: string };

async function stopGateway(): Promise<void> {
  if (gateway.exitCode !== null) return;
  const exited = once(gateway, 'exit');
  gateway.send({ type: 'stop' });
  await exited;
}

function plain(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return value.arrayValue.values.map(plain);
  return undefined;
}
const attributesOf = (span: OtlpSpan): Record<string, unknown> => Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const payload = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const resource of payload.resourceSpans) {
        const service = String(plain(resource.resource.attributes.find((x) => x.key === 'service.name')!.value));
        received.push({
          path: req.url!,
          contentType: req.headers['content-type'] ?? '',
          service,
          spans: resource.scopeSpans.flatMap((s) => s.spans),
        });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const port = (collector.address() as AddressInfo).port;
  db = await createTestDatabase();
  gateway = fork(join(__dirname, '..', 'support', 'gateway-process.ts'), [], {
    execArgv: ['-r', join(__dirname, '..', 'support', 'swc-register.js')],
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_SERVICE_NAME: 'tollgate-under-test',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [message] = (await once(gateway, 'message')) as [{ port: number }];
  url = `http://127.0.0.1:${message.port}`;
  const provisioned = await provisionAccount(url, { fundsMicro: '100000000' });
  await graphql(url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: provisioned.accountId }, ADMIN_TOKEN);
  const key = await createKey(url, provisioned.sessionToken);
  account = { keyId: key.id, secret: key.secret, sessionToken: provisioned.sessionToken };
});

afterAll(async () => {
  await stopGateway();
  await db.drop();
  await new Promise((resolve) => collector.close(resolve));
});

test('a request span with a vendor-call child carrying GenAI attributes, exported on close', async () => {
  const openai = openaiClient(url, account.secret);
  const completion = await openai.chat.completions.create(
    { model: 'sandbox/echo', messages: [{ role: 'user', content: 'trace me, please' }], max_completion_tokens: 200 },
    { headers: { 'x-request-id': 'trace-ok-1' } },
  );
  const failed = await openai.chat.completions
    .create(
      { model: 'sandbox/echo', messages: [{ role: 'user', content: '[sandbox:fail] hi' }] },
      { headers: { 'x-request-id': 'trace-fail-1' } },
    )
    .catch((e: unknown) => e);
  expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  expect((await call(`${url}/v1/keys/${account.keyId}`, { token: account.sessionToken })).status).toBe(200);
  await stopGateway(); // flushes what the batch processor holds

  expect(received.length).toBeGreaterThan(0);
  expect(
    received.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json') && r.service === 'tollgate-under-test'),
  ).toBe(true);
  const spans = received.flatMap((r) => r.spans);
  const requestSpan = (id: string) => spans.find((s) => s.kind === SERVER && attributesOf(s)['tollgate.request_id'] === id)!;
  const childOf = (parent: OtlpSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);

  const ok = requestSpan('trace-ok-1');
  expect(ok.name).toBe('POST /v1/chat/completions');
  expect(attributesOf(ok)).toMatchObject({
    'http.request.method': 'POST',
    'http.route': '/v1/chat/completions',
    'http.response.status_code': 200,
    'tollgate.model': 'sandbox/echo',
  });
  const [vendorCall, ...others] = childOf(ok);
  expect(others).toEqual([]);
  expect(vendorCall!.traceId).toBe(ok.traceId);
  expect(vendorCall!.kind).toBe(CLIENT);
  expect(vendorCall!.name).toBe('chat sandbox/echo');
  expect(attributesOf(vendorCall!)).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'sandbox',
    'gen_ai.system': 'sandbox',
    'gen_ai.request.model': 'sandbox/echo',
    'gen_ai.response.model': 'sandbox/echo',
    'gen_ai.request.max_tokens': 200,
    'gen_ai.usage.input_tokens': completion.usage!.prompt_tokens,
    'gen_ai.usage.output_tokens': completion.usage!.completion_tokens,
    'gen_ai.response.finish_reasons': ['stop'],
  });

  const fail = requestSpan('trace-fail-1');
  expect(attributesOf(fail)).toMatchObject({ 'http.response.status_code': 502, 'error.type': 'provider_error' });
  expect(fail.status?.code).toBe(STATUS_ERROR);
  const [failedCall] = childOf(fail);
  expect(failedCall!.status?.code).toBe(STATUS_ERROR);
  expect(attributesOf(failedCall!)['error.type']).toBe('provider_error');

  // Routes are named by their pattern, never by a path with an id in it.
  const names = spans.map((s) => s.name);
  expect(names).toContain('GET /v1/keys/{id}');
  expect(names.some((n) => n.includes(account.keyId))).toBe(false);
});
