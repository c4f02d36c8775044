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

export function usageCost(cost: AnswerCost): UsageCostFields {
  const details: UsageCostFields['cost_details'] = {};
  for (const [part, scaled] of Object.entries(cost.parts) as [CostPart, bigint][])
    details[WIRE_PART[part]] = Number(formatScaled(scaled, PART_DECIMALS));
  return { cost: Number(formatScaled(cost.chargedMicro, 6)), cost_micro: cost.chargedMicro.toString(), cost_details: details };
}

/** The cost fields when the answer's cost is known (a finished answer), none otherwise. */
export const usageCostIfKnown = (cost: AnswerCost | undefined): Partial<UsageCostFields> => (cost ? usageCost(cost) : {});
