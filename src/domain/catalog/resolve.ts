import { modelNotAvailable } from '../shared/errors';
import { isModelUsable, unusableReason } from './access';
import type { Catalog, CatalogModel, ModelAccess, ModelByKind, ModelKind } from './types';

/**
 * Model id resolution (docs/api.md, Model ids). A sent id is reduced to a canonical name by a fixed chain
 * of rewrites (case, `models/` and vendor prefixes, cloud forms, separators, date and
 * release suffixes); every name the catalog knows for a model is reduced the same way once
 * per catalog into a Map. A request then costs a handful of string operations and one Map
 * lookup; there is no prefix or fuzzy matching, so `gpt-4o` never finds `gpt-4o-mini`.
 */

export interface ResolvedModel<M extends CatalogModel = CatalogModel> {
  readonly model: M;
  /** The id as sent when it differs (byte for byte) from the service id, else null. */
  readonly routedFrom: string | null;
}

/**
 * Resolves `sentId` to the one model of `kind` that it names and the key can use; throws
 * 404 `model_not_available` otherwise (unknown, ambiguous or not usable by this key).
 */
export function resolveModelId<K extends ModelKind>(
  catalog: Catalog,
  sentId: string,
  kind: K,
  access: ModelAccess,
): ResolvedModel<ModelByKind[K]> {
  const model = findUsableModel(catalog, sentId, kind, access);
  if (!model) throw modelNotAvailable(sentId, whyUnusable(catalog, sentId, kind, access));
  return { model, routedFrom: sentId === model.id ? null : sentId };
}

/** When the id names exactly one model of the catalog (whoever may use it): why this key cannot. */
function whyUnusable(catalog: Catalog, sentId: string, kind: ModelKind, access: ModelAccess): string | undefined {
  const exact = catalog.byId.get(sentId);
  const named = exact ? (exact.kind === kind ? [exact] : []) : [...new Set(lookup(indexOf(catalog), sentId, kind)?.canonical ?? [])];
  if (named.length !== 1) return undefined;
  const reason = unusableReason(catalog, named[0]!, access);
  return reason && named[0]!.id !== sentId ? `('${named[0]!.id}') ${reason}` : reason;
}

function findUsableModel<K extends ModelKind>(catalog: Catalog, sentId: string, kind: K, access: ModelAccess): ModelByKind[K] | undefined {
  // The exact service id is final: a known but unusable model never falls through to another.
  const exact = catalog.byId.get(sentId);
  if (exact) return exact.kind === kind && isModelUsable(exact, access) ? (exact as ModelByKind[K]) : undefined;

  const matches = lookup(indexOf(catalog), sentId, kind);
  if (!matches) return undefined;
  const usable = matches.canonical.filter((model) => isModelUsable(model, access));
  if (usable.length === 1) return usable[0] as ModelByKind[K];
  if (usable.length === 0) return undefined;
  // Several usable models share the canonical name: only a literal name can pick one.
  const literal = matches.literal.filter((model) => isModelUsable(model, access));
  return literal.length === 1 ? (literal[0] as ModelByKind[K]) : undefined;
}

// --- parsing a sent id --------------------------------------------------------------------

const MAX_ID_LENGTH = 256;
/** Bedrock cross-region inference profiles put one of these before the provider. */
const BEDROCK_REGION = /^(?:us|us-gov|eu|apac|jp|au|ca|global)\./;
const BEDROCK_PROVIDER = /^([a-z][a-z0-9-]*)\.(.+)$/;
/** Bedrock version (`-v1:0`, `-v2:0:200k`) and Vertex version (`@20250929`, `@001`). */
const CLOUD_VERSION = /(?:-v\d+(?::[0-9a-z]+)*|@[0-9a-z._-]+)$/;
/**
 * Release suffixes that do not change which model is meant: `-latest`, `-preview`, `-exp`,
 * dates (`-20250929`, `-2024-07-18`, `-05-20`, `-09-2025`, `-0613`) and versions (`-001`).
 */
const RELEASE_SUFFIX = /-(?:latest|preview|exp|\d{8}|\d{4}-\d{2}-\d{2}|\d{2}-\d{2}|\d{2}-\d{4}|\d{4}|\d{3})$/;

interface ParsedId {
  /** Known namespaces or vendors the id was qualified with (`google/…`, `anthropic.…`). */
  readonly qualifiers: readonly string[];
  /** The bare model name, lowercased, not yet canonical. */
  readonly name: string;
}

function parseSentId(sentId: string, knownPrefixes: ReadonlySet<string>): ParsedId | undefined {
  if (sentId.length === 0 || sentId.length > MAX_ID_LENGTH) return undefined;
  const segments = sentId.toLowerCase().split('/');
  if (segments.some((segment) => segment === '')) return undefined;

  const qualifiers: string[] = [];
  const qualify = (prefix: string) => {
    // Unknown prefixes (`openrouter/`, `vertex_ai/`, `bedrock/`) are routing noise, ignored.
    if (knownPrefixes.has(prefix)) qualifiers.push(prefix);
  };

  // Vertex resource paths: `[projects/p/locations/l/]publishers/<publisher>/models/<name>`.
  const publishers = segments.lastIndexOf('publishers');
  let rest = publishers >= 0 ? segments.slice(publishers + 1) : segments;
  if (publishers >= 0 && rest.length > 0) qualify(rest[0]);
  // Gemini's `models/<name>`, and the same after a prefix.
  rest = rest.filter((segment) => segment !== 'models');
  if (rest.length === 0) return undefined;
  if (publishers < 0) rest.slice(0, -1).forEach(qualify);
  let name = rest[rest.length - 1];

  // Bedrock: `[region.]<provider>.<name>`, only when the provider is one we know, since dots
  // also appear in plain names (`gpt-4.1`).
  const withoutRegion = name.replace(BEDROCK_REGION, '');
  const bedrock = BEDROCK_PROVIDER.exec(withoutRegion);
  if (bedrock && knownPrefixes.has(bedrock[1])) {
    qualifiers.push(bedrock[1]);
    name = bedrock[2];
  }
  return { qualifiers, name };
}

