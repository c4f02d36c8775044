import { ManualClock } from '../../src/domain/shared/clock';
import { call, createKey, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

let t: TestTollgate;
let session: string;
let otherSession: string;

beforeAll(async () => {
  t = await startTestTollgate();
  session = (await provisionAccount(t.url, { fundsMicro: '10000000', plan: 'pro' })).sessionToken;
  otherSession = (await provisionAccount(t.url)).sessionToken;
});
afterAll(async () => t?.stop());

describe('sessions', () => {
  test('wrong password and unknown email are 401 invalid_token', async () => {
    const p = await provisionAccount(t.url);
    for (const body of [
      { email: p.email, password: 'wrong password!' },
      { email: 'nobody@example.com', password: 'whatever123' },
    ]) {
      const r = await call(`${t.url}/v1/auth/sessions`, { body });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_token');
    }
  });

  test('sign-out ends the session at once', async () => {
    const p = await provisionAccount(t.url);
    expect((await call(`${t.url}/v1/keys`, { token: p.sessionToken })).status).toBe(200);
    expect((await call(`${t.url}/v1/auth/sessions/current`, { method: 'DELETE', token: p.sessionToken })).status).toBe(204);
    const after = await call(`${t.url}/v1/keys`, { token: p.sessionToken });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('invalid_token');
  });

  test('missing fields name the field', async () => {
    const r = await call(`${t.url}/v1/auth/sessions`, { body: { email: 'a@b.c' } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/password/);
  });
});

describe('key lifecycle over REST', () => {
  test('create returns the secret once; list and get never show it', async () => {
    const created = await call(`${t.url}/v1/keys`, { token: session, body: { name: 'ci', monthly_spend_limit_micro: '25000000' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'ci',
      kind: 'prepaid',
      monthly_spend_limit_micro: '25000000',
      month_spent_micro: '0',
      revoked_at: null,
      expires_at: null,
      last_used_at: null,
    });
    expect(created.body.secret).toMatch(/^tgk_/);
    expect(created.body.prefix).toBe(created.body.secret.slice(0, 12));
    expect(typeof created.body.created_at).toBe('number');
    const list = await call(`${t.url}/v1/keys`, { token: session });
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toBeDefined();
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
    expect(listed).not.toHaveProperty('secret');
    expect(listed).not.toHaveProperty('secret_hash');
  });

  test('rename, limit change and revoke each write an event, newest first, paginated', async () => {
    const key = await createKey(t.url, session, { name: 'evented' });
    expect((await call(`${t.url}/v1/keys/${key.id}`, { method: 'PATCH', token: session, body: { name: 'renamed' } })).body.name).toBe(
      'renamed',
    );
    const limited = await call(`${t.url}/v1/keys/${key.id}`, {
      method: 'PATCH',
      token: session,
      body: { monthly_spend_limit_micro: '5000000' },
    });
    expect(limited.body.monthly_spend_limit_micro).toBe('5000000');
    const removed = await call(`${t.url}/v1/keys/${key.id}`, {
      method: 'PATCH',
      token: session,
      body: { monthly_spend_limit_micro: null },
    });
    expect(removed.body.monthly_spend_limit_micro).toBeNull();
    const revoked = await call(`${t.url}/v1/keys/${key.id}`, { method: 'DELETE', token: session });
    expect(revoked.status).toBe(200);
    expect(typeof revoked.body.revoked_at).toBe('number');
    // Idempotent: a second revoke answers the same key and writes no second event.
    expect((await call(`${t.url}/v1/keys/${key.id}`, { method: 'DELETE', token: session })).body.revoked_at).toBe(revoked.body.revoked_at);

    const events = await call(`${t.url}/v1/keys/${key.id}/events`, { token: session });
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: { kind: string }) => e.kind)).toEqual([
      'revoked',
      'spend_limit_changed',
      'spend_limit_changed',
      'renamed',
      'created',
    ]);
    expect(events.body.data[3].data).toEqual({ old_name: 'evented', new_name: 'renamed' });
    expect(events.body.data[2].data).toEqual({ old_limit_micro: null, new_limit_micro: '5000000' });
    expect(events.body.data[1].data).toEqual({ old_limit_micro: '5000000', new_limit_micro: null });
    expect(events.body.data[0]).toMatchObject({ key_id: key.id, kind: 'revoked' });
    expect(typeof events.body.data[0].actor_user_id).toBe('string');
    expect(events.body.has_more).toBe(false);

    const page1 = await call(`${t.url}/v1/keys/${key.id}/events?limit=2`, { token: session });
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.has_more).toBe(true);
    const page2 = await call(`${t.url}/v1/keys/${key.id}/events?limit=2&after=${page1.body.last_id}`, { token: session });
    expect(page2.body.data.map((e: { kind: string }) => e.kind)).toEqual(['spend_limit_changed', 'renamed']);
    const page3 = await call(`${t.url}/v1/keys/${key.id}/events?limit=2&after=${page2.body.last_id}`, { token: session });
    expect(page3.body.data.map((e: { kind: string }) => e.kind)).toEqual(['created']);
    expect(page3.body.has_more).toBe(false);
  });

  test('a revoked key is refused at once', async () => {
    const key = await createKey(t.url, session, { name: 'short-lived' });
    expect((await call(`${t.url}/v1/models`, { token: key.secret })).status).toBe(200);
    await call(`${t.url}/v1/keys/${key.id}`, { method: 'DELETE', token: session });
    const r = await call(`${t.url}/v1/models`, { token: key.secret });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('invalid_token');
  });

  test('a revoked key cannot be renamed or re-limited: 409 key_revoked, and nothing is written', async () => {
    const key = await createKey(t.url, session, { name: 'retired', monthly_spend_limit_micro: '5000000' });
    await call(`${t.url}/v1/keys/${key.id}`, { method: 'DELETE', token: session });
    for (const body of [{ name: 'back from the dead' }, { monthly_spend_limit_micro: '9000000' }, { monthly_spend_limit_micro: null }]) {
      const refused = await call(`${t.url}/v1/keys/${key.id}`, { method: 'PATCH', token: session, body });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'key_revoked', details: { revoked_at: expect.any(String) } });
      expect(refused.body.error.message).toContain('revoked');
    }
    const unchanged = await call(`${t.url}/v1/keys/${key.id}`, { token: session });
    expect(unchanged.body).toMatchObject({ name: 'retired', monthly_spend_limit_micro: '5000000' });
    const events = await call(`${t.url}/v1/keys/${key.id}/events`, { token: session });
    expect(events.body.data.map((e: { kind: string }) => e.kind)).toEqual(['revoked', 'created']);
  });

  test('an expired key is refused', async () => {
    // A gateway of its own on a clock moved by hand: the expiry passes without a sleep.
    const clock = new ManualClock(new Date());
    const own = await startTestTollgate({ clock });
    try {
      const owner = await provisionAccount(own.url);
      const soon = Math.floor(clock.now().getTime() / 1000) + 60;
      const key = await createKey(own.url, owner.sessionToken, { name: 'expiring', expires_at: soon });
      expect((await call(`${own.url}/v1/models`, { token: key.secret })).status).toBe(200);
      clock.advance(59_000);
      expect((await call(`${own.url}/v1/models`, { token: key.secret })).status).toBe(200);
      clock.advance(1_000);
      const r = await call(`${own.url}/v1/models`, { token: key.secret });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_token');
    } finally {
      await own.stop();
    }
  });

  test('plan keys need a user with a plan and take no spend limit', async () => {
    const plan = await call(`${t.url}/v1/keys`, { token: session, body: { name: 'plan key', kind: 'plan' } });
    expect(plan.status).toBe(201);
    expect(plan.body.kind).toBe('plan');
    const noPlan = await call(`${t.url}/v1/keys`, { token: otherSession, body: { name: 'plan key', kind: 'plan' } });
    expect(noPlan.status).toBe(400);
    expect(noPlan.body.error.details).toEqual({ field: 'kind' });
    const limited = await call(`${t.url}/v1/keys`, {
      token: session,
      body: { name: 'x', kind: 'plan', monthly_spend_limit_micro: '5000000' },
    });
    expect(limited.status).toBe(400);
    expect(limited.body.error).toMatchObject({
      message: 'Monthly limit applies to prepaid keys only',
      details: { field: 'monthly_spend_limit_micro' },
    });
  });
});

