import { call, createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * CORS over real HTTP, as a browser sends it: preflights of the API-key endpoints are answered
 * (any origin by default, or the configured ones), answers carry the headers a page may read,
 * and the session and operator planes stay same-origin unless configured. The browser's own
 * enforcement is test/e2e/cors-browser.test.ts.
 */

const PAGE = 'https://chat.example.com';

function preflight(
  url: string,
  origin: string,
  method = 'POST',
  headers = 'authorization, content-type, x-stainless-os, openai-organization',
) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

describe('default: any origin on the API-key endpoints, same-origin elsewhere', () => {
  let t: TestTollgate;
  let key: string;
  let session: string;
  beforeAll(async () => {
    t = await startTestTollgate();
    const account = await provisionAccount(t.url, { fundsMicro: '10000000' });
    session = account.sessionToken;
    key = (await createKey(t.url, account.sessionToken)).secret;
  });
  afterAll(async () => t?.stop());

  test.each([
    '/v1/chat/completions',
    '/v1/responses',
    '/v1/messages',
    '/v1/images/generations',
    '/v1/videos',
    '/v1/videos/vid_1',
    '/v1/models',
    '/v1/models/sandbox%2Fecho',
  ])('a preflight of %s is answered 204 with the methods and the headers asked for', async (path) => {
    const res = await preflight(`${t.url}${path}`, PAGE);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os, openai-organization');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  test('an answer to a page exposes the headers clients read, refusals included', async () => {
    const ok = await call(`${t.url}/v1/chat/completions`, {
      token: key,
      headers: { origin: PAGE },
      body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = ok.headers.get('access-control-expose-headers')!.split(', ');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-request-id',
        'x-ratelimit-remaining-requests',
        'x-ratelimit-reset-tokens',
        'x-service-model-routed-from',
        'retry-after',
      ]),
    );
    const refused = await call(`${t.url}/v1/responses`, { headers: { origin: PAGE }, body: { model: 'sandbox/echo', input: 'Hi' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const streamed = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { origin: PAGE, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox/echo', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(streamed.headers.get('access-control-allow-origin')).toBe('*');
    await streamed.text();
  });

  test('the session and operator planes answer no CORS headers: preflights are not answered', async () => {
    for (const path of ['/v1/keys', '/v1/auth/sessions', '/graphql', '/metrics']) {
      const res = await preflight(`${t.url}${path}`, PAGE);
      expect(res.status).not.toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    const keys = await call(`${t.url}/v1/keys`, { token: session, headers: { origin: PAGE } });
    expect(keys.status).toBe(200);
    expect(keys.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a request without Origin gets no CORS headers; an OPTIONS without a requested method is no preflight', async () => {
    const plain = await call(`${t.url}/v1/models`, { token: key });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const options = await fetch(`${t.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: PAGE } });
    expect(options.status).toBe(404);
  });

  test('requested headers that are not header names are not echoed', async () => {
    const res = await preflight(`${t.url}/v1/responses`, PAGE, 'POST', 'authorization, bad header:x');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toBeNull();
  });
});

describe('configured origins', () => {
  let t: TestTollgate;
  beforeAll(async () => {
    t = await startTestTollgate({
      env: { TOLLGATE_CORS_ORIGINS: `${PAGE}, http://localhost:5173`, TOLLGATE_CORS_SESSION_ORIGINS: 'https://admin.example.com' },
    });
  });
  afterAll(async () => t?.stop());

  test('a listed origin is echoed (Vary: Origin); another is not answered', async () => {
    const allowed = await preflight(`${t.url}/v1/chat/completions`, 'http://localhost:5173');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(allowed.headers.get('vary')).toBe('Origin');
    const other = await preflight(`${t.url}/v1/chat/completions`, 'https://evil.example.net');
    expect(other.status).toBe(404);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('vary')).toBe('Origin');
  });

  test('the session plane answers its own configured origins only', async () => {
    const admin = await preflight(`${t.url}/graphql`, 'https://admin.example.com');
    expect(admin.status).toBe(204);
    expect(admin.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(admin.headers.get('access-control-allow-methods')).toBe('GET, POST, PATCH, DELETE');
    expect((await preflight(`${t.url}/graphql`, PAGE)).headers.get('access-control-allow-origin')).toBeNull();
  });
});
