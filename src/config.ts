import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadCatalog } from './domain/catalog/catalog';
import type { Catalog } from './domain/catalog/types';
import { SANDBOX_VENDOR, type VendorProtocol } from './domain/catalog/types';
import { vendorEnvName, type VendorEndpoint } from './domain/catalog/vendors';
import { DEFAULT_SETTLEMENT_BACKLOG } from './domain/billing/leases';
import { DEFAULT_LIMITS, parseLimits, unknownPlanModels, type LimitsConfig } from './domain/limits/limits-config';

/** Configuration, read and validated once at start-up; a bad value stops the start naming the variable. */
export interface Config {
  port: number;
  host: string;
  /** Absent: the embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  /** Prefix of every Redis key (several deployments or test runs can share one Redis). */
  redisKeyPrefix: string;
  adminToken: string | null;
  catalogFile: string | null;
  /** The model catalog: built in, or TOLLGATE_CATALOG's file, validated. */
  catalog: Catalog;
  /** `<VENDOR>_API_KEY` / `<VENDOR>_BASE_URL` of every vendor of the catalog but the sandbox, validated. */
  vendors: ReadonlyMap<string, VendorSettings>;
  /** TOLLGATE_LIMITS_FILE, or null for the built-in tiers and plans. */
  limitsFile: string | null;
  limits: LimitsConfig;
  logLevel: string;
  /** Largest JSON body accepted, in bytes. */
  maxJsonBodyBytes: number;
  sessionTtlSeconds: number;
  /** Multipart upload limits (image edits, video references): per file, file count, whole body. */
  uploads: { maxFileBytes: number; maxFiles: number; maxTotalBytes: number };
  /** Video jobs: where files go, deadlines, vendor polling, upkeep, the sandbox's render times. */
  videos: VideoJobConfig;
  /** How long one image vendor call may take to answer (ms): images can take minutes. */
  imageVendorTimeoutMs: number;
  /** Failover across a model's deployments, their circuit breakers and prompt-cache affinity (docs/routing.md). */
  routing: RoutingConfig;
  /** Outbound vendor HTTP timeouts (ms): connect, first byte, silence between streamed chunks. */
  vendorTimeouts: { connectMs: number; headersMs: number; bodyIdleMs: number };
  /**
   * `after-answer` (default): a request's charge is computed and queued for the batch writer
   * when its usage is known, and the answer's last byte does not wait for the commit.
   * `before-answer`: the last byte waits until the charge is committed (one commit more in
   * every request's latency).
   */
  settlement: 'after-answer' | 'before-answer';
  /**
   * Text settlements accepted and not yet committed at which new text requests wait (then 503)
   * and answers wait for their own charge: the most charges a crash can lose.
   */
  settlementBacklog: number;
  /** How long a budget lease outlives its instance's last renewal: a dead instance's money is held that long (ms). */
  leaseTtlMs: number;
  /** How often every instance releases expired holds and leases (ms). */
  sweepIntervalMs: number;
  /** Whole UTC months of request log kept besides the current one; 0 keeps every month (docs/dashboard.md, Storage). */
  requestLogRetentionMonths: number;
  /** Whether GraphQL answers introspection queries (schema discovery, code generation). */
  graphqlIntrospection: boolean;
  /** Full URL of the OTLP/HTTP traces endpoint; null: no tracing (and no OpenTelemetry loaded). */
  otlpTracesUrl: string | null;
  /** `service.name` of the spans (OTEL_SERVICE_NAME). */
  otelServiceName: string;
  /** Browser origins allowed to call the API (CORS, docs/api.md): the API-key endpoints, and the session and operator planes. */
  cors: { apiOrigins: CorsOrigins; sessionOrigins: CorsOrigins };
}

export interface RoutingConfig {
  maxAttempts: number;
  budgetMs: number;
  firstByteTimeoutMs: number;
  failuresToCool: number;
  cooldownMs: number;
  stickyTtlMs: number;
}

/** `*` (any origin) or the allowed origins (`https://chat.example.com`); empty: same-origin only. */
export type CorsOrigins = '*' | readonly string[];

export interface VideoJobConfig {
  /** Where finished files and job inputs live (TOLLGATE_VIDEO_STORAGE). */
  storage: VideoStorageConfig;
  /** A job not finished this long after creation fails and releases its money. */
  deadlineMs: number;
  /** First wait between vendor polls; it grows ×1.5 per poll up to pollMaxMs. */
  pollInitialMs: number;
  pollMaxMs: number;
  /** Retention and deadline sweeps. */
  sweepIntervalMs: number;
  /** PostgreSQL schema of the job queue's (pg-boss) tables. */
  queueSchema: string;
  /** Job steps one instance runs at once; 0 for an instance that only serves the API. */
  workers: number;
  /** How long the offline sandbox vendor takes to "render" a clip, and with [sandbox:slow]. */
  sandboxRenderMs: number;
  sandboxSlowMs: number;
}

