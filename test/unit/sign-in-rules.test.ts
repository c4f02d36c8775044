import { addressKey, backoffMs, SIGN_IN_RULES } from '../../src/domain/accounts/sign-in-rules';

describe('sign-in backoff', () => {
  test('free failures, then a wait that doubles up to its cap', () => {
    const waits = Array.from({ length: 18 }, (_, i) => backoffMs(i + 1, SIGN_IN_RULES.pair));
    expect(waits).toEqual([
      0, 0, 0, 0, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 900_000, 900_000, 900_000, 900_000,
    ]);
    expect(backoffMs(1_000_000, SIGN_IN_RULES.address)).toBe(900_000);
  });
});

describe('the address a client is counted by', () => {
  test.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s counts as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
