import { resolve } from 'node:path';

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
  logLevel: string;
  /** Largest JSON body accepted, in bytes. */
  maxJsonBodyBytes: number;
  sessionTtlSeconds: number;
  /** Outbound vendor HTTP timeouts (ms): connect, first byte, silence between streamed chunks. */
  vendorTimeouts: { connectMs: number; headersMs: number; bodyIdleMs: number };
  /**
   * `after-answer` (default): a request's charge is computed and queued for the batch writer
   * when its usage is known, and the answer's last byte does not wait for the commit.
   * `before-answer`: the last byte waits until the charge is committed (one commit more in
   * every request's latency).
   */
  settlement: 'after-answer' | 'before-answer';
  /** Full URL of the OTLP/HTTP traces endpoint; null: no tracing (and no OpenTelemetry loaded). */
  otlpTracesUrl: string | null;
  /** `service.name` of the spans (OTEL_SERVICE_NAME). */
  otelServiceName: string;
  /** Raw environment, for per-vendor `<VENDOR>_API_KEY` / `<VENDOR>_BASE_URL` lookups. */
  env: Readonly<Record<string, string | undefined>>;
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
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http:// or https:// URL, got '${raw}'`);
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
  if (settlement !== 'after-answer' && settlement !== 'before-answer') throw new ConfigError("TOLLGATE_SETTLEMENT must be 'after-answer' or 'before-answer'");
  const logLevel = optional(env, 'LOG_LEVEL') ?? 'info';
  const otlpTracesUrl = tracesUrl(env);
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: optional(env, 'HOST') ?? '0.0.0.0',
    databaseUrl,
    dataDir: resolve(optional(env, 'TOLLGATE_DATA_DIR') ?? '.tollgate'),
    redisUrl,
    redisKeyPrefix: optional(env, 'TOLLGATE_REDIS_KEY_PREFIX') ?? 'tollgate:',
    adminToken,
    catalogFile: optional(env, 'TOLLGATE_CATALOG'),
    logLevel,
    maxJsonBodyBytes: integer(env, 'TOLLGATE_MAX_BODY_BYTES', 4 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    sessionTtlSeconds: integer(env, 'TOLLGATE_SESSION_TTL_SECONDS', 7 * 24 * 3600, 60, 365 * 24 * 3600),
    vendorTimeouts: {
      connectMs: integer(env, 'TOLLGATE_VENDOR_CONNECT_TIMEOUT_MS', 10_000, 1, 600_000),
      headersMs: integer(env, 'TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS', 120_000, 1, 3_600_000),
      bodyIdleMs: integer(env, 'TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS', 120_000, 1, 3_600_000),
    },
    settlement,
    otlpTracesUrl,
    otelServiceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'tollgate',
    env: { ...env },
  };
}
