import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ADMIN_TOKEN, createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * No answer of any plane shows a stack or a path of the server, whatever NODE_ENV says: jest
 * runs with NODE_ENV=test (where Apollo hides stacks by itself), so each gateway here is built
 * with NODE_ENV as `npm start` leaves it (unset) or as a developer may set it.
 */
const ROOT = process.cwd();

function expectNoInternals(where: string, text: string): void {
  const leaks = [
    /stacktrace/i,
    /\bat [\w.<>]+ \(/, // a stack frame: "at parseValue (file:1:2)"
    /\.(?:js|ts|cjs|mjs):\d+:\d+/,
    /node_modules/,
    new RegExp(ROOT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
  ].filter((pattern) => pattern.test(text));
  expect({ where, leaks: leaks.map(String), text: leaks.length ? text.slice(0, 500) : '' }).toEqual({ where, leaks: [], text: '' });
}

async function text(url: string, init: RequestInit = {}): Promise<string> {
  const response = await fetch(url, init);
  return `${response.status} ${await response.text()}`;
}

/** A raw HTTP request (for what fetch refuses to send). */
function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

const json = (body: unknown, token?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

function multipart(token: string, parts: Array<[string, string | Blob]>): RequestInit {
  const form = new FormData();
  for (const [name, value] of parts) form.append(name, value);
  return { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form };
}

describe.each([
  ['unset (npm start)', undefined],
  ['development', 'development'],
])('NODE_ENV %s', (_name, nodeEnv) => {
  let t: TestTollgate;
  let session: string;
  let apiKey: string;
  const logLines: string[] = [];
  const consoleErrors = jest.spyOn(console, 'error');

  beforeAll(async () => {
    consoleErrors.mockClear();
    const saved = process.env.NODE_ENV;
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    try {
      const sink = new Writable({
        write: (chunk: Buffer, _encoding, done) => (logLines.push(...chunk.toString().split('\n').filter(Boolean)), done()),
      });
      t = await startTestTollgate({ log: pino({ level: 'debug' }, sink) });
    } finally {
      process.env.NODE_ENV = saved;
    }
    const account = await provisionAccount(t.url, { fundsMicro: '5000000' });
    session = account.sessionToken;
    apiKey = (await createKey(t.url, session)).secret;
  });
  afterAll(() => t?.stop());

  // Bad input is never a defect: nothing at error level, no stack in any line, nothing printed around the logger.
  afterAll(() => {
    expect(logLines.filter((line) => (JSON.parse(line) as { level: number }).level >= 50)).toEqual([]);
    for (const line of logLines) expectNoInternals('log line', line);
    expect(consoleErrors.mock.calls).toEqual([]);
  });

  test('REST /v1 routes, text endpoints and multipart', async () => {
    const u = t.url;
    const answers: Array<[string, Promise<string>]> = [
      ['unknown path', text(`${u}/v1/nope`)],
      ['sign-in, bad JSON', text(`${u}/v1/auth/sessions`, json('{"email":'))],
      ['sign-in, wrong types', text(`${u}/v1/auth/sessions`, json({ email: 1, password: [] }))],
      ['keys, no credential', text(`${u}/v1/keys`)],
      ['keys, bad JSON', text(`${u}/v1/keys`, json('[1,', session))],
      ['keys, an array body', text(`${u}/v1/keys/key_nope`, { ...json([], session), method: 'PATCH' })],
      ['keys, bad limit query', text(`${u}/v1/keys/key_nope/events?limit=x`, { headers: { authorization: `Bearer ${session}` } })],
      ['models, API key as session', text(`${u}/v1/keys`, { headers: { authorization: `Bearer ${apiKey}` } })],
      ['chat, bad JSON', text(`${u}/v1/chat/completions`, json('{"model":', apiKey))],
      ['chat, unknown field', text(`${u}/v1/chat/completions`, json({ model: 'sandbox/echo', messages: [], bogus: 1 }, apiKey))],
      [
        'chat, unknown model',
        text(`${u}/v1/chat/completions`, json({ model: 'nope/nope', messages: [{ role: 'user', content: 'hi' }] }, apiKey)),
      ],
      [
        'chat, wrong content type',
        text(`${u}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'text/plain' },
          body: 'hi',
        }),
      ],
      [
        'messages, no max_tokens',
        text(`${u}/v1/messages`, json({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] }, apiKey)),
      ],
      ['responses, input of a wrong type', text(`${u}/v1/responses`, json({ model: 'sandbox/echo', input: 42 }, apiKey))],
      ['images, bad JSON', text(`${u}/v1/images/generations`, json('{', apiKey))],
      [
        'image edit, no image part',
        text(
          `${u}/v1/images/edits`,
          multipart(apiKey, [
            ['prompt', 'x'],
            ['model', 'sandbox/image'],
          ]),
        ),
      ],
      [
        'image edit, not an image',
        text(
          `${u}/v1/images/edits`,
          multipart(apiKey, [
            ['prompt', 'x'],
            ['model', 'sandbox/image'],
            ['image', new Blob(['not a png'], { type: 'image/png' })],
          ]),
        ),
      ],
      [
        'image edit, a broken multipart body',
        text(`${u}/v1/images/edits`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'multipart/form-data; boundary=xyz' },
          body: '--xyz\r\nbroken',
        }),
      ],
      ['videos, bad JSON', text(`${u}/v1/videos`, json('{', apiKey))],
      ['video content, unknown id', text(`${u}/v1/videos/video_nope/content`, { headers: { authorization: `Bearer ${apiKey}` } })],
      ['malformed HTTP', raw(u, 'GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n')],
    ];
    for (const [where, answer] of answers) expectNoInternals(where, await answer);
  });

  test('GraphQL over HTTP: parse, validation, CSRF, variables, credentials, limits', async () => {
    const g = `${t.url}/graphql`;
    const answers: Array<[string, Promise<string>]> = [
      ['parse error', text(g, json({ query: '{ me { ' }, session))],
      ['validation error', text(g, json({ query: '{ nope }' }, session))],
      ['CSRF: a GET without a preflight header', text(`${g}?query=${encodeURIComponent('{ me { id } }')}`)],
      [
        'variables of a wrong type',
        text(g, json({ query: 'query($id: ID!) { key(id: $id) { id } }', variables: { id: { a: 1 } } }, session)),
      ],
      ['variables not an object', text(g, json({ query: '{ me { id } }', variables: 5 }, session))],
      ['no query', text(g, json({}, session))],
      ['a batch', text(g, json([{ query: '{ me { id } }' }], session))],
      ['operator operation with a session', text(g, json({ query: 'mutation { createAccount(input: { name: "x" }) { id } }' }, session))],
      ['session operation with the operator token', text(g, json({ query: '{ me { id } }' }, ADMIN_TOKEN))],
      ['a depth over the limit', text(g, json({ query: `{ me { ${'a { '.repeat(40)}${' }'.repeat(40)} } }` }, session))],
      ['bad JSON', text(g, json('{"query":', session))],
    ];
    for (const [where, answer] of answers) expectNoInternals(where, await answer);
  });

  test('GraphQL over WebSocket: parse and validation errors, refused credentials, a broken frame', async () => {
    const wsUrl = `${t.url.replace('http', 'ws')}/graphql`;
    const seen: string[] = [];
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${session}` },
      retryAttempts: 0,
    });
    const run = (query: string) =>
      new Promise<void>((resolve) => {
        client.subscribe(
          { query },
          { next: (m) => seen.push(JSON.stringify(m)), error: (e) => (seen.push(JSON.stringify(e)), resolve()), complete: resolve },
        );
      });
    await run('subscription { videoUpdated( }');
    await run('subscription { nope }');
    await run('subscription { keyEvents(keyId: "key_nope") { id } }');
    await client.dispose();

    const anonymous = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: 'Bearer tgs_wrong' },
      retryAttempts: 0,
    });
    await new Promise<void>((resolve) => {
      anonymous.subscribe(
        { query: 'subscription { videoUpdated { id } }' },
        { next: (m) => seen.push(JSON.stringify(m)), error: (e) => (seen.push(JSON.stringify(e)), resolve()), complete: resolve },
      );
    });
    await anonymous.dispose();

    // A frame that is not JSON, then one over the size limit: the close reasons say nothing of the server.
    for (const payload of ['{not json', 'x'.repeat(2 * 1024 * 1024)]) {
      const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
      await new Promise<void>((resolve) => socket.once('open', () => resolve()));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${session}` } }));
      socket.send(payload);
      seen.push(await new Promise<string>((resolve) => socket.once('close', (code, reason) => resolve(`${code} ${reason.toString()}`))));
    }
    expect(seen.length).toBeGreaterThanOrEqual(5);
    for (const answer of seen) expectNoInternals('graphql-ws', answer);
  });

  test('dashboard and metrics', async () => {
    const u = t.url;
    const answers: Array<[string, Promise<string>]> = [
      ['dashboard, unknown asset', text(`${u}/dashboard/assets/nope.js`)],
      ['dashboard, a path that climbs', raw(u, 'GET /dashboard/../../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')],
      ['dashboard, an encoded NUL', text(`${u}/dashboard/%00`)],
      ['dashboard, a malformed escape', text(`${u}/dashboard/%E0%A4%A`)],
      ['metrics, no token', text(`${u}/metrics`)],
      ['metrics, a wrong token', text(`${u}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })],
      ['metrics, an API key', text(`${u}/metrics`, { headers: { authorization: `Bearer ${apiKey}` } })],
    ];
    for (const [where, answer] of answers) expectNoInternals(where, await answer);
  });
});
