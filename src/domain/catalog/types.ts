/**
 * The model catalog as the rest of Tollgate sees it: validated, immutable, money as bigint.
 * The JSON source shape (what operators write in TOLLGATE_CATALOG) lives in `schema.ts`.
 */

export type ModelKind = 'text' | 'image' | 'video';

/** How a text model's reasoning effort is controlled upstream; vendor adapters map onto it. */
export const EFFORT_CONTROLS = ['none', 'openai-effort', 'anthropic-thinking', 'gemini-thinking'] as const;
export type EffortControl = (typeof EFFORT_CONTROLS)[number];

/** The wire protocol spoken to the vendor; selects the provider adapter. */
export const VENDOR_PROTOCOLS = [
  'openai',
  'anthropic',
  'gemini',
  'openai-compatible',
  'azure-openai',
  'bedrock',
  'vertex',
  'sandbox',
] as const;
export type VendorProtocol = (typeof VENDOR_PROTOCOLS)[number];

/** The vendor that needs no key and no network; always configured. */
export const SANDBOX_VENDOR = 'sandbox';

export const IMAGE_MODES = ['generate', 'edit'] as const;
export type ImageMode = (typeof IMAGE_MODES)[number];
export const VIDEO_MODES = ['text-to-video', 'image-to-video'] as const;
export type VideoMode = (typeof VIDEO_MODES)[number];

interface ModelBase {
  /** Service id, `<namespace>/<model>` (e.g. `google/gemini-2.5-flash`). */
  readonly id: string;
  /** The part of `id` before the slash (`google`); rendered as `owned_by`. */
  readonly namespace: string;
  /**
   * Vendor key: names the `<VENDOR>_API_KEY` / `<VENDOR>_BASE_URL` variables (`gemini` for
   * Google's models) and decides whether the model is usable (vendor configured).
   */
  readonly vendor: string;
  readonly protocol: VendorProtocol;
  /** The id sent upstream. */
  readonly vendorModelId: string;
  /** Other vendor ids that name this model (dated snapshots, vendor aliases). */
  readonly aliases: readonly string[];
  /** Unix seconds (the vendor's release date). */
  readonly created: number;
}

/** Token prices in micro-dollars per million tokens: $0.15 / 1M tokens is 150000n. */
export interface TextPricing {
  readonly inputPerMTokMicro: bigint;
  /** Input read from the vendor's prompt cache. */
  readonly cachedInputPerMTokMicro: bigint;
  /** Input written to the vendor's prompt cache, entries that live 5 minutes and 1 hour (Anthropic). */
  readonly cacheWrite5mPerMTokMicro: bigint;
  readonly cacheWrite1hPerMTokMicro: bigint;
  readonly outputPerMTokMicro: bigint;
}

/**
 * One upstream that serves a text model (docs/routing.md): an account, region or cloud,
 * reached with the credentials of its `vendor` (`<VENDOR>_API_KEY`…, or the variables the
 * catalog's `vendors` section names). A model without a `deployments` list has exactly one,
 * built from its own vendor, protocol and vendor model id.
 */
export interface Deployment {
  /** Unique within the model: the vendor name (a metric label, the usage record's `deployment`). */
  readonly name: string;
  readonly vendor: string;
  readonly protocol: VendorProtocol;
  /** The model (OpenAI, Anthropic), Azure deployment, Bedrock or Vertex AI model id sent upstream. */
  readonly vendorModelId: string;
  /** Lower is tried first. */
  readonly priority: number;
  /** Share of the traffic among deployments of one priority. */
  readonly weight: number;
}

export interface TextModel extends ModelBase {
  readonly kind: 'text';
  /** At least one; ordered by priority. */
  readonly deployments: readonly Deployment[];
  /**
   * Whether requests go through routing (domain/routing): the catalog lists deployments for it.
   * False for a model without a list (every model of a catalog written before deployments),
   * which its vendor's provider serves directly.
   */
  readonly routed: boolean;
  /** Another text model's id, served instead when every deployment of this one is cooled (opt-in, routed models only). */
  readonly fallback: string | null;
  readonly contextLength: number;
  /** Largest output limit (reasoning included); also `top_provider.max_completion_tokens`. */
  readonly maxOutputTokens: number;
  readonly effort: EffortControl;
  /** null: no published API price, so the model is never usable. */
  readonly pricing: TextPricing | null;
}