describe('refusals', () => {
  test.each([
    [{ monthly_spend_limit_micro: '999999' }, 'monthly_spend_limit_micro'],
    [{ monthly_spend_limit_micro: '100000000001' }, 'monthly_spend_limit_micro'],
    [{ monthly_spend_limit_micro: 25000000 }, 'monthly_spend_limit_micro'],
    [{ monthly_spend_limit_micro: '25.5' }, 'monthly_spend_limit_micro'],
    [{ monthly_spend_limit_micro: '-5000000' }, 'monthly_spend_limit_micro'],
    [{ monthly_spend_limit_micro: '' }, 'monthly_spend_limit_micro'],
    [{ name: '' }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'a\u0000b' }, 'name'],
    // Sent as the escape `\udfff`: valid JSON, but no character (the fuzz suite found it answered 500).
    [{ name: '\udfff' }, 'name'],
    [{ name: 'fox \ud83e' }, 'name'],
    [{ kind: 'enterprise' }, 'kind'],
    [{ expires_at: 'tomorrow' }, 'expires_at'],
    [{ expires_at: 1000 }, 'expires_at'],
    [{ colour: 'blue' }, 'colour'],
  ])('create with %j is 400 naming %s', async (extra, field) => {
    const r = await call(`${t.url}/v1/keys`, { token: session, body: { name: 'k', ...extra } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad_request');
    expect(r.body.error.details.field).toBe(field);
  });

  test('limits at the bounds are accepted', async () => {
    for (const limit of ['1000000', '100000000000']) {
      expect((await call(`${t.url}/v1/keys`, { token: session, body: { name: 'b', monthly_spend_limit_micro: limit } })).status).toBe(201);
    }
  });

  test('PATCH with a bad limit is 400 and changes nothing', async () => {
    const key = await createKey(t.url, session, { name: 'stable', monthly_spend_limit_micro: '2000000' });
    const r = await call(`${t.url}/v1/keys/${key.id}`, { method: 'PATCH', token: session, body: { monthly_spend_limit_micro: '0' } });
    expect(r.status).toBe(400);
    expect((await call(`${t.url}/v1/keys/${key.id}`, { token: session })).body.monthly_spend_limit_micro).toBe('2000000');
  });

  test('API keys cannot manage keys: 403 session_required', async () => {
    const key = await createKey(t.url, session);
    for (const [method, path] of [
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys'],
      ['PATCH', `/v1/keys/${key.id}`],
      ['DELETE', `/v1/keys/${key.id}`],
      ['GET', `/v1/keys/${key.id}/events`],
    ]) {
      const r = await call(`${t.url}${path}`, {
        method,
        token: key.secret,
        body: method === 'POST' || method === 'PATCH' ? { name: 'x' } : undefined,
      });
      expect([method, path, r.status, r.body.error.code]).toEqual([method, path, 403, 'session_required']);
    }
  });

  test("another account's key is 404 not_found", async () => {
    const key = await createKey(t.url, session);
    for (const [method, path] of [
      ['GET', `/v1/keys/${key.id}`],
      ['PATCH', `/v1/keys/${key.id}`],
      ['DELETE', `/v1/keys/${key.id}`],
      ['GET', `/v1/keys/${key.id}/events`],
    ]) {
      const r = await call(`${t.url}${path}`, { method, token: otherSession, body: method === 'PATCH' ? { name: 'stolen' } : undefined });
      expect([path, r.status, r.body.error.code]).toEqual([path, 404, 'not_found']);
    }
    expect((await call(`${t.url}/v1/keys/${key.id}`, { token: session })).body.name).toBe('test key');
  });

  test('missing, malformed and unknown credentials are 401 invalid_token', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer tgk_nope' },
      { authorization: 'Basic abc' },
      { authorization: 'Bearer tgs_nope' },
    ] as Record<string, string>[]) {
      const r = await call(`${t.url}/v1/models`, { headers });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_token');
    }
    const sessionOnModels = await call(`${t.url}/v1/models`, { token: session });
    expect(sessionOnModels.status).toBe(401);
  });

  test('malformed JSON, wrong content type, oversized body and unknown paths get the envelope', async () => {
    const malformed = await call(`${t.url}/v1/keys`, {
      token: session,
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('bad_request');
    const text = await call(`${t.url}/v1/keys`, { token: session, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe('unsupported_media_type');
    const big = await call(`${t.url}/v1/keys`, { token: session, body: { name: 'x'.repeat(5 * 1024 * 1024) } });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    const array = await call(`${t.url}/v1/keys`, { token: session, body: [1, 2] });
    expect(array.status).toBe(400);
    const unknown = await call(`${t.url}/v1/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'not_found', message: expect.stringContaining('/v1/nothing-here'), details: {} } });
    const events = await call(`${t.url}/v1/keys/key_unknown/events?limit=5`, { token: session });
    expect(events.status).toBe(404);
  });

  test('bad event pagination parameters name the parameter', async () => {
    const key = await createKey(t.url, session);
    const limit = await call(`${t.url}/v1/keys/${key.id}/events?limit=0`, { token: session });
    expect(limit.status).toBe(400);
    expect(limit.body.error.details).toEqual({ field: 'limit' });
    const after = await call(`${t.url}/v1/keys/${key.id}/events?after=kev_foreign`, { token: session });
    expect(after.status).toBe(400);
    expect(after.body.error.details).toEqual({ field: 'after' });
  });

  test('every answer carries x-request-id, echoing a sane one', async () => {
    const r = await call(`${t.url}/v1/models`, { headers: { 'x-request-id': 'my-trace-123' } });
    expect(r.headers.get('x-request-id')).toBe('my-trace-123');
    const generated = await call(`${t.url}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
