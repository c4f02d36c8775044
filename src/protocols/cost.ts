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

/** The parts usageCost shows: a part added to CostPart fails to compile until it is shown too. */
type ShownPart = 'input' | 'cachedInput' | 'cacheWrite' | 'output' | 'images' | 'videoSeconds';
const EVERY_PART_SHOWN: [CostPart] extends [ShownPart] ? true : never = true;
void EVERY_PART_SHOWN;

/** Scaled parts are micro-dollars × 10^6: dollars have 12 decimals. */
const PART_DECIMALS = 6 + COST_PART_SCALE.toString().length - 1;

export function usageCost(cost: AnswerCost): UsageCostFields {
  const details: UsageCostFields['cost_details'] = {};
  // Each part by name, in the order answers show them (a text answer's four, then media's):
  // no key enumeration and no lookup by a variable key per answer.
  const { input, cachedInput, cacheWrite, output, images, videoSeconds } = cost.parts;
  if (input !== undefined) details.input = scaledNumber(input, PART_DECIMALS);
  if (cachedInput !== undefined) details.cached_input = scaledNumber(cachedInput, PART_DECIMALS);
  if (cacheWrite !== undefined) details.cache_write = scaledNumber(cacheWrite, PART_DECIMALS);
  if (output !== undefined) details.output = scaledNumber(output, PART_DECIMALS);
  if (images !== undefined) details.images = scaledNumber(images, PART_DECIMALS);
  if (videoSeconds !== undefined) details.video_seconds = scaledNumber(videoSeconds, PART_DECIMALS);
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