export interface ImageModel extends ModelBase {
  readonly kind: 'image';
  /** At least one, ordered by priority; each an OpenAI-protocol or Azure OpenAI account. */
  readonly deployments: readonly Deployment[];
  /** Whether requests go through routing (the catalog lists deployments for it), as for a text model. */
  readonly routed: boolean;
  /** Another image model's id, served instead when no deployment of this one can (opt-in, routed models only). */
  readonly fallback: string | null;
  readonly modes: readonly ImageMode[];
  /** `WxH` entries, first is the default; a fixed-option model has exactly one `<quality>:WxH`. */
  readonly sizes: readonly string[];
  /** Parsed form of a fixed-option model's single entry; null for ordinary models. */
  readonly fixedOption: { readonly quality: string; readonly size: string } | null;
  readonly maxInputImages: number;
  readonly pricing: { readonly perImageMicro: bigint } | null;
}

export interface VideoModel extends ModelBase {
  readonly kind: 'video';
  /** At least one, ordered by priority; each an OpenAI, Azure OpenAI or Gemini API account. */
  readonly deployments: readonly Deployment[];
  /** Whether jobs are started through routing (the catalog lists deployments for it), as for a text model. */
  readonly routed: boolean;
  readonly modes: readonly VideoMode[];
  /** `<number>p` labels, first is the default. */
  readonly resolutions: readonly string[];
  /** `W:H` labels, first is the default. */
  readonly ratios: readonly string[];
  /** Allowed clip lengths in seconds, first is the default. */
  readonly durations: readonly number[];
  readonly maxInputImages: number;
  readonly pricing: { readonly perSecondMicro: bigint } | null;
}

export type CatalogModel = TextModel | ImageModel | VideoModel;

export interface ModelByKind {
  text: TextModel;
  image: ImageModel;
  video: VideoModel;
}

/** A retired id that keeps resolving to its successor (docs/api.md, Model ids, rule 4). */
export interface RetiredModel {
  readonly id: string;
  readonly namespace: string;
  readonly successor: string;
  readonly aliases: readonly string[];
}

export interface Catalog {
  readonly text: readonly TextModel[];
  readonly images: readonly ImageModel[];
  readonly videos: readonly VideoModel[];
  readonly retired: readonly RetiredModel[];
  readonly byId: ReadonlyMap<string, CatalogModel>;
  /** Every vendor named by a model or a deployment, with the protocol it speaks (config reads its env vars). */
  readonly vendors: ReadonlyMap<string, VendorProtocol>;
  /** What the catalog's `vendors` section says of a vendor's endpoint (defaults; the environment overrides). */
  readonly vendorDefaults: ReadonlyMap<string, VendorDefaults>;
}

/** A vendor entry of the catalog's `vendors` section: where and how to reach one account. */
export interface VendorDefaults {
  readonly protocol: VendorProtocol;
  readonly baseUrl: string | null;
  /** The variable holding the API key (Bedrock: the access key id; Vertex: the service account key); default `<VENDOR>_API_KEY`. */
  readonly apiKeyEnv: string | null;
  /** Bedrock: the variable holding the secret access key; default `<VENDOR>_SECRET_ACCESS_KEY`. */
  readonly secretKeyEnv: string | null;
  /** Azure OpenAI's `api-version` query parameter. */
  readonly apiVersion: string | null;
  /** Bedrock's AWS region; Vertex AI's Google Cloud location (`us-east5`, `global`). */
  readonly region: string | null;
  /** Vertex AI's Google Cloud project id (default: the service account key's `project_id`). */
  readonly project: string | null;
}

/**
 * What a key may use. `configuredVendors` are the vendors with credentials (the sandbox is
 * always configured). For plan keys, `planModels` lists the service ids the plan includes;
 * a plan key without `planModels` can use nothing (fail closed).
 */
export interface ModelAccess {
  readonly keyKind: 'prepaid' | 'plan';
  readonly planModels?: readonly string[];
  readonly configuredVendors: ReadonlySet<string>;
}
