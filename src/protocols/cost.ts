import type { AnswerCost, CostPart } from '../domain/billing/answer-cost';
import { COST_PART_SCALE } from '../domain/billing/pricing';
import { formatScaled } from '../domain/shared/money';

/**
 * `usage.cost` as every answer carries it (OpenRouter's field: US dollars as a number), with the
 * exact charge as a micro-dollar string and the parts it was rounded from, in dollars.
 */
export interface UsageCostFields {
  cost: number;
  cost_micro: string;
  cost_details: Partial<Record<'input' | 'cached_input' | 'cache_write' | 'output' | 'images' | 'video_seconds', number>>;
}

const WIRE_PART: Record<CostPart, keyof UsageCostFields['cost_details']> = {
  input: 'input',
  cachedInput: 'cached_input',
  cacheWrite: 'cache_write',
  output: 'output',
  images: 'images',
  videoSeconds: 'video_seconds',
};

/** Scaled parts are micro-dollars × 10^6: dollars have 12 decimals. */
const PART_DECIMALS = 6 + COST_PART_SCALE.toString().length - 1;

/** Every part, in the order answers show them (a text answer's four, then media's). */
const PARTS = Object.keys(WIRE_PART) as CostPart[];

export function usageCost(cost: AnswerCost): UsageCostFields {
  const details: UsageCostFields['cost_details'] = {};
  const { parts } = cost;
  // A fixed list rather than `for…in` over the parts: no key enumeration per answer.
  for (const part of PARTS) {
    const amount = parts[part];
    if (amount !== undefined) details[WIRE_PART[part]] = scaledNumber(amount, PART_DECIMALS);
  }
  return { cost: scaledNumber(cost.chargedMicro, 6), cost_micro: cost.chargedMicro.toString(), cost_details: details };
}

/** Exact powers of ten as doubles (10^22 is the largest). */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, exponent) => Number(`1e${exponent}`));
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * `amount / 10^scale` as a number: the double nearest to it, which is what parsing its decimal
 * text gives. While both are exact as doubles, one division gives that double too (IEEE division
 * rounds the exact quotient once), without writing and parsing the text on every answer.
 */
export function scaledNumber(amount: bigint, scale: number): number {
  if (scale < POWERS_OF_TEN.length && amount <= MAX_EXACT && amount >= -MAX_EXACT) return Number(amount) / POWERS_OF_TEN[scale]!;
  return Number(formatScaled(amount, scale));
}

/** The cost fields when the answer's cost is known (a finished answer), none otherwise. */
export const usageCostIfKnown = (cost: AnswerCost | undefined): Partial<UsageCostFields> => (cost ? usageCost(cost) : {});
