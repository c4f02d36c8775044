import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { parseUsdDecimal } from '../shared/money';
import { describeSchemaIssue, formatFieldPath } from '../shared/schema-issues';
import { BUILTIN_CATALOG_SOURCE } from './builtin';
import { catalogSourceSchema, FIXED_OPTION_SHAPE, type ParsedCatalogSource, SIZE_SHAPE } from './schema';
import {
  type Catalog,
  type CatalogModel,
  type ImageModel,
  type ModelByKind,
  type ModelKind,
  type Deployment,
  type RetiredModel,
  type VendorDefaults,
  SANDBOX_VENDOR,
  type TextModel,
  type TextPricing,
  type VendorProtocol,
  type VideoModel,
} from './types';
import { vertexPublisher } from './vendors';

/**
 * Loads the catalog: the built-in one without a path, else the JSON file at `file` (the
 * TOLLGATE_CATALOG variable), which replaces the built-in catalog entirely. A bad file throws
 * an Error naming the file and the offending field, so start-up stops with a useful message.
 */
export function loadCatalog(file?: string): Catalog {
  if (file === undefined || file === '') return builtinCatalog();
  const origin = `TOLLGATE_CATALOG ${file}`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${origin}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${origin}: is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  return parseCatalog(json, origin);
}

let builtin: Catalog | undefined;

/** The built-in catalog, validated once through the same path as a catalog file. */
export function builtinCatalog(): Catalog {
  builtin ??= parseCatalog(BUILTIN_CATALOG_SOURCE, 'built-in catalog');
  return builtin;
}

