import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ADMIN_TOKEN, call, graphql, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * The GraphQL API loads on its first request, HTTP or WebSocket, not at startup (graphql/lazy.ts):
 * an instance that serves only the REST plane never holds it. Requests that arrive while it
 * loads all wait for the one load and are answered.
 */
let tollgate: TestTollgate;

beforeAll(async () => {
  tollgate = await startTestTollgate();
});
afterAll(async () => {
  await tollgate?.stop();
});

function wsQuery(query: string): Promise<unknown> {
  return wsQueryAt(tollgate.url, query);
}

function wsQueryAt(url: string, query: string): Promise<unknown> {
  const client = createClient({
    url: `${url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${ADMIN_TOKEN}` },
    retryAttempts: 0,
  });
  return new Promise<unknown>((resolve, reject) => {
    let result: unknown;
    client.subscribe(
      { query },
      {
        next: (value) => (result = value),
        error: reject,
        complete: () => resolve(result),
      },
    );
  }).finally(() => client.dispose());
}

test('the REST plane serves without loading GraphQL; the first GraphQL requests, WebSocket and HTTP at once, load it once and are all answered', async () => {
  expect((await call(`${tollgate.url}/v1/models`)).status).toBe(401);
  expect(tollgate.tollgate.graphqlLoaded()).toBe(false);

  const [overWebSocket, first, second] = await Promise.all([
    wsQuery('{ __typename }'),
    graphql(tollgate.url, '{ __typename }', {}, ADMIN_TOKEN),
    graphql(tollgate.url, 'mutation($n:String!){createAccount(input:{name:$n}){id}}', { n: 'lazy' }, ADMIN_TOKEN),
  ]);
  expect(tollgate.tollgate.graphqlLoaded()).toBe(true);
  expect(overWebSocket).toEqual({ data: { __typename: 'Query' } });
  expect(first).toEqual({ data: { __typename: 'Query' } });
  expect(second.errors).toBeUndefined();
  expect(second.data.createAccount.id).toEqual(expect.any(String));
  // Once loaded, an invalid operation is still GraphQL's answer (not a load failure).
  const invalid = await graphql(tollgate.url, '{ noSuchField }', {}, ADMIN_TOKEN);
  expect(invalid.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
});

test('a WebSocket to any other path is refused (404) without loading GraphQL', async () => {
  const fresh = await startTestTollgate();
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${fresh.url.replace('http', 'ws')}/v1/realtime`);
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.on('open', () => reject(new Error('the upgrade was accepted')));
      socket.on('error', () => undefined);
    });
    expect(status).toBe(404);
    expect(fresh.tollgate.graphqlLoaded()).toBe(false);
    // /graphql itself still upgrades (and loads the API).
    expect(await wsQueryAt(fresh.url, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
    expect(fresh.tollgate.graphqlLoaded()).toBe(true);
  } finally {
    await fresh.stop();
  }
});
