import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { textHoldMicro } from '../../src/domain/billing/pricing';
import { startFakeOpenAI, type FakeVendor, type FakeOpenAIReply } from '../fakes/openai';
import { parsePrometheusText, sumOf } from '../support/prometheus';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { textModel } from '../support/text';

/**
 * A vendor that reports more usage than a request could have had (a vendor anomaly): the fake
 * OpenAI bills 10,000,000 prompt tokens for a 7-byte prompt, $20 of gpt-4.1 input. The key's
 * monthly limit and the balance hold anyway: each request is charged its hold and no more, the
 * excess is recorded as the usage record's overage (in no ledger row, so balance = Σ ledger),
 * counted in a metric and logged as a warning. On one instance, and on two processes sharing one
 * database.
 */
jest.setTimeout(90_000);

const MODEL = 'openai/gpt-4.1';
const PROMPT = 'Say hi.';
const MAX_TOKENS = 32_768;
/** What the fake reports: 10M prompt tokens × $2/M + 20 completion tokens × $8/M = $20.00016. */
const OVER_REPORTED: FakeOpenAIReply = { text: 'hi', usage: { input: 10_000_000, output: 20 } };
const COST = 20_000_160n;
/** Each request's hold: (7 bytes + 8 for its message + 32 for the request) × $2/M + 32,768 × $8/M, rounded up: 94 + 262,144. */
const HOLD = 262_238n;
const OVERAGE = COST - HOLD;

let fake: FakeVendor<FakeOpenAIReply>;
let a: TestTollgate;
const warnings: Array<Record<string, unknown>> = [];
let b: ChildProcess | null = null;
let bUrl = '';
let bStderr = '';

beforeAll(async () => {
  expect(textHoldMicro(textModel(MODEL).pricing!, { inputTokens: PROMPT.length + 8 + 32, maxOutputTokens: MAX_TOKENS })).toBe(HOLD);
  fake = await startFakeOpenAI();
  fake.script(OVER_REPORTED);
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') warnings.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  a = await startTestTollgate({ env: { OPENAI_API_KEY: fake.apiKey!, OPENAI_BASE_URL: fake.url }, log: pino({ level: 'warn' }, lines) });
});

afterAll(async () => {
  if (b && b.exitCode === null) {
    b.send({ type: 'stop' });
    await once(b, 'exit');
  }
  await a?.stop();
  await fake?.close();
});

/** A funded account pinned to tier 5 (admission never refuses here), with one prepaid key. */
async function account(url: string, fundsMicro: bigint, limitMicro?: bigint) {
  const p = await provisionAccount(url, { fundsMicro: fundsMicro.toString() });
  await graphql(url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: p.accountId }, ADMIN_TOKEN);
  const key = await createKey(url, p.sessionToken, {
    name: 'over-reported',
    ...(limitMicro !== undefined ? { monthly_spend_limit_micro: limitMicro.toString() } : {}),
  });
  return { ...p, key };
}

function ask(url: string, secret: string, requestId: string) {
  return call(`${url}/v1/chat/completions`, {
    token: secret,
    headers: { 'x-request-id': requestId },
    body: { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: PROMPT }] },
  });
}

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await a.tollgate.services.orm.em.fork().execute(query, params as never[], 'all')) as unknown as T[];
}

/** The account's money once every settlement is committed and every lease given back. */
async function settledMoney(accountId: string, keyId: string, served: number) {
  const read = async () => {
    const [row] = await sql<{ balance: string; reserved: string; ledger: string; records: number; key_settled: string | null }>(
      `select a.balance_micro::text as balance, a.reserved_micro::text as reserved,
              (select coalesce(sum(amount_micro), 0)::text from ledger_entries where account_id = a.id) as ledger,
              (select count(*)::int from usage_records where account_id = a.id) as records,
              (select sum(settled_micro)::text from key_month_spend where key_id = ?) as key_settled
         from accounts a where a.id = ?`,
      [keyId, accountId],
    );
    return row!;
  };
  const deadline = Date.now() + 10_000;
  let row = await read();
  while ((row.records < served || row.reserved !== '0') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    row = await read();
  }
  const usage = await sql<{ request_id: string; cost_micro: string; overage_micro: string; input_tokens: number }>(
    'select request_id, cost_micro::text, overage_micro::text, input_tokens from usage_records where account_id = ? order by request_id',
    [accountId],
  );
  return {
    balance: BigInt(row.balance),
    reserved: BigInt(row.reserved),
    ledgerSum: BigInt(row.ledger),
    keySettled: BigInt(row.key_settled ?? '0'),
    usage,
  };
}