/** Validates catalog source data (already parsed JSON); `origin` prefixes error messages. */
export function parseCatalog(source: unknown, origin: string): Catalog {
  const parsed = catalogSourceSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${origin}: ${describeIssue(issue)}`);
  }
  try {
    return buildCatalog(parsed.data);
  } catch (error) {
    if (error instanceof FieldError) throw new Error(`${origin}: ${formatPath(error.path)} ${error.message}`);
    throw error;
  }
}

/** The model with exactly this service id, of any kind or of the given kind. */
export function findModel(catalog: Catalog, id: string): CatalogModel | undefined;
export function findModel<K extends ModelKind>(catalog: Catalog, id: string, kind: K): ModelByKind[K] | undefined;
export function findModel(catalog: Catalog, id: string, kind?: ModelKind): CatalogModel | undefined {
  const model = catalog.byId.get(id);
  return model && (kind === undefined || model.kind === kind) ? model : undefined;
}

/**
 * Cost of `tokens` at a per-million price, in micro-dollars. Rounding happens here, once:
 * up for holds (never under-reserve), to the nearest micro-dollar for charges.
 */
export function priceTokensMicro(tokens: bigint | number, perMTokMicro: bigint, rounding: 'up' | 'nearest'): bigint {
  const product = BigInt(tokens) * perMTokMicro;
  return rounding === 'up' ? (product + 999_999n) / 1_000_000n : (product + 500_000n) / 1_000_000n;
}

// --- building and cross-field validation ----------------------------------------------

type Path = readonly (string | number)[];

class FieldError extends Error {
  constructor(
    readonly path: Path,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_PROTOCOL: Readonly<Record<string, VendorProtocol>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
  [SANDBOX_VENDOR]: 'sandbox',
};

type ModelSource = ParsedCatalogSource['models'][number];

function buildCatalog(source: ParsedCatalogSource): Catalog {
  const byId = new Map<string, CatalogModel>();
  const idPaths = new Map<string, string>();
  const vendors = new Map<string, VendorProtocol>();
  const vendorDefaults = buildVendorDefaults(source.vendors ?? {});
  const text: TextModel[] = [];
  /** A vendor speaks one protocol, whichever model or deployment names it. */
  const claimVendor = (vendor: string, protocol: VendorProtocol, at: Path) => {
    const known = vendors.get(vendor);
    if (known !== undefined && known !== protocol)
      throw new FieldError(at, `must be "${known}" like the other models of vendor "${vendor}"`);
    vendors.set(vendor, protocol);
  };
  const images: ImageModel[] = [];
  const videos: VideoModel[] = [];

  source.models.forEach((entry, index) => {
    const at: Path = ['models', index];
    claimId(idPaths, entry.id, at);
    const model = buildModel(entry, at, vendorDefaults);
    claimVendor(model.vendor, model.protocol, [...at, 'protocol']);
    model.deployments.forEach((d, i) => claimVendor(d.vendor, d.protocol, [...at, 'deployments', i, 'vendor']));
    byId.set(model.id, model);
    if (model.kind === 'text') text.push(model);
    else if (model.kind === 'image') images.push(model);
    else videos.push(model);
  });

  source.models.forEach((entry, index) => {
    if (entry.kind !== 'video' && entry.fallback !== undefined) checkFallback(entry, byId, ['models', index, 'fallback']);
  });

  const retired: RetiredModel[] = (source.retired ?? []).map((entry, index) => {
    const at: Path = ['retired', index];
    claimId(idPaths, entry.id, at);
    if (!byId.has(entry.successor)) throw new FieldError([...at, 'successor'], `must be the id of a model in the catalog`);
    return freeze({
      id: entry.id,
      namespace: namespaceOf(entry.id),
      successor: entry.successor,
      aliases: freeze(uniqueStrings(entry.aliases ?? [], [...at, 'aliases'])),
    });
  });

  return freeze({
    text: freeze(text),
    images: freeze(images),
    videos: freeze(videos),
    retired: freeze(retired),
    byId,
    vendors,
    vendorDefaults,
  });
}

/** A fallback is another priced model of the catalog of its kind, for a model that routes (only routing knows its deployments are cooled). */
function checkFallback(entry: Extract<ModelSource, { kind: 'text' | 'image' }>, byId: ReadonlyMap<string, CatalogModel>, at: Path): void {
  if (!entry.deployments) throw new FieldError(at, 'needs a deployments list (the fallback serves when every deployment is cooled)');
  if (entry.fallback === entry.id) throw new FieldError(at, 'must name another model');
  const target = byId.get(entry.fallback!);
  if (target?.kind !== entry.kind)
    throw new FieldError(at, `must be the id of ${entry.kind === 'text' ? 'a text' : 'an image'} model in the catalog`);
  if (target.pricing === null) throw new FieldError(at, 'must name a priced model');
}

function buildVendorDefaults(source: NonNullable<ParsedCatalogSource['vendors']>): Map<string, VendorDefaults> {
  const defaults = new Map<string, VendorDefaults>();
  for (const [vendor, entry] of Object.entries(source)) {
    if ((vendor === SANDBOX_VENDOR) !== (entry.protocol === 'sandbox'))
      throw new FieldError(['vendors', vendor, 'protocol'], 'must be "sandbox" exactly when the vendor is "sandbox"');
    if (entry.protocol === 'bedrock' && entry.region === undefined && entry.base_url === undefined)
      throw new FieldError(['vendors', vendor, 'region'], 'is required for a bedrock vendor without base_url');
    if (entry.protocol === 'vertex' && entry.region === undefined)
      throw new FieldError(['vendors', vendor, 'region'], 'is required for a vertex vendor (its location, or "global")');
    if (entry.project !== undefined && entry.protocol !== 'vertex')
      throw new FieldError(['vendors', vendor, 'project'], 'is for a vertex vendor only');
    defaults.set(
      vendor,
      freeze({
        protocol: entry.protocol,
        baseUrl: entry.base_url?.replace(/\/+$/, '') ?? null,
        apiKeyEnv: entry.api_key_env ?? null,
        secretKeyEnv: entry.secret_key_env ?? null,
        apiVersion: entry.api_version ?? null,
        region: entry.region ?? null,
        project: entry.project ?? null,
      }),
    );
  }
  return defaults;
}

/** A vendor's protocol: its `vendors` entry, else the well-known name's, else OpenAI-compatible. */
const protocolOf = (vendor: string, defaults: ReadonlyMap<string, VendorDefaults>): VendorProtocol =>
  defaults.get(vendor)?.protocol ?? DEFAULT_PROTOCOL[vendor] ?? 'openai-compatible';

/** The model's deployments, by priority; without a list, the one its own vendor makes. */
function buildDeployments(
  entry: ModelSource,
  base: { vendor: string; protocol: VendorProtocol; vendorModelId: string },
  at: Path,
  defaults: ReadonlyMap<string, VendorDefaults>,
): readonly Deployment[] {
  if (entry.deployments === undefined) {
    checkVertexModel(base.protocol, base.vendorModelId, [...at, 'vendor_model_id']);
    return freeze([
      freeze({
        name: base.vendor,
        vendor: base.vendor,
        protocol: base.protocol,
        vendorModelId: base.vendorModelId,
        priority: 0,
        weight: 1,
      }),
    ]);
  }
  const seen = new Set<string>();
  const deployments = entry.deployments.map((d, i) => {
    if (seen.has(d.vendor))
      throw new FieldError([...at, 'deployments', i, 'vendor'], `repeats the vendor "${d.vendor}" (one deployment per vendor and model)`);
    seen.add(d.vendor);
    const protocol = protocolOf(d.vendor, defaults);
    if (protocol === 'sandbox' || d.vendor === SANDBOX_VENDOR)
      throw new FieldError([...at, 'deployments', i, 'vendor'], 'must not be the sandbox');
    const vendorModelId = d.vendor_model_id ?? base.vendorModelId;
    checkVertexModel(protocol, vendorModelId, [...at, 'deployments', i, 'vendor_model_id']);
    return freeze({
      name: d.vendor,
      vendor: d.vendor,
      protocol,
      vendorModelId,
      priority: d.priority ?? 0,
      weight: d.weight ?? 1,
    });
  });
  return freeze(deployments.sort((a, b) => a.priority - b.priority));
}

/** The vendor kinds whose image API an image model's deployment can call. */
const IMAGE_DEPLOYMENT_PROTOCOLS: ReadonlySet<VendorProtocol> = new Set<VendorProtocol>(['openai', 'azure-openai']);

/** The vendor kinds whose video API a video model's deployment can call (Sora on OpenAI and Azure, Veo on the Gemini API). */
const VIDEO_DEPLOYMENT_PROTOCOLS: ReadonlySet<VendorProtocol> = new Set<VendorProtocol>(['openai', 'azure-openai', 'gemini']);

/** Vertex AI serves each publisher through its own API: the model id must say which (Claude, Gemini, an open model). */
function checkVertexModel(protocol: VendorProtocol, vendorModelId: string, at: Path): void {
  if (protocol === 'vertex' && vertexPublisher(vendorModelId) === null)
    throw new FieldError(
      at,
      'must be a Claude ("claude-…") or Gemini ("gemini-…") model id, or an open model\'s "publisher/model" id, for a vertex vendor',
    );
}

function buildModel(entry: ModelSource, at: Path, defaults: ReadonlyMap<string, VendorDefaults>): CatalogModel {
  const protocol = entry.protocol ?? protocolOf(entry.vendor, defaults);
  const declared = defaults.get(entry.vendor)?.protocol;
  if (declared !== undefined && declared !== protocol)
    throw new FieldError([...at, 'protocol'], `must be "${declared}" as the vendors section says of "${entry.vendor}"`);
  // The sandbox needs no key; letting another vendor claim its protocol (or the reverse)
  // would make a model usable without credentials or unreachable.
  if ((entry.vendor === SANDBOX_VENDOR) !== (protocol === 'sandbox')) {
    throw new FieldError([...at, 'protocol'], `must be "sandbox" exactly when vendor is "sandbox"`);
  }
  const base = {
    id: entry.id,
    namespace: namespaceOf(entry.id),
    vendor: entry.vendor,
    protocol,
    vendorModelId: entry.vendor_model_id ?? entry.id.slice(entry.id.indexOf('/') + 1),
    aliases: freeze(uniqueStrings(entry.aliases ?? [], [...at, 'aliases'])),
    created: entry.created,
  };

  if (entry.kind !== 'text' && protocol === 'vertex')
    throw new FieldError([...at, 'vendor'], 'is a vertex vendor, which serves text models only');
  switch (entry.kind) {
    case 'text': {
      if (entry.max_output_tokens > entry.context_length) {
        throw new FieldError([...at, 'max_output_tokens'], 'must not exceed context_length');
      }
      const deployments = buildDeployments(entry, base, at, defaults);
      // Cache-write prices follow the first deployment's vendor rule (Anthropic's, through Bedrock and Vertex too).
      const pricing = entry.pricing && textPricing(entry.pricing, anthropicFamily(deployments[0]!));
      return freeze({
        kind: 'text',
        ...base,
        deployments,
        routed: entry.deployments !== undefined,
        fallback: entry.fallback ?? null,
        contextLength: entry.context_length,
        maxOutputTokens: entry.max_output_tokens,
        effort: entry.effort ?? 'none',
        pricing,
      });
    }
    case 'image': {
      const modes = uniqueStrings(entry.modes, [...at, 'modes']);
      const sizes = uniqueStrings(entry.sizes, [...at, 'sizes']);
      let fixedOption: ImageModel['fixedOption'] = null;
      if (sizes.length === 1 && FIXED_OPTION_SHAPE.test(sizes[0])) {
        const [quality, size] = sizes[0].split(':');
        fixedOption = freeze({ quality, size });
      } else {
        sizes.forEach((size, i) => {
          if (!SIZE_SHAPE.test(size)) {
            throw new FieldError([...at, 'sizes', i], 'must be a size like "1024x1024" (or the single entry "<quality>:<size>")');
          }
        });
      }
      if (modes.includes('edit') && entry.max_input_images < 1) {
        throw new FieldError([...at, 'max_input_images'], 'must be at least 1 for a model with mode "edit"');
      }
      const deployments = buildDeployments(entry, base, at, defaults);
      deployments.forEach((d, i) => {
        if (entry.deployments !== undefined && !IMAGE_DEPLOYMENT_PROTOCOLS.has(d.protocol))
          throw new FieldError(
            [...at, 'deployments', i, 'vendor'],
            'must be an "openai" or "azure-openai" vendor (the ones that serve images)',
          );
      });
      return freeze({
        kind: 'image',
        ...base,
        deployments,
        routed: entry.deployments !== undefined,
        fallback: entry.fallback ?? null,
        modes: freeze(modes),
        sizes: freeze(sizes),
        fixedOption,
        maxInputImages: entry.max_input_images,
        pricing: entry.pricing && freeze({ perImageMicro: parseUsdDecimal(entry.pricing.per_image) }),
      });
    }
    case 'video': {
      const modes = uniqueStrings(entry.modes, [...at, 'modes']);
      if (modes.includes('image-to-video') && entry.max_input_images < 1) {
        throw new FieldError([...at, 'max_input_images'], 'must be at least 1 for a model with mode "image-to-video"');
      }
      entry.deployments?.forEach((d, i) => {
        if (!VIDEO_DEPLOYMENT_PROTOCOLS.has(protocolOf(d.vendor, defaults)))
          throw new FieldError([...at, 'deployments', i, 'vendor'], 'must be an "openai", "azure-openai" or "gemini" vendor (video APIs)');
      });
      return freeze({
        kind: 'video',
        ...base,
        deployments: buildDeployments(entry, base, at, defaults),
        routed: entry.deployments !== undefined,
        modes: freeze(modes),
        resolutions: freeze(uniqueStrings(entry.resolutions, [...at, 'resolutions'])),
        ratios: freeze(uniqueStrings(entry.ratios, [...at, 'ratios'])),
        durations: freeze(uniqueStrings(entry.durations, [...at, 'durations'])),
        maxInputImages: entry.max_input_images,
        pricing: entry.pricing && freeze({ perSecondMicro: parseUsdDecimal(entry.pricing.per_second) }),
      });
    }
  }
}

/**
 * Micro-dollars per million tokens. Cache writes the file leaves out cost what the vendor's rule
 * says: Anthropic bills a 5-minute entry at 1.25x and a 1-hour entry at 2x its input price
 * (rounded up to a micro-dollar per million tokens, never under); other vendors bill writes as
 * input, when they report them at all.
 */
function textPricing(source: NonNullable<Extract<ModelSource, { kind: 'text' }>['pricing']>, anthropic: boolean): TextPricing {
  const input = parseUsdDecimal(source.input);
  return freeze({
    inputPerMTokMicro: input,
    cachedInputPerMTokMicro: source.cached_input !== undefined ? parseUsdDecimal(source.cached_input) : input,
    cacheWrite5mPerMTokMicro:
      source.cache_write_5m !== undefined ? parseUsdDecimal(source.cache_write_5m) : anthropic ? (input * 5n + 3n) / 4n : input,
    cacheWrite1hPerMTokMicro: source.cache_write_1h !== undefined ? parseUsdDecimal(source.cache_write_1h) : anthropic ? input * 2n : input,
    outputPerMTokMicro: parseUsdDecimal(source.output),
  });
}

/** Claude, served by Anthropic, Bedrock or Vertex AI: Anthropic's prompt-cache pricing rule. */
const anthropicFamily = (d: Deployment): boolean =>
  d.protocol === 'anthropic' || d.protocol === 'bedrock' || (d.protocol === 'vertex' && vertexPublisher(d.vendorModelId) === 'anthropic');

function claimId(seen: Map<string, string>, id: string, at: Path): void {
  const first = seen.get(id);
  if (first !== undefined) throw new FieldError([...at, 'id'], `repeats the id "${id}" of ${first}`);
  seen.set(id, formatPath(at));
}

/** Lists are sets in meaning; a repeat is almost certainly a typo worth stopping for. */
function uniqueStrings<T extends string | number>(values: readonly T[], at: Path): T[] {
  values.forEach((value, i) => {
    if (values.indexOf(value) !== i) throw new FieldError([...at, i], `repeats ${JSON.stringify(value)}`);
  });
  return [...values];
}

const namespaceOf = (id: string): string => id.slice(0, id.indexOf('/'));

function freeze<T extends object>(value: T): Readonly<T> {
  return Object.freeze(value);
}

// --- error messages -----------------------------------------------------------------------

const formatPath = (path: Path): string => formatFieldPath(path, 'the catalog');
const describeIssue = (issue: z.core.$ZodIssue): string => describeSchemaIssue(issue, 'the catalog');
