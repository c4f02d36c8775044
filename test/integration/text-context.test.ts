import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount } from '../support/tollgate';
import {
  anthropicClient,
  expectChargedExactly,
  openaiClient,
  requestId,
  startTextHarness,
  withId,
  type TextHarness,
} from '../support/text';

/**
 * A prompt longer than the model's context is refused before anything is admitted or reserved,
 * in every format; one whose size in bytes is over the context but whose tokens fit is served and
 * charged what the vendor reports, within a hold that covers it. `sandbox/echo` has a context of
 * 128,000 tokens and prices input at $1 per million tokens.
 */
jest.setTimeout(60_000);

const CONTEXT = 128_000;
/** 3 MB of prose: about 600,000 tokens, far over the context. */
const HUGE = 'The quick brown fox jumps over the lazy dog. '.repeat(70_000);
/** 600,000 bytes, but 75,000 tokens (o200k makes 8 tokens of 64 x's): within the context. */
const LONG_BUT_FITS = 'x'.repeat(600_000);

let h: TextHarness;
let account: { accountId: string; sessionToken: string };
let secret: string;
let keyId: string;

beforeAll(async () => {
  h = await startTextHarness();
  account = await provisionAccount(h.t.url, { fundsMicro: '100000000' });
  await graphql(h.t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: account.accountId }, ADMIN_TOKEN);
  // A $1 monthly limit: two prompts billed as 750,006 tokens at $1/M each used to take $1.50 of it.
  const key = await createKey(h.t.url, account.sessionToken, { name: 'one dollar', monthly_spend_limit_micro: '1000000' });
  secret = key.secret;
  keyId = key.id;
});
afterAll(async () => h?.stop());

/** Nothing of the account moved: no hold or lease row was ever taken, no usage record, no charge. */
async function expectUntouched(): Promise<void> {
  const { rows } = await h.db.query<{ balance: string; reserved: string; holds: number; usage: number; key_spent: string }>(
    `select a.balance_micro::text as balance, a.reserved_micro::text as reserved,
            (select count(*)::int from holds where account_id = a.id) as holds,
            (select count(*)::int from usage_records where account_id = a.id) as usage,
            (select coalesce(sum(settled_micro + reserved_micro), 0)::text from key_month_spend where key_id = $2) as key_spent
       from accounts a where a.id = $1`,
    [account.accountId, keyId],
  );
  expect(rows[0]).toEqual({ balance: '100000000', reserved: '0', holds: 0, usage: 0, key_spent: '0' });
}

describe('a prompt over the context', () => {
  test('Chat Completions (OpenAI SDK): 400 bad_request naming messages and the context size', async () => {
    const client: OpenAI = openaiClient(h.t.url, secret);
    const error = await client.chat.completions
      .create({ model: 'sandbox/echo', messages: [{ role: 'user', content: HUGE }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const body = (error as InstanceType<typeof OpenAI.BadRequestError>).error as { code: string; message: string; details: unknown };
    expect(body.code).toBe('bad_request');
    expect(body.message).toMatch(/^messages is longer than the context of sandbox\/echo: more than 128000 tokens/);
    expect(body.details).toEqual({ field: 'messages', context_length: CONTEXT });
    await expectUntouched();
  });

  test('Responses: names input; streamed or not, the refusal comes before any event', async () => {
    for (const stream of [false, true]) {
      const r = await call(`${h.t.url}/v1/responses`, { token: secret, body: { model: 'sandbox/echo', input: HUGE, stream } });
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
      expect(r.body.error).toMatchObject({ code: 'bad_request', details: { field: 'input', context_length: CONTEXT } });
      expect(r.body.error.message).toMatch(/^input is longer than the context of sandbox\/echo: more than 128000 tokens/);
    }
    await expectUntouched();
  });

  test('Messages (Anthropic SDK): invalid_request_error naming messages', async () => {
    const client: Anthropic = anthropicClient(h.t.url, secret);
    const error = await client.messages
      .create({ model: 'sandbox/echo', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: HUGE }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toMatch(
      /messages is longer than the context of sandbox\/echo: more than 128000 tokens/,
    );
    await expectUntouched();
  });

  test('the $1 key is never charged for them: refused as often as sent, its month spend stays 0', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await call(`${h.t.url}/v1/chat/completions`, {
        token: secret,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: HUGE }] },
      });
      expect(r.status).toBe(400);
    }
    const spend = await graphql(
      h.t.url,
      'query($k:ID!){keyMonthSpend(keyId:$k){settledMicro reservedMicro}}',
      { k: keyId },
      account.sessionToken,
    );
    expect(spend.data.keyMonthSpend).toEqual({ settledMicro: '0', reservedMicro: '0' });
    await expectUntouched();
  });
});

test("a prompt over the context in bytes but within it in tokens is served, and charged exactly the vendor's count", async () => {
  const id = requestId();
  const client: OpenAI = openaiClient(h.t.url, secret);
  const completion = await client.chat.completions.create(
    { model: 'sandbox/echo', max_tokens: 16, messages: [{ role: 'user', content: LONG_BUT_FITS }] },
    withId(id),
  );
  // The sandbox counts 75,000 tokens + 3 for the message + 3 for the request; the one-word echo is over 16 tokens, so nothing is written.
  expect(completion.usage).toMatchObject({ prompt_tokens: 75_006, completion_tokens: 0 });
  expect(completion.choices[0]!.finish_reason).toBe('length');
  // 75,006 tokens × $1 per million = 75,006 micro-dollars; the hold (context + output limit) covered it.
  await expectChargedExactly(h, account, id, 75_006n);
});
