import type { JsonSchema } from '../domain/generation/canonical';
import { MAX_FUNCTION_TOOLS } from '../domain/generation/rules';
import { badRequest } from '../domain/shared/errors';

/**
 * The field reader and rules shared by the request decoders (text, images, videos). Every
 * refusal is a 400 `bad_request` whose message starts with the offending field's path
 * (`messages[2].content[0].type`) and whose `details.field` repeats it, so clients can point at
 * the exact spot.
 *
 * `null` counts as absent for optional fields: the official SDKs' types allow `null` for
 * most optional parameters, and some clients send it for "not set".
 */

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `messages` + 2 → `messages[2]`; `tool_choice` + `type` → `tool_choice.type`. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** Throws the 400 naming `field`. */
export function refuseField(field: string, problem: string): never {
  throw badRequest(`${field} ${problem}`, { field });
}

/**
 * The one refusal of fields outside a list, for JSON bodies, forms and nested objects alike (a
 * typo must not silently drop a setting): the first unknown name is `details.field`, all of them
 * `details.fields`. `parent` is the object's path, empty for the body.
 */
export function refuseUnknownFields(names: Iterable<string>, known: readonly string[], parent = ''): void {
  let unknown: Set<string> | null = null;
  for (const name of names) if (!known.includes(name)) (unknown ??= new Set()).add(name);
  if (unknown === null) return;
  const paths = [...unknown].map((name) => fieldPath(parent, name));
  throw badRequest(`${paths.join(', ')} ${paths.length > 1 ? 'are not known fields' : 'is not a known field'}`, {
    field: paths[0]!,
    fields: paths,
  });
}

const describeList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** A JSON object read field by field at a known path. */
export class Fields {
  private constructor(
    readonly path: string,
    readonly value: JsonObject,
  ) {}

  /** The request body: anything but a JSON object is refused. */
  static body(body: unknown): Fields {
    if (!isJsonObject(body)) throw badRequest('The request body must be a JSON object.', { field: null });
    return new Fields('', body);
  }

  /**
   * A multipart form's text fields read as a body: names outside `known` refused as in a JSON
   * body, and each name sent once (a form can repeat a name, which a JSON object cannot).
   */
  static form(parts: readonly { name: string; value: string }[], known: readonly string[]): Fields {
    refuseUnknownFields(
      parts.map((part) => part.name),
      known,
    );
    const value: Record<string, string> = {};
    for (const { name, value: text } of parts) {
      if (name in value) refuseField(name, 'must be sent once');
      value[name] = text;
    }
    return new Fields('', value);
  }

  /** A nested value that must be an object. */
  static at(value: unknown, path: string): Fields {
    if (!isJsonObject(value)) refuseField(path, 'must be an object');
    return new Fields(path, value);
  }

  field(key: string): string {
    return fieldPath(this.path, key);
  }

  /** The value, with `null` read as absent. */
  raw(key: string): unknown {
    const value = this.value[key];
    return value === null ? undefined : value;
  }

  isSet(key: string): boolean {
    return this.raw(key) !== undefined;
  }

  /** Refuses fields not in `known`. */
  allowOnly(known: readonly string[]): this {
    refuseUnknownFields(Object.keys(this.value), known, this.path);
    return this;
  }

  /** Refuses fields the API defines but Tollgate does not offer, when set to anything but null. */
  refuseIfSet(keys: readonly string[], reason = 'is not supported'): this {
    for (const key of keys) if (this.isSet(key)) refuseField(this.field(key), reason);
    return this;
  }

  /** Like `refuseIfSet`, but `false` is accepted too (the field's "off" value). */
  refuseIfEnabled(keys: readonly string[], reason = 'is not supported'): this {
    for (const key of keys) {
      const value = this.raw(key);
      if (value !== undefined && value !== false) refuseField(this.field(key), reason);
    }
    return this;
  }

