import { resolve } from 'node:path';
import { baseUrl, boolean, ConfigError, integer, optional } from './env';

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

export function videoJobConfig(env: Record<string, string | undefined>, dataDir: string): VideoJobConfig {
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
