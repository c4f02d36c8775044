import { Client } from 'pg';
import { moneyOf, requestId, settledMoneyOf, startTextHarness, textAccount, withId, type TextAccount, type TextHarness } from '../support/text';

/**
 * TOLLGATE_SETTLEMENT: whether an answer's last byte waits for its charge to be committed.
 * The settlement writes the account's row; a second connection holding that row locked
 * stalls the commit, so each mode shows what the answer waits for. The key's first request
 * takes its budget lease before the lock, so the locked requests run on that lease in memory.
 */

const ask = (a: TextAccount, id: string) => a.openai.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'settle me' }] }, withId(id));

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
