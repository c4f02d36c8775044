import { InMemoryLimitStore } from '../../src/domain/limits/store-memory';
import { tokenRetryAfterMs } from '../../src/domain/limits/store';

/**
 * The in-process store keeps each window as a ring of typed arrays that grows and shrinks with
 * the traffic. Thousands of requests and settlements (the ring grows past its first room many
 * times and wraps around), clock steps back (entries inserted in order) and a quiet spell (the
 * ring shrinks) are checked, after every step, against a plain sorted list of the same entries:
 * the window's counts and oldest entries, and the waits a refusal reports, which read the
 * entries by position (requests per second) and in order (tokens per minute).
 */
const MINUTE = 60_000;
const SECOND = 1_000;
const T0 = Date.parse('2026-11-26T06:00:00.000Z');
const SUBJECT = 'acct:ring';

interface Entry {
  at: number;
  weight: number;
}

/** Inserted after the entries of the same time or earlier, as the store inserts. */
function insert(list: Entry[], entry: Entry): void {
  let index = list.length;
  while (index > 0 && list[index - 1]!.at > entry.at) index--;
  list.splice(index, 0, entry);
}

test('the window rings agree with a sorted list through growth, wrap-around, clock steps back and shrinking', async () => {
  const store = new InMemoryLimitStore();
  const requests: Entry[] = [];
  const settled: Entry[] = [];
  let now = T0;
  const expire = () => {
    for (const list of [requests, settled]) while (list.length > 0 && list[0]!.at <= now - MINUTE) list.shift();
  };
  const check = async () => {
    const snapshot = await store.snapshot(SUBJECT, now);
    expect(snapshot.requestsInMinute).toBe(requests.length);
    expect(snapshot.oldestRequestAt).toBe(requests[0]?.at ?? null);
    expect(snapshot.settledTokens).toBe(settled.reduce((sum, e) => sum + e.weight, 0));
    expect(snapshot.oldestSettledAt).toBe(settled[0]?.at ?? null);
  };

  for (let step = 0; step < 6_000; step++) {
    // Mostly forward by 0–29 ms (a minute holds a few thousand entries); now and then back by up to 400 ms.
    now += step % 97 === 96 ? -((step * 7) % 400) : (step * 13) % 30;
    const outcome = await store.admit({
      subject: SUBJECT,
      now,
      requestId: `r${step}`,
      requestsPerSecond: null,
      requestsPerMinute: null,
      slot: null,
    });
    expect(outcome.refusal).toBeNull();
    expire();
    insert(requests, { at: now, weight: 1 });
    if (step % 3 === 0) {
      const tokens = 1 + (step % 17);
      await store.settleTokens({ subject: SUBJECT, now, slotId: 'none', tokens });
      insert(settled, { at: now, weight: tokens });
    }
    await check();

    if (step % 250 === 0 && settled.length > 0) {
      // A token refusal's wait reads the settled entries in order; a per-second refusal's, one entry by position.
      const total = settled.reduce((sum, e) => sum + e.weight, 0);
      const refused = await store.admit({
        subject: SUBJECT,
        now,
        requestId: null,
        requestsPerSecond: null,
        requestsPerMinute: null,
        slot: { id: `s${step}`, limit: 10, expiresAt: now + MINUTE },
        tokens: { count: 40, perMinute: total + 10 },
      });
      const expected = tokenRetryAfterMs(
        settled.map((e) => [e.at, e.weight] as const),
        30,
        now,
        MINUTE,
      );
      expect(refused.refusal).toEqual({ limit: 'tokens_per_minute', retryAfterMs: expected });
      const inSecond = requests.filter((e) => e.at > now - SECOND);
      if (inSecond.length >= 2) {
        const bySecond = await store.admit({
          subject: SUBJECT,
          now,
          requestId: `q${step}`,
          requestsPerSecond: 2,
          requestsPerMinute: null,
          slot: null,
        });
        const first = requests.length - inSecond.length;
        expect(bySecond.refusal).toEqual({
          limit: 'requests_per_second',
          retryAfterMs: requests[first + inSecond.length - 2]!.at + SECOND - now,
        });
      }
    }
  }
  expect(requests.length).toBeGreaterThan(2_000);

  // A quiet spell: everything leaves, the rings shrink back, and new entries count from nothing.
  now += 2 * MINUTE;
  expire();
  await check();
  await store.admit({ subject: SUBJECT, now, requestId: 'after', requestsPerSecond: null, requestsPerMinute: null, slot: null });
  insert(requests, { at: now, weight: 1 });
  await check();
});
