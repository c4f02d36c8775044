import { ManualClock, utcMonthKey, utcMonthKeyOfMs } from '../../src/domain/shared/clock';

test('utcMonthKeyOfMs is utcMonthKey at every instant, across month edges and back in time', () => {
  const instants = [
    '2026-11-30T23:59:59.999Z',
    '2026-12-01T00:00:00.000Z',
    '2026-12-31T23:59:59.999Z',
    '2027-01-01T00:00:00.000Z',
    '2026-11-15T12:00:00.000Z', // back to a month already left
    '2026-11-01T00:00:00.000Z',
    '2026-10-31T23:59:59.999Z',
    '2024-02-29T10:00:00.000Z',
  ].map((iso) => new Date(iso));
  for (const at of instants) expect(utcMonthKeyOfMs(at.getTime())).toBe(utcMonthKey(at));
  // Asked twice in a row (the remembered month answers the second time).
  expect(utcMonthKeyOfMs(Date.UTC(2026, 10, 30, 23, 59, 59, 999))).toBe('2026-11');
  expect(utcMonthKeyOfMs(Date.UTC(2026, 11, 1))).toBe('2026-12');
});

test("a manual clock's nowMs() is its now() in milliseconds, as it moves", () => {
  const clock = new ManualClock(new Date('2026-11-30T23:59:59.000Z'));
  expect(clock.nowMs()).toBe(clock.now().getTime());
  clock.advance(1_000);
  expect(clock.nowMs()).toBe(Date.UTC(2026, 11, 1));
  expect(clock.nowMs()).toBe(clock.now().getTime());
});
