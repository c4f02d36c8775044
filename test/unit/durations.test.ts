import { formatResetDuration, retryAfterSeconds } from '../../src/domain/limits/durations';

describe('formatResetDuration', () => {
  test.each([
    [0, '0s'],
    [-250, '0s'],
    [Number.NaN, '0s'],
    [0.2, '1ms'],
    [1, '1ms'],
    [849.01, '850ms'],
    [850, '850ms'],
    [999, '999ms'],
    [999.5, '1s'],
    [1_000, '1s'],
    [1_010, '1.01s'],
    [1_050, '1.05s'],
    [1_100, '1.1s'],
    [1_500, '1.5s'],
    [1_234, '1.234s'],
    [1_234.5, '1.235s'],
    [12_000, '12s'],
    [58_500, '58.5s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [60_001, '1m0.001s'],
    [90_500, '1m30.5s'],
    [360_000, '6m0s'],
    [3_599_999, '59m59.999s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
    [90_061_500, '25h1m1.5s'],
  ])('%p ms → %s', (ms, text) => {
    expect(formatResetDuration(ms)).toBe(text);
  });
});

describe('retryAfterSeconds', () => {
  test.each([
    [0, 1],
    [-5, 1],
    [1, 1],
    [999, 1],
    [1_000, 1],
    [1_001, 2],
    [59_000, 59],
    [60_000, 60],
    [60_000.5, 61],
  ])('%p ms → %p s', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds);
  });
});
