import { Client } from 'pg';
import {
  moneyOf,
  requestId,
  settledMoneyOf,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * TOLLGATE_SETTLEMENT: whether an answer's last byte waits for its charge to be committed.
 * The settlement writes the account's row; a second connection holding that row locked
 * stalls the commit, so each mode shows what the answer waits for. The key's first request
 * takes its budget lease before the lock, so the locked requests run on that lease in memory.
 */

const ask = (a: TextAccount, id: string) =>
  a.openai.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'settle me' }] }, withId(id));

/** Locks the account's row in an open transaction until `release()`. */
async function lockAccount(databaseUrl: string, accountId: string): Promise<{ release(): Promise<void> }> {
  const locker = new Client({ connectionString: databaseUrl });
  await locker.connect();
  await locker.query('begin');
  await locker.query('select 1 from accounts where id = $1 for update', [accountId]);
  return {
    release: async () => {
      await locker.query('commit');
      await locker.end();
    },
  };
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

describe('after-answer (the default): the answer does not wait for the commit', () => {
  let h: TextHarness;
  let a: TextAccount;
  beforeAll(async () => {
    h = await startTextHarness();
    a = await textAccount(h.t);
    await ask(a, requestId());
  });
  afterAll(async () => h?.stop());

  test('answered while the commit is stalled; charged exactly once when it goes through', async () => {
    const lock = await lockAccount(h.t.databaseUrl, a.accountId);
    const id = requestId();
    try {
      const answer = await within(ask(a, id), 5_000);
      expect(answer).not.toBe('timeout');
      expect((answer as { choices: unknown[] }).choices).toHaveLength(1);
      expect(await moneyOf(h.db, id)).toEqual({ usage: [], charges: [] });
    } finally {
      await lock.release();
    }
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage).toHaveLength(1);
    expect(money.charges).toHaveLength(1);
    expect(money.charges[0]).toBeLessThan(0n);
  });
});

describe('before-answer: the last byte waits for the commit', () => {
  let h: TextHarness;
  let a: TextAccount;
  beforeAll(async () => {
    h = await startTextHarness({ TOLLGATE_SETTLEMENT: 'before-answer' });
    a = await textAccount(h.t);
    await ask(a, requestId());
  });
  afterAll(async () => h?.stop());

  test('no answer while the commit is stalled; once it goes through, the charge is already booked', async () => {
    const lock = await lockAccount(h.t.databaseUrl, a.accountId);
    const id = requestId();
    const answer = ask(a, id);
    try {
      expect(await within(answer, 500)).toBe('timeout');
    } finally {
      await lock.release();
    }
    await answer;
    const money = await moneyOf(h.db, id); // no waiting: booked before the answer ended
    expect(money.usage).toHaveLength(1);
    expect(money.charges).toHaveLength(1);
  });

  test('every answer finds its charge booked the moment it arrives', async () => {
    for (let i = 0; i < 5; i++) {
      const id = requestId();
      await ask(a, id);
      const money = await moneyOf(h.db, id);
      expect({ usage: money.usage.length, charges: money.charges.length }).toEqual({ usage: 1, charges: 1 });
    }
  });
});

describe('a full settlement backlog (TOLLGATE_SETTLEMENT_BACKLOG): admission waits, then 503; answers wait for their charge', () => {
  let h: TextHarness;
  let a: TextAccount;
  beforeAll(async () => {
    h = await startTextHarness({ TOLLGATE_SETTLEMENT_BACKLOG: '2' });
    a = await textAccount(h.t);
    // Takes the key's lease; committed before the test stalls commits, so the backlog starts empty.
    const warm = requestId();
    await ask(a, warm);
    await settledMoneyOf(h.db, warm);
  });
  afterAll(async () => h?.stop());

  const post = (id: string, body: Record<string, unknown>) =>
    fetch(`${h.t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: 'sandbox/echo', max_tokens: 16, ...body }),
    });

  test('two answered charges stay uncommitted at most; a third answer waits for its own; a new request gets 503 with Retry-After and costs nothing', async () => {
    const lock = await lockAccount(h.t.databaseUrl, a.accountId);
    const [first, streamed, third, refused] = [requestId(), requestId(), requestId(), requestId()];
    let streamedText: Promise<string> | null = null;
    try {
      // Admitted while the backlog is empty; it ends after the next two settled.
      const stream = await post(streamed, { stream: true, messages: [{ role: 'user', content: '[sandbox:delay=400] slow words here' }] });
      expect(stream.status).toBe(200);
      streamedText = stream.text();
      // Two answers while the commit is stalled: each ends with its charge queued (backlog 1, then 2).
      for (const id of [first, third]) expect(await within(ask(a, id), 5_000)).not.toBe('timeout');
      // The backlog is full: a new request waits for room, then is refused (503 unavailable,
      // Retry-After, nothing charged); meanwhile the streamed answer's end waits for its charge.
      const refusal = post(refused, { messages: [{ role: 'user', content: 'no room' }] });
      expect(await within(streamedText, 1_500)).toBe('timeout');
      const answer = await refusal;
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(((await answer.json()) as { error: unknown }).error).toMatchObject({ code: 'unavailable' });
    } finally {
      await lock.release();
    }
    expect(await streamedText).toContain('[DONE]');
    // The streamed answer ended only once its charge was committed: booked the moment it arrived.
    const money = await moneyOf(h.db, streamed);
    expect({ usage: money.usage.length, charges: money.charges.length }).toEqual({ usage: 1, charges: 1 });
    for (const id of [first, third]) expect((await settledMoneyOf(h.db, id)).charges).toHaveLength(1);
    expect(await moneyOf(h.db, refused)).toEqual({ usage: [], charges: [] });
    // Room again: served.
    expect((await ask(a, requestId())).choices).toHaveLength(1);
  });
});
