import { resolve } from 'node:path';
import type { Catalog } from './domain/catalog/types';
import { DEFAULT_SETTLEMENT_BACKLOG } from './domain/billing/leases';
import { DEFAULT_LIMITS, type LimitsConfig } from './domain/limits/limits-config';
import { boolean, ConfigError, httpUrl, integer, optional } from './config/env';
import { corsOrigins, type CorsOrigins } from './config/cors';
import { loadLimitsFile } from './config/limits';
import { loadCatalogFile, vendorSettings, type VendorSettings } from './config/vendors';
import { videoJobConfig, type VideoJobConfig } from './config/videos';

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
  /** With Redis: how long a request waits for another instance's affinity on a local miss (ms). */
  affinityWaitMs: number;
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
      affinityWaitMs: integer(env, 'TOLLGATE_ROUTING_AFFINITY_WAIT_MS', 20, 1, 10_000),
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
