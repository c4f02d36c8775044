import { countTokens } from 'gpt-tokenizer';
import {
  countTokensExactly,
  ENCODER_RUN_CHARS,
  estimateInputTokens,
  promptTokensOver,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REQUEST,
} from '../../src/domain/billing/estimate';
import {
  chargeWithinHold,
  divideRounded,
  mediaCostMicro,
  textChargeMicro,
  textCostMicro,
  textHoldMicro,
  type TokenPrices,
} from '../../src/domain/billing/pricing';

// Published prices, micro-dollars per million tokens.
const GPT_4O_MINI: TokenPrices = { inputPerMTokMicro: 150_000n, cachedInputPerMTokMicro: 75_000n, outputPerMTokMicro: 600_000n };
const SONNET: TokenPrices = { inputPerMTokMicro: 3_000_000n, cachedInputPerMTokMicro: 300_000n, outputPerMTokMicro: 15_000_000n };
const O4_MINI: TokenPrices = { inputPerMTokMicro: 1_100_000n, cachedInputPerMTokMicro: 275_000n, outputPerMTokMicro: 4_400_000n };
/** Sonnet with Anthropic's cache-write prices: 1.25x input for 5-minute entries, 2x for 1-hour ones. */
const SONNET_WRITES: TokenPrices = { ...SONNET, cacheWrite5mPerMTokMicro: 3_750_000n, cacheWrite1hPerMTokMicro: 6_000_000n };
const HALF: TokenPrices = { inputPerMTokMicro: 500_000n, cachedInputPerMTokMicro: 500_000n, outputPerMTokMicro: 500_000n };

