import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * Input an attacker sends: every answer is an envelope with a 4xx, never a 500, never a hang,
 * and an unauthenticated client cannot make the gateway read, decompress or parse its body.
 */
let t: TestTollgate;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
let secret: string;

beforeAll(async () => {
  t = await startTestTollgate();
  owner = await provisionAccount(t.url, { fundsMicro: '5000000' });
  // Every case counts in the request windows, bad bodies included: tier 5's rate limits let them all through.
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: owner.accountId }, ADMIN_TOKEN);
  secret = (await createKey(t.url, owner.sessionToken)).secret;
});
afterAll(async () => t?.stop());

interface RawAnswer {
  status: number;
  body: string;
}

/** One raw request with a 5 s ceiling: a request left without an answer fails the test instead of hanging it. */
function raw(path: string, init: { method?: string; headers?: Record<string, string>; body?: Buffer | string }): Promise<RawAnswer> {
  const url = new URL(path, t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'POST', headers: init.headers, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => {
      req.destroy();
      reject(new Error(`no answer within 5 s: ${init.method ?? 'POST'} ${path}`));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const envelope = (answer: RawAnswer) => JSON.parse(answer.body) as { error: { code: string; message: string } };

describe('a body whose Content-Encoding lies', () => {
  const notCompressed = Buffer.from(JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] }));
  const paths = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/keys', '/graphql'];

  test.each(['br', 'gzip', 'deflate'])('a body declared %s but not so encoded is a 400 on every kind of route', async (encoding) => {
    for (const path of paths) {
      const token = path === '/v1/keys' || path === '/graphql' ? owner.sessionToken : secret;
      const answer = await raw(path, {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': encoding },
        body: notCompressed,
      });
      expect([path, answer.status]).toEqual([path, 400]);
      expect(envelope(answer).error.message).toMatch(/decompress/);
    }
  });

  test('an unknown encoding is a 415', async () => {
    const answer = await raw('/v1/chat/completions', {
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'content-encoding': 'zstd' },
      body: notCompressed,
    });
    expect(answer.status).toBe(415);
    expect(envelope(answer).error.code).toBe('unsupported_media_type');
  });
});

describe("the JSON body's declared charset", () => {
  const body = JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] });
  test.each([
    ['application/json', 200],
    ['application/json; charset=utf-8', 200],
    ['Application/JSON; Charset="UTF8"', 200],
    ['application/json; charset=latin1', 415],
    ['application/json;charset=utf-16', 415],
  ])('%s is answered %p', async (type, status) => {
    const answer = await raw('/v1/chat/completions', { headers: { authorization: `Bearer ${secret}`, 'content-type': type }, body });
    expect(answer.status).toBe(status);
    if (status === 415) expect(envelope(answer).error.message).toMatch(/charset/);
  });
});

describe('NUL and other characters PostgreSQL cannot store', () => {
  test.each([
    ['GET', '/v1/keys/%00'],
    ['PATCH', '/v1/keys/%00'],
    ['DELETE', '/v1/keys/%00'],
    ['GET', '/v1/keys/%00/events'],
    ['GET', '/v1/keys/key_%00abc'],
  ])('%s %s is a 404 not_found', async (method, path) => {
    const answer = await raw(path, {
      method,
      headers: { authorization: `Bearer ${owner.sessionToken}`, 'content-type': 'application/json' },
      body: method === 'PATCH' ? '{"name":"x"}' : undefined,
    });
    expect(answer.status).toBe(404);
    expect(envelope(answer).error.code).toBe('not_found');
  });

  test('an event cursor with a NUL is a 400 naming after', async () => {
    const key = await createKey(t.url, owner.sessionToken);
    const answer = await call(`${t.url}/v1/keys/${key.id}/events?after=%00`, { token: owner.sessionToken });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toEqual({ field: 'after' });
  });

  test('a key name with a NUL is a 400 naming name, over REST and GraphQL', async () => {
    const rest = await call(`${t.url}/v1/keys`, { token: owner.sessionToken, body: { name: 'a\u0000b' } });
    expect(rest.status).toBe(400);
    expect(rest.body.error.message).toMatch(/name/);
    const gql = await graphql(t.url, 'mutation($n:String!){createKey(input:{name:$n}){secret}}', { n: 'a\u0000b' }, owner.sessionToken);
    expect(gql.errors?.[0]?.extensions.code).toBe('bad_request');
    expect(gql.errors?.[0]?.message).toMatch(/name/);
  });

  test('a NUL anywhere else the database would see is a 400, never a 500', async () => {
    const signIn = await call(`${t.url}/v1/auth/sessions`, { body: { email: 'a\u0000@example.com', password: 'whatever123' } });
    expect(signIn.status).toBe(401);
    const gqlKey = await graphql(t.url, 'query($id:ID!){key(id:$id){id}}', { id: '\u0000' }, owner.sessionToken);
    expect(gqlKey.errors).toBeUndefined();
    expect(gqlKey.data.key).toBeNull();
    const gqlAccount = await graphql(t.url, 'query($id:ID!){accountById(id:$id){id}}', { id: 'acct_\u0000' }, ADMIN_TOKEN);
    expect(gqlAccount.errors?.[0]?.extensions.code ?? 'none').not.toBe('internal_error');
  });
});

