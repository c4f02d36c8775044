import { badRequest } from '../shared/errors';
import type { TextModel } from '../catalog/types';
import type { ReasoningEffort } from './canonical';
import { refuseTextField } from './field-keys';

/** Limits shared by all text formats (docs/text.md, Limits). */
export const DEFAULT_OUTPUT_TOKENS = 4096;
export const MAX_FUNCTION_TOOLS = 64;
export const MAX_SCHEMA_BYTES = 32 * 1024;
export const MIN_THINKING_HEADROOM = 1024;

export interface ClampedOutputLimit {
  maxOutputTokens: number;
  /** Set when the requested limit was above the model's maximum and lowered to it. */
  clampedTo: number | null;
}

/**
 * Validates and clamps an output limit: 0, negative or non-integer is 400 (`text.outputLimit`);
 * above the model's maximum is lowered (never refused); absent takes `fallback`.
 */
export function clampOutputLimit(model: TextModel, requested: unknown, fallback: number = DEFAULT_OUTPUT_TOKENS): ClampedOutputLimit {
  if (requested === undefined || requested === null) {
    const limit = Math.min(fallback, model.maxOutputTokens);
    return { maxOutputTokens: limit, clampedTo: null };
  }
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested <= 0) {
    refuseTextField('text.outputLimit', () => 'must be a positive integer');
  }
  if (requested > model.maxOutputTokens) return { maxOutputTokens: model.maxOutputTokens, clampedTo: model.maxOutputTokens };
  return { maxOutputTokens: requested, clampedTo: null };
}

/** One effort scale for every format: none and minimal mean low, xhigh means extra_high. */
export function mapReasoningEffort(value: unknown, field: string): ReasoningEffort | undefined {
  if (value === undefined || value === null) return undefined;
  switch (value) {
    case 'none':
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
    case 'xhigh':
    case 'extra_high':
      return 'extra_high';
    default:
      throw badRequest(`${field} must be one of none, minimal, low, medium, high, xhigh`, { field });
  }
}
