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
  /** Multipart upload limits (image edits, video references): per file, file count, whole body. */
  uploads: { maxFileBytes: number; maxFiles: number; maxTotalBytes: number };
  /** How long one image vendor call may take to answer (ms): images can take minutes. */
  imageVendorTimeoutMs: number;
  /** Outbound vendor HTTP timeouts (ms): connect, first byte, silence between streamed chunks. */
  vendorTimeouts: { connectMs: number; headersMs: number; bodyIdleMs: number };
  /**
   * `after-answer` (default): a request's charge is computed and queued for the batch writer
   * when its usage is known, and the answer's last byte does not wait for the commit.
   * `before-answer`: the last byte waits until the charge is committed (one commit more in
   * every request's latency).
   */
  settlement: 'after-answer' | 'before-answer';
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
    uploads: {
      maxFileBytes: integer(env, 'TOLLGATE_MAX_UPLOAD_BYTES', 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      maxFiles: integer(env, 'TOLLGATE_MAX_UPLOAD_FILES', 16, 1, 1000),
      maxTotalBytes: integer(env, 'TOLLGATE_MAX_UPLOAD_TOTAL_BYTES', 100 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    },
    imageVendorTimeoutMs: integer(env, 'TOLLGATE_IMAGE_VENDOR_TIMEOUT_MS', 600_000, 1, 3_600_000),
    vendorTimeouts: {
      connectMs: integer(env, 'TOLLGATE_VENDOR_CONNECT_TIMEOUT_MS', 10_000, 1, 600_000),
      headersMs: integer(env, 'TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS', 120_000, 1, 3_600_000),
      bodyIdleMs: integer(env, 'TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS', 120_000, 1, 3_600_000),
    },
    settlement,
    env: { ...env },
  };
}
