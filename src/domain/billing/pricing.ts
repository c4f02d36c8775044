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
  readonly cachedInputPerMTokMicro: bigint;
  readonly outputPerMTokMicro: bigint;
}

/** What a provider reported, normalised (docs/api.md, Billing facts the API shows). */
export interface TokenUsage {
  /** All prompt tokens, cached ones included. */
  readonly inputTokens: number;
  /** The part of `inputTokens` billed at the cached-input price. */
  readonly cachedInputTokens: number;
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
 * Cost of a text request: uncached input × input price + cached input × cached price +
 * output (reasoning included) × output price, per million tokens, rounded once.
 * A provider reporting more cached than total input tokens is read as "all input cached".
 */
export function textCostMicro(prices: TokenPrices, usage: TokenUsage, rounding: Rounding): bigint {
  const input = tokenCount(usage.inputTokens, 'inputTokens');
  const cached = tokenCount(usage.cachedInputTokens, 'cachedInputTokens');
  const output = tokenCount(usage.outputTokens, 'outputTokens');
  if (usage.reasoningTokens !== undefined) tokenCount(usage.reasoningTokens, 'reasoningTokens');
  const uncached = input > cached ? input - cached : 0n;
  const scaled =
    uncached * price(prices.inputPerMTokMicro, 'inputPerMTokMicro') +
    (input > cached ? cached : input) * price(prices.cachedInputPerMTokMicro, 'cachedInputPerMTokMicro') +
    output * price(prices.outputPerMTokMicro, 'outputPerMTokMicro');
  return divideRounded(scaled, TOKENS_PER_PRICE_UNIT, rounding);
}

/** What a finished text request is charged: the provider-reported usage, to the nearest micro-dollar. */
export function textChargeMicro(prices: TokenPrices, usage: TokenUsage): bigint {
  return textCostMicro(prices, usage, 'nearest');
}

/**
 * The most a text request can cost, reserved before the provider is called: every estimated
 * input token at the dearer of the input prices (the cache may miss) plus the whole clamped
 * output limit at the output price, rounded up.
 */
export function textHoldMicro(prices: TokenPrices, estimate: { inputTokens: number; maxOutputTokens: number }): bigint {
  const dearestInput = prices.inputPerMTokMicro > prices.cachedInputPerMTokMicro ? prices.inputPerMTokMicro : prices.cachedInputPerMTokMicro;
  return textCostMicro(
    { inputPerMTokMicro: dearestInput, cachedInputPerMTokMicro: dearestInput, outputPerMTokMicro: prices.outputPerMTokMicro },
    { inputTokens: estimate.inputTokens, cachedInputTokens: 0, outputTokens: estimate.maxOutputTokens },
    'up',
  );
}

/**
 * Per-image or per-second media cost: count × unit price. Exact, so the hold (requested
 * count) and the charge (delivered count) need no rounding.
 */
export function mediaCostMicro(unitPriceMicro: bigint, units: number): bigint {
  return price(unitPriceMicro, 'unitPriceMicro') * tokenCount(units, 'units');
}