async function overageMetrics(url: string) {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const { samples } = parsePrometheusText(await response.text());
  const labels = { vendor: 'openai', model: MODEL };
  return { count: sumOf(samples, 'tollgate_overages_total', labels), micro: sumOf(samples, 'tollgate_overage_micro_total', labels) };
}

test('one instance: a $1 key is charged its holds and no more; the excess is overage, a metric and a warning', async () => {
  const { accountId, key, sessionToken } = await account(a.url, 5_000_000n, 1_000_000n);
  const before = await overageMetrics(a.url);
  const ids = Array.from({ length: 6 }, (_, i) => `over-one-${i}`);
  const answers = await Promise.all(ids.map((id) => ask(a.url, key.secret, id)));

  // One instance is exact: three holds fit in $1, the others are refused by the limit.
  const served = answers.filter((r) => r.status === 200);
  expect(served).toHaveLength(3);
  expect(answers.filter((r) => r.status === 402).map((r) => r.body.error.code)).toEqual([
    'api_key_spend_limit_reached',
    'api_key_spend_limit_reached',
    'api_key_spend_limit_reached',
  ]);
  // The answer shows what the vendor reported.
  expect(served[0]!.body.usage.prompt_tokens).toBe(10_000_000);

  const money = await settledMoney(accountId, key.id, 3);
  expect(money).toMatchObject({ balance: 5_000_000n - 3n * HOLD, reserved: 0n, ledgerSum: 5_000_000n - 3n * HOLD, keySettled: 3n * HOLD });
  expect(money.keySettled).toBeLessThanOrEqual(1_000_000n);
  expect(money.usage).toHaveLength(3);
  for (const record of money.usage)
    expect(record).toMatchObject({ cost_micro: HOLD.toString(), overage_micro: OVERAGE.toString(), input_tokens: 10_000_000 });

  // The usage records show it: charged the hold, the rest as overage.
  const records = await graphql(a.url, '{ usageRecords { data { requestId costMicro overageMicro inputTokens } } }', {}, sessionToken);
  expect(records.data.usageRecords.data).toHaveLength(3);
  for (const record of records.data.usageRecords.data)
    expect(record).toMatchObject({ costMicro: HOLD.toString(), overageMicro: OVERAGE.toString(), inputTokens: 10_000_000 });

  const after = await overageMetrics(a.url);
  expect(after.count - before.count).toBe(3);
  expect(after.micro - before.micro).toBe(3 * Number(OVERAGE));
  const logged = warnings.filter((w) => ids.includes(w.request_id as string));
  expect(logged).toHaveLength(3);
  for (const line of logged) {
    expect(line).toMatchObject({
      level: 40,
      model: MODEL,
      vendor: 'openai',
      account_id: accountId,
      key_id: key.id,
      hold_micro: HOLD.toString(),
      cost_micro: COST.toString(),
      charged_micro: HOLD.toString(),
      overage_micro: OVERAGE.toString(),
    });
    expect(line.msg).toMatch(/overage/);
  }
  const text = JSON.stringify(logged);
  expect(text).not.toContain(key.secret);
  expect(text).not.toContain(fake.apiKey!);
});

