import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { call, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/** Hostile GraphQL documents are refused while being validated: before any resolver or database work. */
let t: TestTollgate;
let session: string;

beforeAll(async () => {
  t = await startTestTollgate();
  session = (await provisionAccount(t.url, { fundsMicro: '1000000' })).sessionToken;
});
afterAll(async () => t?.stop());

const codeOf = (body: { errors?: { extensions?: { code?: string } }[] }) => body.errors?.[0]?.extensions?.code;

test('an ordinary query with a few aliases is answered', async () => {
  const r = await graphql(t.url, '{ a: account { id } b: account { balanceMicro } keys { id } }', {}, session);
  expect(r.errors).toBeUndefined();
  expect(r.data.a.id).toBe(r.data.b ? r.data.a.id : null);
});

test.each([
  [100, 'GRAPHQL_VALIDATION_FAILED', /alias/i],
  // 500 aliases are past the token bound already: refused while parsing, cheaper still.
  [500, 'GRAPHQL_PARSE_FAILED', /token/i],
])('%d aliases of one field are refused without being resolved', async (count, code, message) => {
  const query = `{ ${Array.from({ length: count }, (_, i) => `a${i}: account { id }`).join(' ')} }`;
  const r = await call(`${t.url}/graphql`, { token: session, body: { query } });
  expect(r.status).toBe(400);
  expect(codeOf(r.body)).toBe(code);
  expect(r.body.errors[0].message).toMatch(message);
  expect(r.body.data).toBeUndefined();
});

test('a fragment cycle is refused', async () => {
  const query = '{ account { ...A } } fragment A on Account { id ...B } fragment B on Account { id ...A }';
  const r = await call(`${t.url}/graphql`, { token: session, body: { query } });
  expect(r.status).toBe(400);
  expect(codeOf(r.body)).toBe('GRAPHQL_VALIDATION_FAILED');
});

test('a document too deep is refused', async () => {
  // Introspection types nest as deep as one likes: ofType { ofType { … } }.
  const deep = 'name ' + 'ofType { name '.repeat(14) + '}'.repeat(14);
  const r = await call(`${t.url}/graphql`, {
    token: session,
    body: { query: `{ __type(name: "Account") { fields { type { ${deep} } } } }` },
  });
  expect(r.status).toBe(400);
  expect(r.body.errors[0].message).toMatch(/depth/i);
});

test('a document of too many tokens is refused while parsing', async () => {
  const query = `{ account { ${'id '.repeat(3000)} } }`;
  const r = await call(`${t.url}/graphql`, { token: session, body: { query } });
  expect(r.status).toBe(400);
  expect(r.body.errors[0].message).toMatch(/token/i);
});

test('batched operations are refused: one operation per request', async () => {
  const r = await call(`${t.url}/graphql`, {
    token: session,
    rawBody: JSON.stringify([{ query: '{ account { id } }' }, { query: '{ account { id } }' }]),
    headers: { 'content-type': 'application/json' },
  });
  expect(r.status).toBe(400);
});

test('over graphql-ws the same limits hold', async () => {
  const port = new URL(t.url).port;
  const client = createClient({
    url: `ws://127.0.0.1:${port}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${session}` },
    retryAttempts: 0,
  });
  try {
    const query = `{ ${Array.from({ length: 100 }, (_, i) => `a${i}: account { id }`).join(' ')} }`;
    const errors = await new Promise<readonly { message: string }[]>((resolve, reject) => {
      client.subscribe(
        { query },
        {
          next: () => reject(new Error('answered')),
          error: (e) => resolve(e as never),
          complete: () => reject(new Error('completed without error')),
        },
      );
    });
    expect(errors[0]!.message).toMatch(/alias/i);
  } finally {
    await client.dispose();
  }
});

test('introspection can be switched off', async () => {
  const closed = await startTestTollgate({ env: { TOLLGATE_GRAPHQL_INTROSPECTION: 'false' } });
  try {
    const r = await call(`${closed.url}/graphql`, { body: { query: '{ __schema { types { name } } }' } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].message).toMatch(/introspection/i);
  } finally {
    await closed.stop();
  }
});
