import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/** Malformed text requests: always a 4xx envelope naming the problem, never a 500, never a charge. */
let t: TestTollgate;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
let secret: string;

beforeAll(async () => {
  t = await startTestTollgate();
  owner = await provisionAccount(t.url, { fundsMicro: '5000000' });
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: owner.accountId }, ADMIN_TOKEN);
  secret = (await createKey(t.url, owner.sessionToken)).secret;
});
afterAll(async () => t?.stop());

const user = [{ role: 'user', content: 'hi' }];
const cases: [string, string, unknown, RegExp][] = [
  ['chat', '/v1/chat/completions', null, /body|object|model/],
  ['chat', '/v1/chat/completions', [], /object/],
  ['chat', '/v1/chat/completions', 'text', /object/],
  ['chat', '/v1/chat/completions', {}, /model/],
  ['chat', '/v1/chat/completions', { model: 42, messages: user }, /model/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo' }, /messages/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: {} }, /messages/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: [] }, /messages/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: [null] }, /messages\[0\]/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: [{ role: 'wizard', content: 'x' }] }, /messages\[0\]\.role/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: [{ role: 'user', content: 7 }] }, /messages\[0\]\.content/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, stream: 'yes' }, /stream/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, max_tokens: 2.5 }, /max_tokens/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, temperature: 'hot' }, /temperature/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, tools: 'none' }, /tools/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, tools: [{ type: 'function' }] }, /tools\[0\]/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, stop: [1, 2] }, /stop/],
  ['chat', '/v1/chat/completions', { model: 'sandbox/echo', messages: user, response_format: { type: 'yaml' } }, /response_format/],
  ['responses', '/v1/responses', { model: 'sandbox/echo' }, /input/],
  ['responses', '/v1/responses', { model: 'sandbox/echo', input: 5 }, /input/],
  ['responses', '/v1/responses', { model: 'sandbox/echo', input: [{ type: 'mystery' }] }, /input\[0\]/],
  ['responses', '/v1/responses', { model: 'sandbox/echo', input: 'hi', max_output_tokens: -1 }, /max_output_tokens/],
  ['responses', '/v1/responses', { model: 'sandbox/echo', input: 'hi', reasoning: { effort: 'maximum' } }, /reasoning\.effort/],
  ['messages', '/v1/messages', { model: 'sandbox/echo', messages: user }, /max_tokens/],
  [
    'messages',
    '/v1/messages',
    { model: 'sandbox/echo', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image' }] }] },
    /messages\[0\]\.content\[0\]/,
  ],
  [
    'messages',
    '/v1/messages',
    { model: 'sandbox/echo', max_tokens: 10, messages: user, thinking: { type: 'enabled', budget_tokens: 'lots' } },
    /thinking\.budget_tokens/,
  ],
  ['messages', '/v1/messages', { model: 'sandbox/echo', max_tokens: 10, messages: user, system: 5 }, /system/],
];

test.each(cases)('%s %s with %j is a 400 naming the field', async (_format, path, body, field) => {
  const r = await call(`${t.url}${path}`, {
    token: secret,
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('bad_request');
  expect(r.body.error.message).toMatch(field);
});

test('nothing was reserved or charged by any of them', async () => {
  const account = await graphql(t.url, '{ account { balanceMicro reservedMicro } }', {}, owner.sessionToken);
  expect(account.data.account).toEqual({ balanceMicro: '5000000', reservedMicro: '0' });
  const usage = await graphql(t.url, '{ usageRecords { data { id } } }', {}, owner.sessionToken);
  expect(usage.data.usageRecords.data).toEqual([]);
});

test('wrong method, content type and oversized bodies get the envelope too', async () => {
  const get = await call(`${t.url}/v1/chat/completions`, { token: secret });
  expect(get.status).toBe(404);
  expect(get.body.error.code).toBe('not_found');
  const form = await call(`${t.url}/v1/chat/completions`, {
    token: secret,
    rawBody: 'model=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(form.status).toBe(415);
  const huge = await call(`${t.url}/v1/chat/completions`, {
    token: secret,
    body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] },
  });
  expect(huge.status).toBe(413);
  expect(huge.body.error.code).toBe('payload_too_large');
});
