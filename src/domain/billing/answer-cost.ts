import { COST_PART_SCALE, type TextCostParts } from './pricing';

/** The parts an answer's cost is shown in; only those that apply to it are present. */
export type CostPart = keyof TextCostParts | 'images' | 'videoSeconds';

/**
 * What an answer cost, shown on the answer itself (docs/api.md, Cost on every answer): the
 * charge, and the exact parts it was rounded from (micro-dollars × 10^6).
 */
export interface AnswerCost {
  /** Charged, micro-dollars: the cost to the nearest micro-dollar, at most the request's hold. */
  chargedMicro: bigint;
  parts: Partial<Record<CostPart, bigint>>;
}

/** A text answer's cost: its charge and the parts (textCostParts) it was rounded from. */
export function textAnswerCost(parts: TextCostParts, chargedMicro: bigint): AnswerCost {
  return { chargedMicro, parts };
}

/** Images and video seconds are priced per unit: the part is the charge itself (exact). */
export function mediaAnswerCost(part: 'images' | 'videoSeconds', chargedMicro: bigint): AnswerCost {
  return { chargedMicro, parts: { [part]: chargedMicro * COST_PART_SCALE } };
}
