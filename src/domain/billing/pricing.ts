/**
 * Prices × usage → micro-dollars. Pure functions over bigint; rounding happens exactly once,
 * here: UP (ceiling) for holds, so a reservation never falls short by a fraction of a
 * micro-dollar, and to the NEAREST micro-dollar (half up) for charges.
 *
 * Token prices are micro-dollars per million tokens ($0.15 / 1M tokens is 150000n). The
 * field names match the catalog's `TextPricing`, so a catalog model's `pricing` can be passed
 * as is, but nothing here depends on the catalog.
 */
export interface TokenPrices {
  readonly inputPerMTokMicro: bigint;
  /** Input read from the vendor's prompt cache. */
  readonly cachedInputPerMTokMicro: bigint;
  /** Input written to the vendor's prompt cache, by how long the entry lives; absent: the input price. */
  readonly cacheWrite5mPerMTokMicro?: bigint;
  readonly cacheWrite1hPerMTokMicro?: bigint;
  readonly outputPerMTokMicro: bigint;
}

/** What a provider reported, normalised (docs/api.md, Billing facts the API shows). */
export interface TokenUsage {
  /** All prompt tokens, cached ones included. */
  readonly inputTokens: number;
  /** The part of `inputTokens` read from the vendor's prompt cache, billed at the cached-input price. */
  readonly cachedInputTokens: number;
  /** The parts of `inputTokens` written to the vendor's prompt cache (Anthropic), by entry lifetime, billed at the cache-write prices. */
  readonly cacheWrite5mInputTokens?: number;
  readonly cacheWrite1hInputTokens?: number;
  /** All billed output tokens, reasoning included (billing uses the provider's total). */
  readonly outputTokens: number;
  /** Informational: the reasoning part of `outputTokens`; never billed on top. */
  readonly reasoningTokens?: number;
}

export type Rounding = 'up' | 'nearest';

const TOKENS_PER_PRICE_UNIT = 1_000_000n;

function tokenCount(value: number, field: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${field} must be a non-negative integer, got ${value}`);
  return BigInt(value);
}

function price(value: bigint, field: string): bigint {
  if (value < 0n) throw new RangeError(`${field} must not be negative`);
  return value;
}

/** `numerator / denominator` for non-negative operands, rounded as asked. */
export function divideRounded(numerator: bigint, denominator: bigint, rounding: Rounding): bigint {
  if (rounding === 'up') return (numerator + denominator - 1n) / denominator;
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/**
 * Cost of a text request: each part of the input at its price (uncached, cache reads, 5-minute
 * and 1-hour cache writes) + output (reasoning included) × output price, per million tokens,
 * rounded once. Parts a provider reports beyond its input total are dropped, cache reads first
 * taken from it, then 5-minute writes, then 1-hour writes (more cached than input tokens is read
 * as "all input cached").
 */
export function textCostMicro(prices: TokenPrices, usage: TokenUsage, rounding: Rounding): bigint {
  const parts = textCostParts(prices, usage);
  return divideRounded(parts.input + parts.cachedInput + parts.cacheWrite + parts.output, TOKENS_PER_PRICE_UNIT, rounding);
}

/**
 * The parts of a text request's cost before its one rounding, in micro-dollars × 10^6
 * (tokens × price per million tokens): uncached input, cache reads, cache writes (both
 * lifetimes), output. Answers show them beside the charge (docs/api.md, Cost on every answer).
 */
export interface TextCostParts {
  input: bigint;
  cachedInput: bigint;
  cacheWrite: bigint;
  output: bigint;
}

export function textCostParts(prices: TokenPrices, usage: TokenUsage): TextCostParts {
  let uncached = tokenCount(usage.inputTokens, 'inputTokens');
  const part = (value: number | undefined, field: string): bigint => {
    const taken = minBig(tokenCount(value ?? 0, field), uncached);
    uncached -= taken;
    return taken;
  };
  const cached = part(usage.cachedInputTokens, 'cachedInputTokens');
  const write5m = part(usage.cacheWrite5mInputTokens, 'cacheWrite5mInputTokens');
  const write1h = part(usage.cacheWrite1hInputTokens, 'cacheWrite1hInputTokens');
  const output = tokenCount(usage.outputTokens, 'outputTokens');
  if (usage.reasoningTokens !== undefined) tokenCount(usage.reasoningTokens, 'reasoningTokens');
  const input = price(prices.inputPerMTokMicro, 'inputPerMTokMicro');
  return {
    input: uncached * input,
    cachedInput: cached * price(prices.cachedInputPerMTokMicro, 'cachedInputPerMTokMicro'),
    cacheWrite:
      write5m * price(prices.cacheWrite5mPerMTokMicro ?? input, 'cacheWrite5mPerMTokMicro') +
      write1h * price(prices.cacheWrite1hPerMTokMicro ?? input, 'cacheWrite1hPerMTokMicro'),
    output: output * price(prices.outputPerMTokMicro, 'outputPerMTokMicro'),
  };
}

/** The scale of TextCostParts: micro-dollars × 10^6. */
export const COST_PART_SCALE = TOKENS_PER_PRICE_UNIT;

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** What a finished text request is charged: the provider-reported usage, to the nearest micro-dollar. */
export function textChargeMicro(prices: TokenPrices, usage: TokenUsage): bigint {
  return textChargeOfParts(textCostParts(prices, usage));
}

/** textChargeMicro from the parts already computed (each BigInt operation allocates: an answer computes them once). */
export function textChargeOfParts(parts: TextCostParts): bigint {
  return divideRounded(parts.input + parts.cachedInput + parts.cacheWrite + parts.output, TOKENS_PER_PRICE_UNIT, 'nearest');
}

/**
 * The most a text request can cost, reserved before the provider is called: every estimated
 * input token at the dearest of the input prices (the cache may miss, or be written for an
 * hour) plus the whole clamped output limit at the output price, rounded up.
 */
export function textHoldMicro(prices: TokenPrices, estimate: { inputTokens: number; maxOutputTokens: number }): bigint {
  const dearestInput = [prices.cachedInputPerMTokMicro, prices.cacheWrite5mPerMTokMicro, prices.cacheWrite1hPerMTokMicro].reduce<bigint>(
    (dearest, p) => maxBig(dearest, p ?? 0n),
    prices.inputPerMTokMicro,
  );
  return textCostMicro(
    { inputPerMTokMicro: dearestInput, cachedInputPerMTokMicro: dearestInput, outputPerMTokMicro: prices.outputPerMTokMicro },
    { inputTokens: estimate.inputTokens, cachedInputTokens: 0, outputTokens: estimate.maxOutputTokens },
    'up',
  );
}

/** A charge within its hold: what a request is charged, and the part of its cost the hold did not cover (docs/billing.md, Overage). */
export function chargeWithinHold(costMicro: bigint, holdMicro: bigint): { chargedMicro: bigint; overageMicro: bigint } {
  const chargedMicro = minBig(costMicro, holdMicro);
  return { chargedMicro, overageMicro: costMicro - chargedMicro };
}

/**
 * Per-image or per-second media cost: count × unit price. Exact, so the hold (requested
 * count) and the charge (delivered count) need no rounding.
 */
export function mediaCostMicro(unitPriceMicro: bigint, units: number): bigint {
  return price(unitPriceMicro, 'unitPriceMicro') * tokenCount(units, 'units');
}