/**
 * Video files in a directory (`TOLLGATE_VIDEO_DIR`, default `<data dir>/videos`; several
 * instances must share it), or in an S3-compatible bucket that any number of instances share.
 */
export type VideoStorageConfig = { kind: 'file'; dir: string } | S3StorageConfig;

export interface S3StorageConfig {
  kind: 's3';
  bucket: string;
  /** Prepended to every object key (several deployments in one bucket); '' or ending with `/`. */
  prefix: string;
  /** An S3-compatible server's URL; null: AWS S3 of the region. */
  endpoint: string | null;
  region: string;
  /** Bucket in the path (`endpoint/bucket/key`) rather than in the host name; most S3-compatible servers want it. */
  forcePathStyle: boolean;
  /** Null: the AWS SDK's default chain (AWS_ACCESS_KEY_ID…, a web identity, an instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

export class ConfigError extends Error {}

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

function boolean(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got '${env[name]}'`);
}

function optional(env: Record<string, string | undefined>, name: string): string | null {
  const raw = env[name]?.trim();
  return raw ? raw : null;
}

function httpUrl(env: Record<string, string | undefined>, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must be an http:// or https:// URL, got '${raw}'`);
  return raw;
}

/**
 * The standard OpenTelemetry variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the traces URL
 * as given; OTEL_EXPORTER_OTLP_ENDPOINT is a base that /v1/traces is appended to. Tracing is
 * on when either is set (and OTEL_SDK_DISABLED is not true).
 */
function tracesUrl(env: Record<string, string | undefined>): string | null {
  if (optional(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const traces = httpUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces) return traces;
  const base = httpUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : null;
}

/** `*`, `none`, or comma-separated origins (scheme, host and port only), normalised as browsers send them. */
function corsOrigins(env: Record<string, string | undefined>, name: string, fallback: CorsOrigins): CorsOrigins {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (raw === '*') return '*';
  if (raw.toLowerCase() === 'none') return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      let url: URL | null = null;
      try {
        url = new URL(entry);
      } catch {
        // reported below
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
        throw new ConfigError(
          `${name} must be '*', 'none' or comma-separated origins such as https://chat.example.com (no path), got '${entry}'`,
        );
      }
      return url.origin;
    });
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must be a postgres:// URL`);
  }
  const redisUrl = optional(env, 'REDIS_URL');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  const adminToken = optional(env, 'TOLLGATE_ADMIN_TOKEN');
  if (adminToken && adminToken.length < 16) throw new ConfigError('TOLLGATE_ADMIN_TOKEN must be at least 16 characters');
  const settlement = optional(env, 'TOLLGATE_SETTLEMENT') ?? 'after-answer';
  if (settlement !== 'after-answer' && settlement !== 'before-answer')
    throw new ConfigError("TOLLGATE_SETTLEMENT must be 'after-answer' or 'before-answer'");
  const logLevel = optional(env, 'LOG_LEVEL') ?? 'info';
  const otlpTracesUrl = tracesUrl(env);
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const dataDir = resolve(optional(env, 'TOLLGATE_DATA_DIR') ?? '.tollgate');
  const catalogFile = optional(env, 'TOLLGATE_CATALOG');
  const catalog = loadCatalogFile(catalogFile);
  const limitsFile = optional(env, 'TOLLGATE_LIMITS_FILE');
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: optional(env, 'HOST') ?? '0.0.0.0',
    databaseUrl,
    dataDir,
    redisUrl,
    redisKeyPrefix: optional(env, 'TOLLGATE_REDIS_KEY_PREFIX') ?? 'tollgate:',
    adminToken,
    catalogFile,
    logLevel,
    maxJsonBodyBytes: integer(env, 'TOLLGATE_MAX_BODY_BYTES', 4 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    sessionTtlSeconds: integer(env, 'TOLLGATE_SESSION_TTL_SECONDS', 7 * 24 * 3600, 60, 365 * 24 * 3600),
    uploads: {
      maxFileBytes: integer(env, 'TOLLGATE_MAX_UPLOAD_BYTES', 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      maxFiles: integer(env, 'TOLLGATE_MAX_UPLOAD_FILES', 16, 1, 1000),
      maxTotalBytes: integer(env, 'TOLLGATE_MAX_UPLOAD_TOTAL_BYTES', 100 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    },
    videos: videoJobConfig(env, dataDir),
    imageVendorTimeoutMs: integer(env, 'TOLLGATE_IMAGE_VENDOR_TIMEOUT_MS', 600_000, 1, 3_600_000),
    vendorTimeouts: {
      connectMs: integer(env, 'TOLLGATE_VENDOR_CONNECT_TIMEOUT_MS', 10_000, 1, 600_000),
      headersMs: integer(env, 'TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS', 120_000, 1, 3_600_000),
      bodyIdleMs: integer(env, 'TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS', 120_000, 1, 3_600_000),
    },
    routing: {
      maxAttempts: integer(env, 'TOLLGATE_ROUTING_MAX_ATTEMPTS', 3, 1, 10),
      budgetMs: integer(env, 'TOLLGATE_ROUTING_BUDGET_MS', 60_000, 1, 3_600_000),
      firstByteTimeoutMs: integer(env, 'TOLLGATE_ROUTING_FIRST_BYTE_TIMEOUT_MS', 30_000, 1, 3_600_000),
      failuresToCool: integer(env, 'TOLLGATE_ROUTING_FAILURES_TO_COOL', 3, 0, 1000),
      cooldownMs: integer(env, 'TOLLGATE_ROUTING_COOLDOWN_MS', 10_000, 1, 3_600_000),
      // Anthropic's and OpenAI's prompt caches keep an entry about 5 minutes after its last use.
      stickyTtlMs: integer(env, 'TOLLGATE_ROUTING_STICKY_TTL_MS', 300_000, 0, 24 * 3_600_000),
    },
    settlement,
    settlementBacklog: integer(env, 'TOLLGATE_SETTLEMENT_BACKLOG', DEFAULT_SETTLEMENT_BACKLOG, 1, 1_000_000),
    leaseTtlMs: integer(env, 'TOLLGATE_LEASE_TTL_MS', 60_000, 3_000, 3_600_000),
    sweepIntervalMs: integer(env, 'TOLLGATE_SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
    requestLogRetentionMonths: integer(env, 'TOLLGATE_REQUEST_LOG_RETENTION_MONTHS', 13, 0, 1200),
    graphqlIntrospection: boolean(env, 'TOLLGATE_GRAPHQL_INTROSPECTION', true),
    catalog,
    vendors: vendorSettings(env, catalog),
    limitsFile,
    limits: limitsFile ? loadLimitsFile(limitsFile, catalog) : DEFAULT_LIMITS,
    otlpTracesUrl,
    otelServiceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'tollgate',
    // API keys travel in a header, never a cookie: any page may call the key endpoints with the key it holds.
    cors: {
      apiOrigins: corsOrigins(env, 'TOLLGATE_CORS_ORIGINS', '*'),
      sessionOrigins: corsOrigins(env, 'TOLLGATE_CORS_SESSION_ORIGINS', []),
    },
  };
}

function videoJobConfig(env: Record<string, string | undefined>, dataDir: string): VideoJobConfig {
  const queueSchema = optional(env, 'TOLLGATE_VIDEO_QUEUE_SCHEMA') ?? 'pgboss';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(queueSchema))
    throw new ConfigError('TOLLGATE_VIDEO_QUEUE_SCHEMA must be a lower-case PostgreSQL identifier');
  const pollInitialMs = integer(env, 'TOLLGATE_VIDEO_POLL_INITIAL_MS', 2_000, 1, 600_000);
  // A running job's concurrency slot lives between two steps on its TTL (30 s): polls stay well inside it.
  const pollMaxMs = integer(env, 'TOLLGATE_VIDEO_POLL_MAX_MS', 15_000, 1, 20_000);
  if (pollMaxMs < pollInitialMs) throw new ConfigError('TOLLGATE_VIDEO_POLL_MAX_MS must be at least TOLLGATE_VIDEO_POLL_INITIAL_MS');
  return {
    storage: videoStorageConfig(env, dataDir),
    deadlineMs: integer(env, 'TOLLGATE_VIDEO_DEADLINE_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000,
    pollInitialMs,
    pollMaxMs,
    sweepIntervalMs: integer(env, 'TOLLGATE_VIDEO_SWEEP_INTERVAL_MS', 60_000, 10, 24 * 3600_000),
    queueSchema,
    workers: integer(env, 'TOLLGATE_VIDEO_WORKERS', 4, 0, 64),
    sandboxRenderMs: integer(env, 'TOLLGATE_SANDBOX_VIDEO_RENDER_MS', 3_000, 0, 3_600_000),
    sandboxSlowMs: integer(env, 'TOLLGATE_SANDBOX_VIDEO_SLOW_MS', 30_000, 0, 3_600_000),
  };
}

const S3_VARIABLES = ['BUCKET', 'PREFIX', 'ENDPOINT', 'REGION', 'FORCE_PATH_STYLE', 'ACCESS_KEY_ID', 'SECRET_ACCESS_KEY'].map(
  (name) => `TOLLGATE_VIDEO_S3_${name}`,
);

function videoStorageConfig(env: Record<string, string | undefined>, dataDir: string): VideoStorageConfig {
  const kind = optional(env, 'TOLLGATE_VIDEO_STORAGE') ?? 'file';
  if (kind !== 'file' && kind !== 's3') throw new ConfigError(`TOLLGATE_VIDEO_STORAGE must be 'file' or 's3', got '${kind}'`);
  if (kind === 'file') {
    // A bucket configured for a storage that is not used is a mistake worth stopping for.
    const stray = S3_VARIABLES.find((name) => optional(env, name) !== null);
    if (stray) throw new ConfigError(`${stray} is set, but TOLLGATE_VIDEO_STORAGE is not 's3'`);
    return { kind, dir: resolve(optional(env, 'TOLLGATE_VIDEO_DIR') ?? resolve(dataDir, 'videos')) };
  }
  if (optional(env, 'TOLLGATE_VIDEO_DIR') !== null) throw new ConfigError("TOLLGATE_VIDEO_DIR is set, but TOLLGATE_VIDEO_STORAGE is 's3'");
  const bucket = optional(env, 'TOLLGATE_VIDEO_S3_BUCKET');
  if (bucket === null) throw new ConfigError("TOLLGATE_VIDEO_S3_BUCKET is required when TOLLGATE_VIDEO_STORAGE is 's3'");
  // S3's bucket naming rules: 3–63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(
      `TOLLGATE_VIDEO_S3_BUCKET must be an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens), got '${bucket}'`,
    );
  const prefix = optional(env, 'TOLLGATE_VIDEO_S3_PREFIX') ?? '';
  if (prefix && !/^[A-Za-z0-9!_.*'()/-]{1,512}\/$/.test(prefix))
    throw new ConfigError(`TOLLGATE_VIDEO_S3_PREFIX must be a key prefix of safe characters ending with '/', got '${prefix}'`);
  const endpoint = baseUrl(env, 'TOLLGATE_VIDEO_S3_ENDPOINT');
  const region = optional(env, 'TOLLGATE_VIDEO_S3_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region))
    throw new ConfigError(`TOLLGATE_VIDEO_S3_REGION must be a region name such as 'us-east-1', got '${region}'`);
  const accessKeyId = optional(env, 'TOLLGATE_VIDEO_S3_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'TOLLGATE_VIDEO_S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === null) !== (secretAccessKey === null))
    throw new ConfigError(
      'TOLLGATE_VIDEO_S3_ACCESS_KEY_ID and TOLLGATE_VIDEO_S3_SECRET_ACCESS_KEY must be set together (or neither, for the AWS default credentials)',
    );
  return {
    kind,
    bucket,
    prefix,
    endpoint,
    region,
    forcePathStyle: boolean(env, 'TOLLGATE_VIDEO_S3_FORCE_PATH_STYLE', endpoint !== null),
    credentials: accessKeyId !== null && secretAccessKey !== null ? { accessKeyId, secretAccessKey } : null,
  };
}

function loadCatalogFile(file: string | null): Catalog {
  try {
    return loadCatalog(file ?? undefined);
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
}

/** A base URL must be absolute http(s) with no query or fragment, since paths are appended to it. */
function baseUrl(env: Record<string, string | undefined>, name: string): string | null {
  const raw = httpUrl(env, name);
  if (raw === null) return null;
  const url = new URL(raw);
  if (url.search || url.hash || url.username || url.password)
    throw new ConfigError(`${name} must have no query, fragment or credentials, got '${raw}'`);
  return raw.replace(/\/+$/, '');
}

/** One vendor's settings as configuration read them (`<VENDOR>_API_KEY`, `<VENDOR>_BASE_URL`), validated. */
export interface VendorSettings {
  apiKey: string | null;
  /** Without trailing slashes; null: the catalog's `base_url`, else the vendor's official default. */
  baseUrl: string | null;
  /** Bedrock's secret access key. */
  secretKey?: string | null;
}

/** Each vendor's official SDK default (OPENAI_ includes /v1, ANTHROPIC_ and GEMINI_ have no version). */
const DEFAULT_BASE_URLS: Partial<Record<VendorProtocol, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

/**
 * The vendors of the catalog that are configured: OpenAI, Anthropic and Gemini need their API
 * key; an OpenAI-compatible vendor needs a base URL (a local vLLM or Ollama may need no key);
 * the sandbox always is.
 */
export function configuredVendorEndpoints(catalog: Catalog, settings: ReadonlyMap<string, VendorSettings>): Map<string, VendorEndpoint> {
  const endpoints = new Map<string, VendorEndpoint>();
  for (const [vendor, protocol] of catalog.vendors) {
    const defaults = catalog.vendorDefaults.get(vendor);
    const apiKey = settings.get(vendor)?.apiKey ?? null;
    const region = defaults?.region ?? null;
    const baseUrl =
      settings.get(vendor)?.baseUrl ??
      defaults?.baseUrl ??
      DEFAULT_BASE_URLS[protocol] ??
      (protocol === 'bedrock' && region ? `https://bedrock-runtime.${region}.amazonaws.com` : '');
    const secretKey = settings.get(vendor)?.secretKey ?? null;
    const configured =
      protocol === 'sandbox' ||
      (protocol === 'openai-compatible'
        ? baseUrl !== ''
        : protocol === 'azure-openai'
          ? apiKey !== null && baseUrl !== ''
          : protocol === 'bedrock'
            ? apiKey !== null && secretKey !== null && baseUrl !== ''
            : apiKey !== null);
    if (configured)
      endpoints.set(vendor, {
        vendor,
        protocol,
        apiKey,
        baseUrl,
        secretKey,
        region: region ?? bedrockRegionOf(baseUrl),
        apiVersion: defaults?.apiVersion ?? (protocol === 'azure-openai' ? DEFAULT_AZURE_API_VERSION : null),
      });
  }
  if (!endpoints.has(SANDBOX_VENDOR))
    endpoints.set(SANDBOX_VENDOR, { vendor: SANDBOX_VENDOR, protocol: 'sandbox', apiKey: null, baseUrl: '' });
  return endpoints;
}

/** Azure OpenAI's generally available `api-version` used when the catalog names none. */
const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** `bedrock-runtime.<region>.amazonaws.com` names its region; another host (a proxy) takes us-east-1 unless the catalog says. */
const bedrockRegionOf = (url: string): string | null => /bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com/.exec(url)?.[1] ?? null;

function vendorSettings(env: Record<string, string | undefined>, catalog: Catalog): Map<string, VendorSettings> {
  const settings = new Map<string, VendorSettings>();
  for (const [vendor, protocol] of catalog.vendors) {
    if (vendor === SANDBOX_VENDOR) continue;
    const name = vendorEnvName(vendor);
    const defaults = catalog.vendorDefaults.get(vendor);
    const keyVariable = defaults?.apiKeyEnv ?? `${name}_${protocol === 'bedrock' ? 'ACCESS_KEY_ID' : 'API_KEY'}`;
    const apiKey = secret(env, keyVariable);
    const found: VendorSettings = { apiKey, baseUrl: baseUrl(env, `${name}_BASE_URL`) };
    if (protocol === 'bedrock') found.secretKey = secret(env, defaults?.secretKeyEnv ?? `${name}_SECRET_ACCESS_KEY`);
    settings.set(vendor, found);
  }
  return settings;
}

/** A credential is sent in a header (or signs one): whitespace or control characters inside would break every request. */
function secret(env: Record<string, string | undefined>, name: string): string | null {
  const value = optional(env, name);
  if (value && /[\s\x00-\x1f\x7f]/.test(value)) throw new ConfigError(`${name} must not contain spaces or control characters`);
  return value;
}

function loadLimitsFile(file: string, catalog: Catalog): LimitsConfig {
  const origin = `TOLLGATE_LIMITS_FILE ${file}`;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? `not valid JSON (${error.message})` : String(error));
    throw new ConfigError(`${origin}: cannot be read: ${reason}`);
  }
  let limits: LimitsConfig;
  try {
    limits = parseLimits(json, origin);
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
  const unknown = unknownPlanModels(limits, (id) => catalog.byId.has(id));
  if (unknown.length > 0) throw new ConfigError(`${origin}: ${unknown[0]} is not a model of the catalog`);
  return limits;
}
