import { randomFillSync } from 'node:crypto';

/**
 * Ids are `<prefix>_<ULID>`: readable (`key_…`, `kev_…`), unique across instances, and
 * sortable by creation time, which cursor pagination (`after`) relies on.
 */
export type IdPrefix = 'acct' | 'usr' | 'ses' | 'key' | 'kev' | 'plan' | 'hold' | 'lease' | 'led' | 'use' | 'req' | 'vid';

export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Whether `value` has the shape of an id this generator makes with `prefix`. An id from a path
 * or a cursor that fails it names nothing, so it is answered without asking the database (which
 * refuses some characters, NUL among them, with an error rather than "no row").
 */
export function isWellFormedId(value: string, prefix: IdPrefix): boolean {
  return (
    value.length === prefix.length + 27 &&
    value.startsWith(prefix) &&
    value[prefix.length] === '_' &&
    /^[0-9a-hjkmnp-tv-z]{26}$/.test(value.slice(prefix.length + 1))
  );
}
const CROCKFORD_CODES = Buffer.from(CROCKFORD, 'latin1');
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const POOL_BYTES = 4096;
const MAX_PREFIX_CHARS = 5;
/** Where the ULID starts in the id's bytes: after the longest prefix and `_`. */
const ULID_AT = MAX_PREFIX_CHARS + 1;
/** 2^25: the time's low five characters. */
const TIME_HALF = 2 ** 25;

/**
 * Monotonic lower-case ULIDs (48-bit millisecond time, 80 random bits): within one
 * millisecond each id increments the previous one, so ids of one process stay ordered. Random
 * bytes come from a pooled `randomFillSync` (one system call per 4 KiB, not one per id): ids
 * are made several times per request on the hot path.
 */
export function ulidIds(now: () => number = Date.now): IdGenerator {
  const pool = Buffer.alloc(POOL_BYTES);
  let offset = POOL_BYTES;
  let lastTime = -1;
  const random: number[] = new Array(RANDOM_CHARS).fill(0);
  // The longest prefix, `_`, then the ULID: the id is read from it as one flat string.
  const text = Buffer.alloc(ULID_AT + TIME_CHARS + RANDOM_CHARS);
  text[MAX_PREFIX_CHARS] = 0x5f; // `_`

  const freshRandom = () => {
    if (offset + RANDOM_CHARS > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    for (let i = 0; i < RANDOM_CHARS; i++) random[i] = pool[offset++] & 31;
  };
  const increment = () => {
    for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
      if (random[i] < 31) {
        random[i]++;
        return;
      }
      random[i] = 0;
    }
  };

  // The time's ten characters are written when the millisecond changes, from two integers of
  // 25 bits each: `%` and `/` on the 48-bit time are floating-point operations (fmod), and
  // several ids a request share their millisecond under load.
  const writeTime = (time: number) => {
    let low = time % TIME_HALF;
    let high = (time - low) / TIME_HALF;
    for (let i = TIME_CHARS - 1; i >= TIME_CHARS / 2; i--, low >>>= 5) text[ULID_AT + i] = CROCKFORD_CODES[low & 31]!;
    for (let i = TIME_CHARS / 2 - 1; i >= 0; i--, high >>>= 5) text[ULID_AT + i] = CROCKFORD_CODES[high & 31]!;
  };

  return {
    next: (prefix) => {
      const time = now();
      if (time <= lastTime) increment();
      else {
        lastTime = time;
        writeTime(time);
        freshRandom();
      }
      // Written as bytes and read as one flat string: concatenation would make intermediate
      // strings, and a rope of two (prefix, ULID) that every settlement keeps until written.
      const start = MAX_PREFIX_CHARS - prefix.length;
      for (let i = 0; i < prefix.length; i++) text[start + i] = prefix.charCodeAt(i);
      for (let i = 0; i < RANDOM_CHARS; i++) text[ULID_AT + TIME_CHARS + i] = CROCKFORD_CODES[random[i]!]!;
      return text.toString('latin1', start);
    },
  };
}

const HEX_POOL_BYTES = 4096;
let hexPool = Buffer.alloc(0);
let hexOffset = 0;

/** `bytes` random bytes as hex, from a pooled `randomFillSync` (wire ids are made on every request). */
export function randomHex(bytes: number): string {
  if (hexOffset + bytes > hexPool.length) {
    hexPool = randomFillSync(Buffer.alloc(HEX_POOL_BYTES));
    hexOffset = 0;
  }
  const hex = hexPool.toString('hex', hexOffset, hexOffset + bytes);
  hexOffset += bytes;
  return hex;
}
