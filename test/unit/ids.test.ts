import { ulidIds } from '../../src/domain/shared/ids';

test('ids are prefixed, 26-character Crockford ULIDs', () => {
  const id = ulidIds().next('key');
  expect(id).toMatch(/^key_[0-9a-hjkmnp-tv-z]{26}$/);
});

test('ids of one generator increase strictly, also within one millisecond', () => {
  const ids = ulidIds(() => 1_795_000_000_000);
  const made = Array.from({ length: 1000 }, () => ids.next('kev'));
  expect([...made].sort()).toEqual(made);
  expect(new Set(made).size).toBe(made.length);
});

test('the time part orders ids across milliseconds', () => {
  let t = 1_700_000_000_000;
  const ids = ulidIds(() => t);
  const first = ids.next('hold');
  t += 1;
  const second = ids.next('hold');
  expect(second > first).toBe(true);
  expect(second.slice(5, 15) > first.slice(5, 15)).toBe(true);
});

test('two generators do not collide', () => {
  const a = ulidIds(() => 5);
  const b = ulidIds(() => 5);
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    seen.add(a.next('req'));
    seen.add(b.next('req'));
  }
  expect(seen.size).toBe(1000);
});

test('the time part is the 48-bit millisecond time in Crockford base 32, across the 25-bit halves it is written from', () => {
  const crockford = '0123456789abcdefghjkmnpqrstvwxyz';
  const expected = (t: number) => Array.from({ length: 10 }, (_, i) => crockford[Math.floor(t / 32 ** (9 - i)) % 32]).join('');
  const times = [0, 31, 32, 2 ** 25 - 1, 2 ** 25, 2 ** 25 + 1, 1_795_697_277_021, 2 ** 48 - 1];
  for (const time of times) {
    const id = ulidIds(() => time).next('lease');
    expect({ time, part: id.slice('lease_'.length, 'lease_'.length + 10) }).toEqual({ time, part: expected(time) });
  }
});
