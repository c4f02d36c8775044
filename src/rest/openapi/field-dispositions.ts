import type { FieldDisposition, FieldPolicy } from '../../protocols/field-policy';
import type { FieldsWith, FormatFieldPolicy, Refusal } from '../../protocols/apply-field-policy';
import type { JsonSchema } from './schema';

/**
 * A text format's request fields in the API document, from its field policy: every field says
 * its disposition (docs/api.md, "Field policy"), and a refused field is described by the very
 * message its refusal answers, so the document cannot drift from the decoder.
 */

const SAYS: Readonly<Record<Exclude<FieldDisposition, 'refused'>, string>> = {
  honoured: 'Honoured.',
  'passed-to-vendor':
    'Passed to the vendors that take it; for the others dropped and named in the answer header x-service-dropped-hints (the hint rule, docs/api.md).',
  metadata: 'Accepted as metadata: changes neither the answer nor the bill.',
  emulated: 'Emulated by Tollgate, exactly.',
};

const neutral = (refusal: Refusal): string =>
  Array.isArray(refusal.accepts)
    ? `Accepted only as ${refusal.accepts.map((v) => JSON.stringify(v)).join(' or ')} (or null). `
    : refusal.accepts
      ? 'Accepted only at its neutral value (or null). '
      : '';

/** The documented fields of a format: the schemas given for the fields it reads, each refused field from its refusal. */
export function documentedFields<P extends FieldPolicy>(
  policy: FormatFieldPolicy<P>,
  schemas: Readonly<Record<Exclude<keyof P & string, FieldsWith<P, 'refused'>>, JsonSchema>>,
): Record<keyof P & string, JsonSchema> {
  const fields: Record<string, JsonSchema> = {};
  for (const [field, disposition] of Object.entries(policy.table) as [string, FieldDisposition][]) {
    if (disposition === 'refused') {
      const refusal = (policy.refusals as Readonly<Record<string, Refusal>>)[field]!;
      fields[field] = { description: `Refused: 400 when set. ${neutral(refusal)}${field} ${refusal.problem}.` };
    } else {
      const schema = (schemas as Readonly<Record<string, JsonSchema>>)[field]!;
      fields[field] = { ...schema, description: [SAYS[disposition], schema.description].filter(Boolean).join(' ') };
    }
  }
  return fields as Record<keyof P & string, JsonSchema>;
}