describe('authentication before any body work', () => {
  // A gzip bomb: 64 MiB of zeros compressed to about 64 KiB. Decompressed, it is far over the
  // 4 MiB body limit; an unauthenticated client must not make the gateway inflate any of it.
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));

  test.each(['/v1/chat/completions', '/v1/responses', '/v1/messages'])(
    '%s answers 401 to a bad key without reading the body',
    async (path) => {
      const answer = await raw(path, {
        headers: { authorization: 'Bearer tgk_wrong', 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: bomb,
      });
      expect(answer.status).toBe(401);
      expect(envelope(answer).error.code).toBe('invalid_token');
    },
  );

  test('a large body the gateway refuses unread still gets its answer, also on a connection the client closes', async () => {
    const large = Buffer.alloc(32 * 1024 * 1024, 0x20);
    for (const path of ['/v1/chat/completions', '/v1/keys', '/v1/images/edits']) {
      for (const connection of ['close', 'keep-alive']) {
        const contentType = path === '/v1/images/edits' ? 'multipart/form-data; boundary=x' : 'application/json';
        const answer = await raw(path, {
          headers: { authorization: 'Bearer tgk_wrong', 'content-type': contentType, connection },
          body: large,
        });
        expect([path, connection, answer.status]).toEqual([path, connection, 401]);
      }
    }
  });

  test('invalid JSON with a bad key is a 401, not a 400: the key is checked first', async () => {
    for (const path of ['/v1/chat/completions', '/v1/keys']) {
      const answer = await raw(path, {
        headers: { authorization: 'Bearer tgk_wrong', 'content-type': 'application/json' },
        body: '{not json',
      });
      expect([path, answer.status]).toEqual([path, 401]);
    }
  });
});

describe('what the HTTP parser refuses', () => {
  function rawSocket(bytes: string): Promise<string> {
    const url = new URL(t.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), '127.0.0.1', () => socket.write(bytes));
      let got = '';
      socket.on('data', (d) => (got += d));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
      socket.setTimeout(5_000, () => reject(new Error('no answer')));
    });
  }

  test('a request line that is not HTTP is a 400 in the envelope', async () => {
    const answer = await rawSocket('\u0080\u0001 not http at all\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!).error.code).toBe('bad_request');
  });

  test('headers too large are a 431 in the envelope', async () => {
    const answer = await rawSocket(`GET /healthz HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!).error.message).toMatch(/headers/);
  });

  test('a body longer than its Content-Length: the request is answered, the rest is refused and closes the connection', async () => {
    const answer = await rawSocket(`GET /healthz HTTP/1.1\r\nHost: x\r\ncontent-length: 1\r\n\r\nab\u0080`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    // The broken rest gets a 400 when the first answer had already left, none when it was still being made.
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
    expect(['200', '200,400']).toContain(statuses.join(','));
  });
});
