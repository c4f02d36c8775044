import { Writable } from 'node:stream';
import pino from 'pino';
import { eventually } from '../support/text';
import { call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';

/** GUIDE.md: one JSON line per request with ids, model, status, latency and cost; never a secret or a prompt. */
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

let t: TestTollgate;
beforeAll(async () => (t = await startTestTollgate({ log: pino({ level: 'info' }, sink) })));
afterAll(async () => t?.stop());

test('a text request logs its account, key, model, status and exact cost, but not its key or prompt', async () => {
  const owner = await provisionAccount(t.url, { fundsMicro: '5000000' });
  const key = await createKey(t.url, owner.sessionToken);
  const prompt = 'a very private prompt about the quarterly numbers';
  const answer = await call(`${t.url}/v1/chat/completions`, {
    token: key.secret,
    headers: { 'x-request-id': 'log-test-1' },
    body: { model: 'sandbox/echo', messages: [{ role: 'user', content: prompt }] },
  });
  expect(answer.status).toBe(200);
  // The line is written when the response closes; the usage record moments after the answer (after-answer settlement).
  let record: { requestId: string; costMicro: string } | undefined;
  await eventually(async () => {
    const usage = await graphql(t.url, '{ usageRecords { data { requestId costMicro } } }', {}, owner.sessionToken);
    record = usage.data.usageRecords.data.find((r: { requestId: string }) => r.requestId === 'log-test-1');
    return record !== undefined && lines.some((l) => l.request_id === 'log-test-1');
  });
  const line = lines.find((l) => l.request_id === 'log-test-1');
  expect(line).toMatchObject({
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    account_id: owner.accountId,
    model: 'sandbox/echo',
    cost_micro: record!.costMicro,
  });
  expect(line!.key_id).toMatch(/^key_/);
  expect(typeof line!.latency_ms).toBe('number');
  const everything = JSON.stringify(lines);
  expect(everything).not.toContain(key.secret);
  expect(everything).not.toContain(owner.sessionToken);
  expect(everything).not.toContain(prompt);
  expect(everything).not.toContain(owner.password);
});

describe('failures are visible to an operator: warn for a 5xx or a stream that ended on an error, with the error', () => {
  let secret: string;
  beforeAll(async () => {
    const owner = await provisionAccount(t.url, { fundsMicro: '5000000' });
    secret = (await createKey(t.url, owner.sessionToken)).secret;
  });
  const lineOf = async (requestId: string) => {
    await eventually(() => lines.some((l) => l.request_id === requestId));
    return lines.find((l) => l.request_id === requestId)!;
  };

  test("a vendor failure (502) is logged at warn with the envelope's code and message", async () => {
    const answer = await call(`${t.url}/v1/chat/completions`, {
      token: secret,
      headers: { 'x-request-id': 'log-fail-1' },
      body: { model: 'sandbox/echo', messages: [{ role: 'user', content: '[sandbox:fail] hello' }] },
    });
    expect(answer.status).toBe(502);
    const line = await lineOf('log-fail-1');
    expect(line).toMatchObject({ level: 40, status: 502, error_code: answer.body.error.code, error: answer.body.error.message });
  });

  test('a stream cut by the vendor answers 200 but is logged at warn with the stream error', async () => {
    const answer = await call(`${t.url}/v1/chat/completions`, {
      token: secret,
      headers: { 'x-request-id': 'log-cut-1' },
      body: { model: 'sandbox/echo', stream: true, messages: [{ role: 'user', content: '[sandbox:cut] one two three four five six' }] },
    });
    expect(answer.status).toBe(200);
    const line = await lineOf('log-cut-1');
    expect(line).toMatchObject({ level: 40, status: 200, error_code: expect.any(String), error: expect.any(String) });
    expect(String(answer.body)).toContain(String(line.error_code));
  });

  test('a client that leaves in the middle of a stream is not a failure: info, marked aborted', async () => {
    const controller = new AbortController();
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-request-id': 'log-left-1' },
      body: JSON.stringify({
        model: 'sandbox/echo',
        stream: true,
        messages: [{ role: 'user', content: '[sandbox:delay=50] one two three four five six seven eight' }],
      }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    expect(await lineOf('log-left-1')).toMatchObject({ level: 30, status: 200, aborted: true });
  });

  test('a client that leaves before a whole answer is not a failure either', async () => {
    const controller = new AbortController();
    const sent = fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-request-id': 'log-left-2' },
      body: JSON.stringify({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: '[sandbox:delay=100] one two three four five six seven eight' }],
      }),
    });
    setTimeout(() => controller.abort(), 150);
    await expect(sent).rejects.toThrow();
    expect(await lineOf('log-left-2')).toMatchObject({ level: 30, aborted: true });
  });

  test('a refused request (400) stays at info, with its code', async () => {
    const answer = await call(`${t.url}/v1/chat/completions`, {
      token: secret,
      headers: { 'x-request-id': 'log-bad-1' },
      body: { model: 'sandbox/echo', n: 2, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(answer.status).toBe(400);
    expect(await lineOf('log-bad-1')).toMatchObject({ level: 30, status: 400, error_code: answer.body.error.code });
  });
});
