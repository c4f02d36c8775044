import type { FieldDisposition, FieldPolicy } from './field-policy';
import { type Fields, refuseField } from './decode-fields';

/**
 * How every format's decoder applies its field policy (docs/api.md, "Field policy"), the same
 * for Chat Completions, Responses and Messages: a field in no table is refused as unknown; a
 * refused field is refused unless it holds its neutral value; a metadata field is checked for
 * shape and left alone. The decoder itself reads the honoured, passed and emulated fields.
 */

/** The fields of a policy that have a given disposition. */
export type FieldsWith<P, D extends FieldDisposition> = { [K in keyof P]: P[K] extends D ? K : never }[keyof P] & string;

/** How a refused field is refused. */
export interface Refusal {
  /**
   * The values that leave the feature off, accepted so that clients sending defaults work
   * (`store: false`, `n: 1`); null always counts as absent.
   */
  accepts?: readonly (string | number | boolean)[] | ((value: unknown) => boolean);
  /** Completes "<field> …": why it cannot be honoured and what the client should change. */
  problem: string;
}

export type Refusals<P> = Readonly<Record<FieldsWith<P, 'refused'>, Refusal>>;

/** A metadata field's shape check (the value is then left alone, or forwarded untouched). */
export type MetadataChecks<P> = Readonly<Record<FieldsWith<P, 'metadata'>, (req: Fields, field: string) => unknown>>;

/** A format's whole field policy: the table and what its refused and metadata fields need. */
export interface FormatFieldPolicy<P extends FieldPolicy> {
  table: P;
  refusals: Refusals<P>;
  metadata: MetadataChecks<P>;
}

/** A table's fields: for a top-level table, the only fields a request may carry (nested tables: an object's). */
export const fieldsOf = <P extends FieldPolicy>(table: P): readonly (keyof P & string)[] => Object.keys(table) as (keyof P & string)[];

/** The fields of a table that have a given disposition. */
export const fieldsWith = <P extends FieldPolicy, D extends FieldDisposition>(table: P, disposition: D): readonly FieldsWith<P, D>[] =>
  fieldsOf(table).filter((field): field is FieldsWith<P, D> => (table[field] as FieldDisposition) === disposition);

/** A field's value is one of its accepted neutral values. */
function isNeutral(refusal: Refusal, value: unknown): boolean {
  const { accepts } = refusal;
  if (accepts === undefined) return false;
  if (typeof accepts === 'function') return accepts(value);
  return (accepts as readonly unknown[]).includes(value);
}

/** A policy's lists in the order it declares them, listed once rather than on every request (a request allocates none of them). */
interface PolicyLists {
  known: readonly string[];
  refusals: readonly (readonly [string, Refusal])[];
  metadata: readonly (readonly [string, (req: Fields, field: string) => unknown])[];
  /** The refused and metadata fields' names: a body that sends none of them needs neither loop. */
  checked: ReadonlySet<string>;
}

const listsByPolicy = new WeakMap<object, PolicyLists>();

function listsOf<P extends FieldPolicy>(policy: FormatFieldPolicy<P>): PolicyLists {
  let lists = listsByPolicy.get(policy);
  if (!lists) {
    lists = {
      known: fieldsOf(policy.table),
      refusals: Object.entries(policy.refusals) as [string, Refusal][],
      metadata: Object.entries(policy.metadata) as [string, (req: Fields, field: string) => unknown][],
      checked: new Set([...Object.keys(policy.refusals), ...Object.keys(policy.metadata)]),
    };
    listsByPolicy.set(policy, lists);
  }
  return lists;
}

/** Refuses unknown fields (naming the first), then refused fields set to anything but a neutral value; checks metadata shapes. */
export function applyFieldPolicy<P extends FieldPolicy>(req: Fields, policy: FormatFieldPolicy<P>): void {
  const { known, refusals, metadata, checked } = listsOf(policy);
  req.allowOnly(known);
  // A body names a few fields and a policy refuses or checks dozens: look the dozens up only when
  // the body sends one of them (an absent field passes both checks). Then in the policy's order,
  // so that the field an error names does not depend on the body's order.
  if (!sendsAnyOf(req.value, checked)) return;
  for (const [field, refusal] of refusals) {
    const value = req.raw(field);
    if (value !== undefined && !isNeutral(refusal, value)) refuseField(req.field(field), refusal.problem);
  }
  for (const [field, check] of metadata) check(req, field);
}

function sendsAnyOf(body: object, names: ReadonlySet<string>): boolean {
  for (const key in body) if (names.has(key)) return true;
  return false;
}

/** A `{string: string}` map of at most `maxPairs` pairs (OpenAI's metadata). */
export function checkStringMap(maxPairs: number): (req: Fields, field: string) => Record<string, string> | undefined {
  return (req, field) => {
    const map = req.stringMap(field);
    if (map && Object.keys(map).length > maxPairs) refuseField(req.field(field), `must hold at most ${maxPairs} pairs`);
    return map;
  };
}

/** An empty object or array: the "nothing asked" value of a refused structured field. */
export const isEmpty = (value: unknown): boolean =>
  (Array.isArray(value) && value.length === 0) || (typeof value === 'object' && value !== null && Object.keys(value).length === 0);
