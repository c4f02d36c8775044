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
  const answer = await call(`${t.url}/v1/chat/completions`, { token: key.secret, headers: { 'x-request-id': 'log-test-1' }, body: { model: 'sandbox/echo', messages: [{ role: 'user', content: prompt }] } });
  expect(answer.status).toBe(200);
  // The line is written when the response closes; the usage record moments after the answer (after-answer settlement).
  let record: { requestId: string; costMicro: string } | undefined;
  await eventually(async () => {
    const usage = await graphql(t.url, '{ usageRecords { data { requestId costMicro } } }', {}, owner.sessionToken);
    record = usage.data.usageRecords.data.find((r: { requestId: string }) => r.requestId === 'log-test-1');
    return record !== undefined && lines.some((l) => l.request_id === 'log-test-1');
  });
  const line = lines.find((l) => l.request_id === 'log-test-1');
  expect(line).toMatchObject({ method: 'POST', path: '/v1/chat/completions', status: 200, account_id: owner.accountId, model: 'sandbox/echo', cost_micro: record!.costMicro });
  expect(line!.key_id).toMatch(/^key_/);
  expect(typeof line!.latency_ms).toBe('number');
  const everything = JSON.stringify(lines);
  expect(everything).not.toContain(key.secret);
  expect(everything).not.toContain(owner.sessionToken);
  expect(everything).not.toContain(prompt);
  expect(everything).not.toContain(owner.password);
});
