/**
 * Small builders for the JSON Schema (2020-12, as OpenAPI 3.1 uses it) of the API document, so
 * the tables stay readable. Schemas are plain data.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

export const str = (description?: string, extra: Record<string, unknown> = {}): JsonSchema => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
});
export const int = (description?: string, extra: Record<string, unknown> = {}): JsonSchema => ({
  type: 'integer',
  ...(description ? { description } : {}),
  ...extra,
});
export const bool = (description?: string): JsonSchema => ({ type: 'boolean', ...(description ? { description } : {}) });
export const num = (description?: string): JsonSchema => ({ type: 'number', ...(description ? { description } : {}) });
export const oneOf = (values: readonly string[], description?: string): JsonSchema => ({
  type: 'string',
  enum: [...values],
  ...(description ? { description } : {}),
});
export const arrayOf = (items: JsonSchema, description?: string): JsonSchema => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
});
export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
/** A value the decoder reads with its own checks (an object, array or scalar as the wire format allows). */
export const any = (description: string): JsonSchema => ({ description });
/** A decimal string of micro-dollars (millionths of USD): money never travels as a float. */
export const micro = (description: string): JsonSchema => ({ type: 'string', pattern: '^[0-9]+$', description });

/** An object of exactly these properties (others refused), `required` among them. */
export function object(
  properties: Readonly<Record<string, JsonSchema>>,
  required: readonly string[] = [],
  description?: string,
): JsonSchema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties: { ...properties },
    ...(required.length > 0 ? { required: [...required] } : {}),
    additionalProperties: false,
  };
}

/** An answer object: its documented properties, more may appear. */
export function answer(
  properties: Readonly<Record<string, JsonSchema>>,
  required: readonly string[] = Object.keys(properties),
  description?: string,
): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), properties: { ...properties }, required: [...required] };
}

/** `usage.cost` and its parts, as every answer that was charged carries them (docs/api.md, Cost on every answer). */
export const USAGE_COST_FIELDS: Readonly<Record<string, JsonSchema>> = {
  cost: num("What the request was charged, in US dollars (OpenRouter's field)."),
  cost_micro: micro('The same charge, exact, in micro-dollars.'),
  cost_details: {
    type: 'object',
    description:
      'The exact parts the charge was rounded from, in US dollars: input, cached_input, cache_write, output (text); images; video_seconds. Only the parts that apply.',
    additionalProperties: num(),
  },
};
