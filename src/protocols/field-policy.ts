/**
 * What a wire format does with each top-level field of its current request schema: one table
 * per format, beside its decoder (docs/api.md, "Field policy"). A field in no table is unknown
 * and refused with a 400 naming it.
 */
export type FieldDisposition =
  /** Acted on by the pipeline. */
  | 'honoured'
  /** Passed to the vendors whose protocol has it; for others, the hint rule decides. */
  | 'passed-to-vendor'
  /** Accepted as metadata; changes neither the answer nor the bill. */
  | 'metadata'
  /** Done by Tollgate itself, exactly. */
  | 'emulated'
  /** Refused with a message saying what the client should change. */
  | 'refused';

export type FieldPolicy<Field extends string = string> = Readonly<Record<Field, FieldDisposition>>;