describe('textCostMicro', () => {
  test.each([
    // name, prices, usage, charge (nearest), hold-style (up)
    ['exact micro-dollars', GPT_4O_MINI, { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 500 }, 450n, 450n],
    ['0.15 µ$: nearest 0, up 1', GPT_4O_MINI, { inputTokens: 1, cachedInputTokens: 0, outputTokens: 0 }, 0n, 1n],
    ['0.45 µ$: nearest 0, up 1', GPT_4O_MINI, { inputTokens: 3, cachedInputTokens: 0, outputTokens: 0 }, 0n, 1n],
    ['0.6 µ$: nearest 1, up 1', GPT_4O_MINI, { inputTokens: 4, cachedInputTokens: 0, outputTokens: 0 }, 1n, 1n],
    ['exactly half rounds up', HALF, { inputTokens: 1, cachedInputTokens: 0, outputTokens: 0 }, 1n, 1n],
    ['1.5 µ$ rounds to 2', HALF, { inputTokens: 3, cachedInputTokens: 0, outputTokens: 0 }, 2n, 2n],
    [
      '2.000001 µ$: nearest 2, up 3',
      { inputPerMTokMicro: 2_000_001n, cachedInputPerMTokMicro: 0n, outputPerMTokMicro: 0n },
      { inputTokens: 1, cachedInputTokens: 0, outputTokens: 0 },
      2n,
      3n,
    ],
    ['cached tokens at the cached price', SONNET, { inputTokens: 10_000, cachedInputTokens: 8_000, outputTokens: 1_000 }, 23_400n, 23_400n],
    ['all input cached', SONNET, { inputTokens: 1_000, cachedInputTokens: 1_000, outputTokens: 0 }, 300n, 300n],
    ['more cached than input reads as all cached', SONNET, { inputTokens: 100, cachedInputTokens: 150, outputTokens: 0 }, 30n, 30n],
    [
      'reasoning is part of output, billed once',
      O4_MINI,
      { inputTokens: 123, cachedInputTokens: 0, outputTokens: 4_567, reasoningTokens: 4_000 },
      20_230n,
      20_231n,
    ],
    ['same without a reasoning count', O4_MINI, { inputTokens: 123, cachedInputTokens: 0, outputTokens: 4_567 }, 20_230n, 20_231n],
    ['nothing used costs nothing', SONNET, { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, 0n, 0n],
    // 1,000 uncached × 3 + 8,000 read × 0.30 + 2,000 5-minute writes × 3.75 + 1,000 1-hour writes × 6 + 400 × 15.
    [
      'cache writes at their prices, by lifetime',
      SONNET_WRITES,
      { inputTokens: 12_000, cachedInputTokens: 8_000, cacheWrite5mInputTokens: 2_000, cacheWrite1hInputTokens: 1_000, outputTokens: 400 },
      24_900n,
      24_900n,
    ],
    [
      'cache writes without their prices cost the input price',
      SONNET,
      { inputTokens: 3_000, cachedInputTokens: 0, cacheWrite5mInputTokens: 2_000, cacheWrite1hInputTokens: 1_000, outputTokens: 0 },
      9_000n,
      9_000n,
    ],
    // 100 input: 60 read first, then 40 of the 50 5-minute writes; the 1-hour writes are beyond the input.
    [
      'parts beyond the input are dropped, reads first',
      SONNET_WRITES,
      { inputTokens: 100, cachedInputTokens: 60, cacheWrite5mInputTokens: 50, cacheWrite1hInputTokens: 50, outputTokens: 0 },
      168n,
      168n,
    ],
    [
      'beyond 2^53 stays exact',
      SONNET,
      { inputTokens: 0, cachedInputTokens: 0, outputTokens: 2_000_000_000 },
      30_000_000_000n,
      30_000_000_000n,
    ],
  ])('%s', (_name, prices, usage, nearest, up) => {
    expect(textCostMicro(prices, usage, 'nearest')).toBe(nearest);
    expect(textChargeMicro(prices, usage)).toBe(nearest);
    expect(textCostMicro(prices, usage, 'up')).toBe(up);
  });

  test.each([
    [{ inputTokens: -1, cachedInputTokens: 0, outputTokens: 0 }, /inputTokens/],
    [{ inputTokens: 1.5, cachedInputTokens: 0, outputTokens: 0 }, /inputTokens/],
    [{ inputTokens: 1, cachedInputTokens: -2, outputTokens: 0 }, /cachedInputTokens/],
    [{ inputTokens: 1, cachedInputTokens: 0, outputTokens: Number.NaN }, /outputTokens/],
    [{ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: -1 }, /reasoningTokens/],
    [{ inputTokens: 1, cachedInputTokens: 0, cacheWrite1hInputTokens: 0.5, outputTokens: 0 }, /cacheWrite1hInputTokens/],
  ])('refuses impossible usage %j', (usage, message) => {
    expect(() => textCostMicro(GPT_4O_MINI, usage, 'nearest')).toThrow(message);
  });

  test('refuses negative prices', () => {
    expect(() =>
      textCostMicro({ ...GPT_4O_MINI, outputPerMTokMicro: -1n }, { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 }, 'up'),
    ).toThrow(/outputPerMTokMicro/);
  });
});

describe('textHoldMicro', () => {
  test.each([
    ['input + clamped output, rounded up', GPT_4O_MINI, 1000, 4096, 2_608n], // 150 + 2457.6
    ['no fraction, no rounding', SONNET, 1000, 1000, 18_000n],
    ['a single token still reserves a micro-dollar', GPT_4O_MINI, 1, 0, 1n],
    ['nothing to reserve', GPT_4O_MINI, 0, 0, 0n],
    // A cached price above the input price (odd, but possible in a catalog) is the one reserved.
    [
      'dearer input price is reserved',
      { inputPerMTokMicro: 100_000n, cachedInputPerMTokMicro: 200_000n, outputPerMTokMicro: 0n },
      10,
      0,
      2n,
    ],
    // Every input token may be a 1-hour cache write: 1,000 × 6 + 1,000 × 15.
    ['a 1-hour cache write is the dearest input', SONNET_WRITES, 1000, 1000, 21_000n],
  ])('%s', (_name, prices, inputTokens, maxOutputTokens, expected) => {
    expect(textHoldMicro(prices, { inputTokens, maxOutputTokens })).toBe(expected);
  });

  test('a hold covers every charge the same request can produce', () => {
    const hold = textHoldMicro(SONNET_WRITES, { inputTokens: 777, maxOutputTokens: 333 });
    for (const cached of [0, 100, 777]) {
      for (const [write5m, write1h] of [
        [0, 0],
        [677 - Math.min(cached, 677), 0],
        [0, 777 - cached],
        [50, 50],
      ]) {
        for (const output of [0, 1, 332, 333]) {
          expect(
            textChargeMicro(SONNET_WRITES, {
              inputTokens: 777,
              cachedInputTokens: cached,
              cacheWrite5mInputTokens: write5m,
              cacheWrite1hInputTokens: write1h,
              outputTokens: output,
            }),
          ).toBeLessThanOrEqual(hold);
        }
      }
    }
  });

  test('a charge never exceeds its hold: the excess is overage', () => {
    expect(chargeWithinHold(900n, 1_000n)).toEqual({ chargedMicro: 900n, overageMicro: 0n });
    expect(chargeWithinHold(1_000n, 1_000n)).toEqual({ chargedMicro: 1_000n, overageMicro: 0n });
    expect(chargeWithinHold(1_500n, 1_000n)).toEqual({ chargedMicro: 1_000n, overageMicro: 500n });
  });
});

describe('mediaCostMicro', () => {
  test.each([
    ['three images at $0.042', 42_000n, 3, 126_000n],
    ['eight video seconds at $0.10', 100_000n, 8, 800_000n],
    ['none delivered', 42_000n, 0, 0n],
    ['sub-cent price', 500n, 4, 2_000n],
  ])('%s', (_name, price, units, expected) => {
    expect(mediaCostMicro(price, units)).toBe(expected);
  });

  test('refuses fractional or negative counts and prices', () => {
    expect(() => mediaCostMicro(1n, 1.5)).toThrow(RangeError);
    expect(() => mediaCostMicro(1n, -1)).toThrow(RangeError);
    expect(() => mediaCostMicro(-1n, 1)).toThrow(RangeError);
  });
});

describe('divideRounded', () => {
  test.each([
    [0n, 10n, 0n, 0n],
    [1n, 10n, 0n, 1n],
    [5n, 10n, 1n, 1n],
    [14n, 10n, 1n, 2n],
    [15n, 10n, 2n, 2n],
    [20n, 10n, 2n, 2n],
  ])('%d / %d: nearest %d, up %d', (n, d, nearest, up) => {
    expect(divideRounded(n, d, 'nearest')).toBe(nearest);
    expect(divideRounded(n, d, 'up')).toBe(up);
  });
});

describe('estimateInputTokens', () => {
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);

  test('bounded by the UTF-8 size plus the per-message and per-request framing, never below the real count', () => {
    const expected = Buffer.byteLength(text) + 2 * TOKENS_PER_MESSAGE + TOKENS_PER_REQUEST;
    expect(estimateInputTokens({ texts: [text], messages: 2 })).toBe(expected);
    for (const sample of [
      text,
      'é'.repeat(300),
      '日本語のテキスト'.repeat(40),
      '🦊'.repeat(100),
      'x\u0000y <|endoftext|> \u202e',
      '{"a":[1,2,3]}'.repeat(50),
    ]) {
      expect(estimateInputTokens({ texts: [sample], messages: 0 })).toBeGreaterThan(countTokensExactly(sample));
    }
  });

  test('an empty prompt still reserves the framing', () => {
    expect(estimateInputTokens({ texts: [], messages: 0 })).toBe(TOKENS_PER_REQUEST);
    expect(estimateInputTokens({ texts: [''], messages: 1 })).toBe(TOKENS_PER_REQUEST + TOKENS_PER_MESSAGE);
  });

  test('special-token lookalikes in user text are counted, not refused', () => {
    expect(estimateInputTokens({ texts: ['hi <|endoftext|> there'], messages: 1 })).toBeGreaterThan(
      TOKENS_PER_REQUEST + TOKENS_PER_MESSAGE,
    );
    expect(countTokensExactly('hi <|endoftext|> there')).toBeGreaterThan(1);
  });

  test('capped by the context length', () => {
    expect(estimateInputTokens({ texts: [text], messages: 1 }, { contextLength: 50 })).toBe(50);
  });
});

