import { z } from 'zod';
import { EFFORT_CONTROLS, IMAGE_MODES, VENDOR_PROTOCOLS, VIDEO_MODES } from './types';

/**
 * The catalog source shape: the built-in catalog (`builtin.ts`) and a TOLLGATE_CATALOG file
 * are both written in it and go through the same validation.
 *
 * {
 *   "models": [
 *     { "kind": "text", "id": "openai/gpt-4o-mini",          // "<namespace>/<model>", lowercase
 *       "vendor": "openai",                                   // env-var key: OPENAI_API_KEY
 *       "protocol": "openai",                                 // optional; default from vendor
 *       "vendor_model_id": "gpt-4o-mini",                     // optional; default: id after "/"
 *       "aliases": ["gpt-4o-mini-2024-07-18"],                // optional
 *       "created": 1721260800,                                // unix seconds
 *       "context_length": 128000, "max_output_tokens": 16384,
 *       "effort": "none",               // none | openai-effort | anthropic-thinking | gemini-thinking
 *       "pricing": { "input": "0.15", "cached_input": "0.075", "output": "0.60" } },
 *                                        // USD per 1M tokens; cached_input (cache reads)
 *                                        // defaults to input; cache_write_5m and cache_write_1h
 *                                        // (prompt-cache writes by entry lifetime) default to
 *                                        // Anthropic's 1.25x and 2x input for protocol
 *                                        // "anthropic", to input otherwise;
 *                                        // null = no published price (never usable)
 *     { "kind": "image", "id": "openai/gpt-image-1", "vendor": "openai", "created": 1745366400,
 *       "modes": ["generate", "edit"], "sizes": ["1024x1024"],  // or exactly ["low:1024x1024"]
 *       "max_input_images": 16, "pricing": { "per_image": "0.042" } },
 *     { "kind": "video", "id": "openai/sora-2", "vendor": "openai", "created": 1759190400,
 *       "modes": ["text-to-video", "image-to-video"], "resolutions": ["720p"],
 *       "ratios": ["16:9", "9:16"], "durations": [4, 8, 12], "max_input_images": 1,
 *       "pricing": { "per_second": "0.10" } }
 *   ],
 *   // Optional, every kind: several upstreams of the model (docs/routing.md); each names a
 *   // vendor (credentials), its own model or Azure deployment name, a priority (lower first)
 *   // and a weight within the priority.
 *   // "deployments": [{ "vendor": "azure_east", "vendor_model_id": "gpt4o-mini-prod", "priority": 0, "weight": 2 }]
 *   // and, with deployments, an optional "fallback": "<another text model id>" served when all are cooled.
 *   "vendors": { "azure_east": { "protocol": "azure-openai", "base_url": "https://east.openai.azure.com",
 *                "api_key_env": "AZURE_EAST_KEY", "api_version": "2024-10-21" },
 *                "bedrock_us": { "protocol": "bedrock", "region": "us-east-1" },
 *                "vertex_us": { "protocol": "vertex", "region": "us-east5", "project": "my-project" } },   // optional
 *   "retired": [
 *     { "id": "anthropic/claude-3-5-sonnet", "successor": "anthropic/claude-sonnet-4-5",
 *       "aliases": ["claude-3-5-sonnet-20241022"] }
 *   ]
 * }
 * Prices are decimal strings of USD (at most 6 decimal places) so they convert exactly.
 * Unknown fields are refused, so a typo cannot silently drop a setting.
 */

const SERVICE_ID = /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9._-]*$/;
/** Upper-cased it must make a valid environment variable prefix (`<VENDOR>_API_KEY`). */
const VENDOR_NAME = /^[a-z][a-z0-9_]*$/;
const VENDOR_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/;
const USD_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$/;
const SIZE = /^[1-9][0-9]*x[1-9][0-9]*$/;
const FIXED_OPTION = /^[a-z]+:[1-9][0-9]*x[1-9][0-9]*$/;
const RESOLUTION = /^[1-9][0-9]*p$/;
const RATIO = /^[1-9][0-9]*:[1-9][0-9]*$/;

const usd = z
  .string({ error: 'must be a decimal string' })
  .regex(USD_DECIMAL, 'must be a decimal string of USD with at most 6 decimal places');

const count = (min: 0 | 1) => {
  const message = min === 0 ? 'must be a non-negative integer' : 'must be a positive integer';
  return z.number({ error: message }).int(message).min(min, message);
};

const list = <T extends z.ZodType>(item: T) => z.array(item, { error: 'must be a list' }).min(1, 'must not be empty');

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

const common = {
  id: z.string({ error: 'must be a string' }).regex(SERVICE_ID, 'must be a lowercase "<vendor>/<model>" id'),
  vendor: z.string({ error: 'must be a string' }).regex(VENDOR_NAME, 'must be a lowercase vendor name (letters, digits, _)'),
  protocol: oneOf(VENDOR_PROTOCOLS).optional(),
  vendor_model_id: z.string({ error: 'must be a string' }).regex(VENDOR_MODEL_ID, 'must be a vendor model id').optional(),
  aliases: z
    .array(z.string({ error: 'must be a string' }).regex(VENDOR_MODEL_ID, 'must be a vendor model id'), { error: 'must be a list' })
    .optional(),
  created: count(0),
};

