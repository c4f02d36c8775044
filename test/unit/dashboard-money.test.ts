import { dollarsToMicro, formatMicro, microToDollarText } from '../../dashboard/src/money';

/** The dashboard's limit and top-up fields send exactly the micro-dollars a person typed. */
test('dollars convert to micro-dollar strings exactly, with no float rounding', () => {
  expect(dollarsToMicro('12.5')).toBe('12500000');
  expect(dollarsToMicro('$0.29')).toBe('290000');
  expect(dollarsToMicro('0.000001')).toBe('1');
  expect(dollarsToMicro('4.35')).toBe('4350000'); // 4.35 * 1e6 is 4349999.999… as a float
  expect(dollarsToMicro(' 100000 ')).toBe('100000000000');
  expect(dollarsToMicro('999999999999.999999')).toBe('999999999999999999');
  expect(dollarsToMicro('7.')).toBe('7000000');
});

test('anything but a plain dollar amount is refused', () => {
  for (const bad of ['', '-1', '1.0000001', '1e3', 'abc', '1,000', '.5', '0x10', '1 2']) expect(dollarsToMicro(bad)).toBeUndefined();
});

test('micro-dollars print as dollars without losing digits, and read back the same', () => {
  expect(formatMicro('12500000')).toBe('$12.50');
  expect(formatMicro('125')).toBe('$0.000125');
  expect(formatMicro('-2500000')).toBe('−$2.50');
  expect(formatMicro('1234567890000')).toBe('$1,234,567.89');
  expect(formatMicro(null)).toBe('—');
  for (const micro of ['0', '1', '290000', '4350000', '123456789012']) expect(dollarsToMicro(microToDollarText(micro))).toBe(micro);
});
