import { call, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

let t: TestTollgate;
beforeAll(async () => (t = await startTestTollgate()));
afterAll(async () => t?.stop());

test('health and sign-in work', async () => {
  expect((await call(`${t.url}/healthz`)).status).toBe(200);
  expect((await call(`${t.url}/readyz`)).body).toEqual({ status: 'ready' });
  const p = await provisionAccount(t.url, { fundsMicro: '5000000' });
  expect(p.sessionToken).toMatch(/^tgs_/);
});