describe('countTokensExactly', () => {
  test('the o200k count, loaded on first use', () => {
    expect(countTokensExactly('')).toBe(0);
    expect(countTokensExactly(text())).toBe(countTokens(text()));
  });
  const text = () => 'Say something about foxes, in two sentences.';

  test('a long run of one character is counted in slices: a megabyte of one letter in moments, not hours', () => {
    // o200k makes 8 tokens of 64 x's: the slices of a run add up to the whole run's count.
    expect(countTokensExactly('x'.repeat(4 * ENCODER_RUN_CHARS))).toBe(countTokens('x'.repeat(4 * ENCODER_RUN_CHARS)));
    expect(countTokensExactly('x'.repeat(1_000_000))).toBe(125_000);
    expect(countTokensExactly(' '.repeat(2_000_000) + 'end')).toBeGreaterThan(0);
    // Text around the runs is counted as it is; an emoji is never cut in half.
    expect(countTokensExactly(`Hello ${'y'.repeat(3 * ENCODER_RUN_CHARS)} world`)).toBe(
      countTokens('Hello ') + countTokensExactly('y'.repeat(3 * ENCODER_RUN_CHARS)) + countTokens(' world'),
    );
    const emoji = '🦊'.repeat(1_000);
    expect(countTokensExactly(emoji)).toBeGreaterThanOrEqual(countTokens(emoji));
  });
});

describe('promptTokensOver', () => {
  const framing = TOKENS_PER_MESSAGE + TOKENS_PER_REQUEST;

  test('a prompt within its bound fits without counting; one over it is counted against the limit', async () => {
    expect(await promptTokensOver({ texts: ['hello'], messages: 1 }, 5 + framing)).toBe(false);
    // 600,000 x's are 75,000 tokens: 600,040 by the bound, within a 128,000 context when counted.
    const long = 'x'.repeat(600_000);
    expect(await promptTokensOver({ texts: [long], messages: 1 }, 128_000)).toBe(false);
    expect(await promptTokensOver({ texts: [long], messages: 1 }, 75_000 + framing)).toBe(false);
    expect(await promptTokensOver({ texts: [long], messages: 1 }, 75_000 + framing - 1)).toBe(true);
    expect(await promptTokensOver({ texts: [long, long], messages: 2 }, 128_000)).toBe(true);
  });

  test('prose over the limit, across several texts', async () => {
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(20_000); // 10 tokens a sentence
    const tokens = countTokensExactly(prose);
    expect(await promptTokensOver({ texts: [prose, prose, 'tail'], messages: 3 }, 2 * tokens)).toBe(true);
    expect(
      await promptTokensOver({ texts: [prose, prose], messages: 2 }, 2 * tokens + 2 * TOKENS_PER_MESSAGE + TOKENS_PER_REQUEST + 16),
    ).toBe(false);
  });
});
