import { customPeriodProblem, lastDays, periodDays, periodInstants, utcDay } from '../../dashboard/src/period';

/** The spend and request-log pages ask for whole UTC days, whatever the browser's time zone. */
test('the last N days end with today in UTC, both ends included', () => {
  const now = new Date('2026-03-01T23:30:00-05:00'); // already 2 March in UTC
  expect(utcDay(now)).toBe('2026-03-02');
  expect(lastDays(7, now)).toEqual({ from: '2026-02-24', to: '2026-03-02' });
  expect(lastDays(30, now)).toEqual({ from: '2026-02-01', to: '2026-03-02' });
  expect(periodDays(lastDays(90, now))).toBe(90);
  expect(lastDays(1, now)).toEqual({ from: '2026-03-02', to: '2026-03-02' });
});

test('a custom period is refused in the words of its form', () => {
  expect(customPeriodProblem({ from: '2026-01-01', to: '2026-01-31' })).toBeNull();
  expect(customPeriodProblem({ from: '2026-02-30', to: '2026-03-01' })).toBe('First day must be a date (YYYY-MM-DD).');
  expect(customPeriodProblem({ from: '2026-01-01', to: '' })).toBe('Last day must be a date (YYYY-MM-DD).');
  expect(customPeriodProblem({ from: '2026-02-01', to: '2026-01-31' })).toBe('Last day must not be before the first day.');
  expect(customPeriodProblem({ from: '2025-01-01', to: '2026-02-05' })).toBe('A period can be at most 400 days long.');
  expect(customPeriodProblem({ from: '2025-01-01', to: '2026-02-04' })).toBeNull(); // 400 days
});

test('a period of days is the instants from its first midnight to the midnight after its last day', () => {
  expect(periodInstants({ from: '2026-02-27', to: '2026-02-28' })).toEqual({
    from: '2026-02-27T00:00:00.000Z',
    to: '2026-03-01T00:00:00.000Z',
  });
  expect(periodInstants({ from: '2024-12-31', to: '2024-12-31' })).toEqual({
    from: '2024-12-31T00:00:00.000Z',
    to: '2025-01-01T00:00:00.000Z',
  });
});