/** A deployment of a text model: the vendor (credentials) that serves it, and its order. */
const deployment = z.strictObject(
  {
    vendor: common.vendor,
    vendor_model_id: common.vendor_model_id,
    priority: count(0).optional(),
    weight: count(1).optional(),
  },
  { error: 'must be an object' },
);

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const envName = z.string({ error: 'must be a string' }).regex(ENV_NAME, 'must be an environment variable name (A-Z, 0-9, _)');

/** An account of a vendor kind: where it is and which variables hold its credentials. */
const vendorEntry = z.strictObject(
  {
    protocol: oneOf(VENDOR_PROTOCOLS),
    base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    api_key_env: envName.optional(),
    secret_key_env: envName.optional(),
    api_version: z
      .string({ error: 'must be a string' })
      .regex(/^[A-Za-z0-9.-]{1,40}$/, 'must be an API version like "2024-10-21"')
      .optional(),
    region: z
      .string({ error: 'must be a string' })
      .regex(/^[a-z0-9-]{1,64}$/, 'must be a region like "us-east-1"')
      .optional(),
    /** Vertex AI: the Google Cloud project id (default: the service account key's `project_id`). */
    project: z
      .string({ error: 'must be a string' })
      .regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a Google Cloud project id like "my-project-123"')
      .optional(),
  },
  { error: 'must be an object' },
);

const textModel = z.strictObject(
  {
    kind: z.literal('text'),
    ...common,
    deployments: list(deployment).optional(),
    /** Another text model's id, served when every deployment of this one is cooled (docs/routing.md, Fallback). */
    fallback: z.string({ error: 'must be a string' }).regex(SERVICE_ID, 'must be a lowercase "<vendor>/<model>" id').optional(),
    context_length: count(1),
    max_output_tokens: count(1),
    effort: oneOf(EFFORT_CONTROLS).optional(),
    pricing: z
      .strictObject(
        { input: usd, cached_input: usd.optional(), cache_write_5m: usd.optional(), cache_write_1h: usd.optional(), output: usd },
        { error: 'must be an object or null' },
      )
      .nullable(),
  },
  { error: 'must be an object' },
);

const imageModel = z.strictObject(
  {
    kind: z.literal('image'),
    ...common,
    /** Served through routing as a text model's (docs/routing.md, Images): OpenAI-protocol and Azure OpenAI accounts only. */
    deployments: list(deployment).optional(),
    /** Another image model's id, served when every deployment of this one is cooled or failed (docs/routing.md, Images). */
    fallback: z.string({ error: 'must be a string' }).regex(SERVICE_ID, 'must be a lowercase "<vendor>/<model>" id').optional(),
    modes: list(oneOf(IMAGE_MODES)),
    sizes: list(z.string({ error: 'must be a string' })),
    max_input_images: count(0),
    pricing: z.strictObject({ per_image: usd }, { error: 'must be an object or null' }).nullable(),
  },
  { error: 'must be an object' },
);

const videoModel = z.strictObject(
  {
    kind: z.literal('video'),
    ...common,
    /** Served through routing (docs/routing.md, Videos): OpenAI, Azure OpenAI and Gemini API accounts only. */
    deployments: list(deployment).optional(),
    modes: list(oneOf(VIDEO_MODES)),
    resolutions: list(z.string({ error: 'must be a string' }).regex(RESOLUTION, 'must be a resolution like "720p"')),
    ratios: list(z.string({ error: 'must be a string' }).regex(RATIO, 'must be a ratio like "16:9"')),
    durations: list(count(1)),
    max_input_images: count(0),
    pricing: z.strictObject({ per_second: usd }, { error: 'must be an object or null' }).nullable(),
  },
  { error: 'must be an object' },
);

const retiredModel = z.strictObject(
  {
    id: common.id,
    successor: z.string({ error: 'must be a string' }),
    aliases: common.aliases,
  },
  { error: 'must be an object' },
);

export const catalogSourceSchema = z.strictObject(
  {
    models: z.array(z.discriminatedUnion('kind', [textModel, imageModel, videoModel], { error: 'must be one of text, image, video' }), {
      error: 'must be a list',
    }),
    retired: z.array(retiredModel, { error: 'must be a list' }).optional(),
    vendors: z
      .record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a lowercase vendor name (letters, digits, _)'), vendorEntry, {
        error: 'must be an object',
      })
      .optional(),
  },
  { error: 'must be a JSON object' },
);

/** What a catalog file holds (before defaults). */
export type CatalogSource = z.input<typeof catalogSourceSchema>;
export type ParsedCatalogSource = z.output<typeof catalogSourceSchema>;

/** Shapes checked after parsing, where the whole list must be seen (sizes). */
export const SIZE_SHAPE = SIZE;
export const FIXED_OPTION_SHAPE = FIXED_OPTION;