  string(key: string): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'string') refuseField(this.field(key), 'must be a string');
    return value;
  }

  requiredString(key: string, options: { nonEmpty?: boolean } = {}): string {
    const value = this.string(key);
    if (value === undefined) refuseField(this.field(key), 'is required');
    if (options.nonEmpty && value.trim() === '') refuseField(this.field(key), 'must not be empty');
    return value;
  }

  number(key: string, range: { min: number; max: number }): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < range.min || value > range.max) {
      refuseField(this.field(key), `must be a number from ${range.min} to ${range.max}`);
    }
    return value;
  }

  integer(key: string, range: { min: number; max?: number }): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    const max = range.max ?? Number.MAX_SAFE_INTEGER;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > max) {
      refuseField(
        this.field(key),
        range.max === undefined ? `must be an integer of at least ${range.min}` : `must be an integer from ${range.min} to ${range.max}`,
      );
    }
    return value;
  }

  boolean(key: string): boolean | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') refuseField(this.field(key), 'must be a boolean');
    return value;
  }

  oneOf<const T extends string>(key: string, values: readonly T[]): T | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      refuseField(this.field(key), `must be one of ${describeList(values)}`);
    }
    return value as T;
  }

  requiredOneOf<const T extends string>(key: string, values: readonly T[]): T {
    const value = this.oneOf(key, values);
    if (value === undefined) refuseField(this.field(key), `is required (one of ${describeList(values)})`);
    return value;
  }

  object(key: string): Fields | undefined {
    const value = this.raw(key);
    return value === undefined ? undefined : Fields.at(value, this.field(key));
  }

  requiredObject(key: string): Fields {
    const value = this.object(key);
    if (!value) refuseField(this.field(key), 'is required');
    return value;
  }

  /** A JSON object kept as data (schemas, free-form formats). */
  jsonObject(key: string): JsonObject | undefined {
    return this.object(key)?.value;
  }

  array(key: string): unknown[] | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) refuseField(this.field(key), 'must be an array');
    return value;
  }

  requiredArray(key: string, options: { nonEmpty?: boolean } = {}): unknown[] {
    const value = this.array(key);
    if (value === undefined) refuseField(this.field(key), 'is required');
    if (options.nonEmpty && value.length === 0) refuseField(this.field(key), 'must not be empty');
    return value;
  }

  /** Each element of an array field as an object. */
  objects(key: string): Fields[] | undefined {
    return this.array(key)?.map((item, i) => Fields.at(item, fieldPath(this.field(key), i)));
  }

  /** An array of strings. */
  strings(key: string): string[] | undefined {
    const list = this.array(key);
    list?.forEach((item, i) => {
      if (typeof item !== 'string') refuseField(fieldPath(this.field(key), i), 'must be a string');
    });
    return list as string[] | undefined;
  }

  /** A `{string: string}` map (headers, metadata). */
  stringMap(key: string): Record<string, string> | undefined {
    const map = this.object(key);
    if (!map) return undefined;
    for (const [name, value] of Object.entries(map.value)) {
      if (typeof value !== 'string') refuseField(map.field(name), 'must be a string');
    }
    return map.value as Record<string, string>;
  }
}

// ---------------------------------------------------------------------------------------------
// Rules shared by the formats
// ---------------------------------------------------------------------------------------------

/** The common denominator of the vendors' tool-name rules, so a name valid here is valid upstream. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Tool and schema names: 1–64 letters, digits, `_` or `-`. */
export function nameAt(fields: Fields, key: string): string {
  const name = fields.requiredString(key);
  if (!TOOL_NAME.test(name)) refuseField(fields.field(key), 'must be 1 to 64 letters, digits, underscores or dashes');
  return name;
}

/** Up to 64 tools per request (the common limit of the vendors behind Tollgate). */
export function checkToolCount(tools: readonly unknown[], field: string): void {
  if (tools.length > MAX_FUNCTION_TOOLS) refuseField(field, `must hold at most ${MAX_FUNCTION_TOOLS} tools (got ${tools.length})`);
}

/** Parameters of a function declared without any: an object with no properties (a fresh one, as egress may adapt it). */
export const emptyParameters = (): JsonSchema => ({ type: 'object', properties: {} });

/** Several text parts of one message become one canonical string, a line apart. */
export const joinTextParts = (parts: readonly string[]): string => parts.join('\n');

/** Drops keys whose value is undefined, so decoded requests hold only what was set. */
export function compact<T extends object>(value: T): T {
  // A loop rather than fromEntries(entries().filter()): three arrays and a pair per field less on every request.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) out[key] = field;
  }
  return out as T;
}

/** The first value that is set; both arguments are evaluated, so both fields are validated. */
export const preferFirst = <T>(first: T | undefined, second: T | undefined): T | undefined => first ?? second;
