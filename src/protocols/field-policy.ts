import type { HintNames } from '../domain/generation/hints';

/**
 * What a wire format does with each top-level field of its current request schema: one table
 * per format, beside its decoder (docs/api.md, "Field policy"). A field in no table is unknown
 * and refused with a 400 naming it.
 */
export type FieldDisposition =
  /** Acted on by the pipeline. */
  | 'honoured'
  /** Passed to the vendors that take it; for the others, the hint rule (domain/generation/hints.ts). */
  | 'passed-to-vendor'
  /** Accepted as metadata; changes neither the answer nor the bill. */
  | 'metadata'
  /** Done by Tollgate itself, exactly. */
  | 'emulated'
  /** Refused with a message saying what the client should change. */
  | 'refused';

export type FieldPolicy<Field extends string = string> = Readonly<Record<Field, FieldDisposition>>;

/**
 * How the formats name the canonical hints at the top level of a request (each format changes
 * its own spellings: Responses' `text.verbosity`), for the answer's `x-service-dropped-hints`.
 */
export const TOP_LEVEL_HINT_NAMES: HintNames = {
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  seed: 'seed',
  verbosity: 'verbosity',
  parallelToolCalls: 'parallel_tool_calls',
};