test('two processes on one database: the key limit and the balance hold; every overage recorded, none charged', async () => {
  bStderr = '';
  b = fork(join(__dirname, '..', 'support', 'gateway-process.ts'), [], {
    execArgv: ['-r', join(__dirname, '..', 'support', 'swc-register.js')],
    env: {
      ...process.env,
      DATABASE_URL: a.databaseUrl,
      TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      TEST_LOG_LEVEL: 'warn',
      OPENAI_API_KEY: fake.apiKey!,
      OPENAI_BASE_URL: fake.url,
    },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  b.stderr!.on('data', (chunk: Buffer) => (bStderr += chunk.toString()));
  const [message] = (await once(b, 'message')) as [{ port: number }];
  bUrl = `http://127.0.0.1:${message.port}`;

  // A key limited to $1 (three holds), and an account whose balance covers two holds.
  const limited = await account(a.url, 5_000_000n, 1_000_000n);
  const poor = await account(a.url, 600_000n);
  const fire = (who: typeof limited, tag: string) =>
    Promise.all(
      [a.url, bUrl].flatMap((url, instance) =>
        Array.from({ length: 4 }, (_, i) => ask(url, who.key.secret, `over-two-${tag}-${instance}-${i}`)),
      ),
    );
  const [limitedAnswers, poorAnswers] = await Promise.all([fire(limited, 'limit'), fire(poor, 'balance')]);

  const check = async (who: typeof limited, answers: Awaited<ReturnType<typeof fire>>, fits: number, refusal: string) => {
    const served = answers.filter((r) => r.status === 200).length;
    // Several instances never overspend (they may refuse while the other holds slack).
    expect(served).toBeGreaterThanOrEqual(1);
    expect(served).toBeLessThanOrEqual(fits);
    for (const r of answers.filter((x) => x.status !== 200)) expect([r.status, r.body.error.code]).toEqual([402, refusal]);
    const money = await settledMoney(who.accountId, who.key.id, served);
    expect(money.usage).toHaveLength(served);
    for (const record of money.usage) expect(record).toMatchObject({ cost_micro: HOLD.toString(), overage_micro: OVERAGE.toString() });
    expect(money.keySettled).toBe(BigInt(served) * HOLD);
    expect(money.balance).toBe(money.ledgerSum);
    expect(money.balance).toBeGreaterThanOrEqual(0n);
    expect(money.reserved).toBe(0n);
    return { served, money };
  };
  const limitedResult = await check(limited, limitedAnswers, 3, 'api_key_spend_limit_reached');
  expect(limitedResult.money.keySettled).toBeLessThanOrEqual(1_000_000n);
  const poorResult = await check(poor, poorAnswers, 2, 'api_insufficient_balance');
  expect(poorResult.money.balance).toBe(600_000n - BigInt(poorResult.served) * HOLD);

  // And one request that only the second process serves, so its settlement path is certain to be taken.
  const lone = await account(a.url, 5_000_000n);
  expect((await ask(bUrl, lone.key.secret, 'over-two-lone')).status).toBe(200);
  const loneMoney = await settledMoney(lone.accountId, lone.key.id, 1);
  expect(loneMoney).toMatchObject({
    balance: 5_000_000n - HOLD,
    ledgerSum: 5_000_000n - HOLD,
    reserved: 0n,
    usage: [{ request_id: 'over-two-lone', cost_micro: HOLD.toString(), overage_micro: OVERAGE.toString() }],
  });

  // Each instance counted and logged the overages it settled; together, every one.
  const total = limitedResult.served + poorResult.served;
  const servedBy = (url: string) =>
    [...limitedAnswers, ...poorAnswers].filter((r, i) => r.status === 200 && i % 8 < 4 === (url === a.url)).length;
  const metricsA = await overageMetrics(a.url);
  const metricsB = await overageMetrics(bUrl);
  expect(metricsB.count).toBe(servedBy(bUrl) + 1);
  expect(metricsA.count - 3).toBe(servedBy(a.url)); // the first test's three are on A too
  expect(metricsA.count - 3 + metricsB.count).toBe(total + 1);
  const bLinesNow = () =>
    bStderr
      .split('\n')
      .filter((line) => line.includes('"over-two-'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  // Written before each answer ended; read here through the pipe, so waited for with a bound.
  for (const deadline = Date.now() + 5_000; bLinesNow().length < servedBy(bUrl) + 1 && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 25));
  const bLines = bLinesNow();
  expect(bLines).toHaveLength(servedBy(bUrl) + 1);
  for (const line of bLines) expect(line).toMatchObject({ level: 40, vendor: 'openai', model: MODEL, overage_micro: OVERAGE.toString() });
});
