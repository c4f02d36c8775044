import fc from 'fast-check';
import { scaledNumber } from '../../src/protocols/cost';
import { formatScaled } from '../../src/domain/shared/money';

/**
 * `usage.cost` and its parts are numbers: scaledNumber divides where the amount is exact as a
 * double instead of writing and parsing the decimal text; it must give exactly the number that
 * parsing the text gives, for every amount and the scales answers use.
 */
const asParsed = (amount: bigint, scale: number) => Number(formatScaled(amount, scale));

test('the same number as parsing the decimal text, at the edges', () => {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  const edges = [0n, 1n, -1n, 5n, 999_999n, 1_000_000n, 1_000_001n, 123_456_789_012n, max, -max, max + 1n, -(max + 1n), 10n ** 30n + 7n];
  for (const scale of [0, 6, 12, 22, 23])
    for (const amount of edges) expect(Object.is(scaledNumber(amount, scale), asParsed(amount, scale))).toBe(true);
});

test('the same number as parsing the decimal text, for any amount', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), fc.constantFrom(0, 1, 6, 12, 18, 22), (amount, scale) => {
      expect(Object.is(scaledNumber(amount, scale), asParsed(amount, scale))).toBe(true);
    }),
    { numRuns: 20_000 },
  );
});