/**
 * The canonical form of a bare model name; exported for tests and diagnostics.
 * `Claude-Sonnet-4.5@20250929` → `claude-sonnet-4-5`; `gemini-2.5-flash-preview-05-20` →
 * `gemini-2-5-flash`.
 */
export function canonicalModelName(name: string): string {
  let canonical = name
    .toLowerCase()
    .replace(CLOUD_VERSION, '')
    .replace(/[._-]+/g, '-')
    .replace(/^-|-$/g, '');
  for (;;) {
    const stripped = canonical.replace(RELEASE_SUFFIX, '');
    // Never strip a name down to nothing but digits: that would no longer name a model.
    if (stripped === canonical || !/[a-z]/.test(stripped)) return canonical;
    canonical = stripped;
  }
}

// --- the per-catalog index ----------------------------------------------------------------

interface Entry {
  readonly model: CatalogModel;
  /** Qualifiers allowed in front of this name: the model's namespace and vendor (and a retired id's namespace). */
  readonly prefixes: Set<string>;
}

interface KindIndex {
  readonly canonical: Map<string, Entry[]>;
  readonly literal: Map<string, Entry[]>;
}

interface Matches {
  readonly canonical: readonly CatalogModel[];
  readonly literal: readonly CatalogModel[];
}

interface ModelIndex {
  readonly kinds: Readonly<Record<ModelKind, KindIndex>>;
  readonly knownPrefixes: ReadonlySet<string>;
  /** Sent id → matches before the per-key usability filter. Bounded: ids come from callers. */
  readonly cache: Map<string, Matches | null>;
}

const CACHE_LIMIT = 4096;
const indexes = new WeakMap<Catalog, ModelIndex>();

function indexOf(catalog: Catalog): ModelIndex {
  let index = indexes.get(catalog);
  if (!index) {
    index = buildIndex(catalog);
    indexes.set(catalog, index);
  }
  return index;
}

function buildIndex(catalog: Catalog): ModelIndex {
  const kinds: Record<ModelKind, KindIndex> = {
    text: { canonical: new Map(), literal: new Map() },
    image: { canonical: new Map(), literal: new Map() },
    video: { canonical: new Map(), literal: new Map() },
  };
  const knownPrefixes = new Set<string>();

  const add = (model: CatalogModel, names: readonly string[], prefixes: readonly string[]) => {
    prefixes.forEach((prefix) => knownPrefixes.add(prefix));
    const kindIndex = kinds[model.kind];
    for (const name of names.map(bareName)) {
      addEntry(kindIndex.canonical, canonicalModelName(name), model, prefixes);
      addEntry(kindIndex.literal, name.toLowerCase(), model, prefixes);
    }
  };

  for (const model of catalog.byId.values()) {
    add(model, [model.id, model.vendorModelId, ...model.aliases], [model.namespace, model.vendor]);
  }
  for (const retired of catalog.retired) {
    const successor = catalog.byId.get(retired.successor);
    if (successor) {
      add(successor, [retired.id, ...retired.aliases], [retired.namespace, successor.namespace, successor.vendor]);
    }
  }
  return { kinds, knownPrefixes, cache: new Map() };
}

function addEntry(map: Map<string, Entry[]>, key: string, model: CatalogModel, prefixes: readonly string[]): void {
  const entries = map.get(key) ?? [];
  const existing = entries.find((entry) => entry.model === model);
  if (existing) prefixes.forEach((prefix) => existing.prefixes.add(prefix));
  else entries.push({ model, prefixes: new Set(prefixes) });
  map.set(key, entries);
}

/** The part after the last slash: service ids, and vendor ids that are paths (`meta-llama/…`). */
const bareName = (id: string): string => id.slice(id.lastIndexOf('/') + 1);

function lookup(index: ModelIndex, sentId: string, kind: ModelKind): Matches | null {
  const cacheKey = `${kind}\u0000${sentId}`;
  const cached = index.cache.get(cacheKey);
  if (cached !== undefined) return cached;

  let matches: Matches | null = null;
  const parsed = parseSentId(sentId, index.knownPrefixes);
  if (parsed) {
    const kindIndex = index.kinds[kind];
    const pick = (entries: readonly Entry[] | undefined) =>
      (entries ?? []).filter((entry) => parsed.qualifiers.every((qualifier) => entry.prefixes.has(qualifier))).map((entry) => entry.model);
    const canonical = pick(kindIndex.canonical.get(canonicalModelName(parsed.name)));
    if (canonical.length > 0) matches = { canonical, literal: pick(kindIndex.literal.get(parsed.name)) };
  }

  if (index.cache.size >= CACHE_LIMIT) index.cache.clear();
  index.cache.set(cacheKey, matches);
  return matches;
}
