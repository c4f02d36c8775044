import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/config/env';

test('video job defaults: files under the data directory, an hour of deadline, 2 s polls growing to 15 s', () => {
  const config = loadConfig({ TOLLGATE_DATA_DIR: '/srv/tollgate' });
  expect(config.videos).toEqual({
    storage: { kind: 'file', dir: join('/srv/tollgate', 'videos') },
    deadlineMs: 3_600_000,
    pollInitialMs: 2_000,
    pollMaxMs: 15_000,
    sweepIntervalMs: 60_000,
    queueSchema: 'pgboss',
    workers: 4,
    sandboxRenderMs: 3_000,
    sandboxSlowMs: 30_000,
  });
  expect(loadConfig({ TOLLGATE_VIDEO_DIR: '/data/clips', TOLLGATE_VIDEO_WORKERS: '0' }).videos).toMatchObject({
    storage: { kind: 'file', dir: '/data/clips' },
    workers: 0,
  });
});

test.each([
  ['TOLLGATE_VIDEO_DEADLINE_SECONDS', '0'],
  ['TOLLGATE_VIDEO_POLL_INITIAL_MS', 'fast'],
  ['TOLLGATE_VIDEO_POLL_MAX_MS', '60000'],
  ['TOLLGATE_VIDEO_SWEEP_INTERVAL_MS', '1'],
  ['TOLLGATE_VIDEO_QUEUE_SCHEMA', 'Bad-Schema'],
  ['TOLLGATE_VIDEO_WORKERS', '-1'],
  ['TOLLGATE_SANDBOX_VIDEO_RENDER_MS', 'later'],
])('%s=%s stops the start with a message naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});

test('the longest poll wait cannot be below the first', () => {
  expect(() => loadConfig({ TOLLGATE_VIDEO_POLL_INITIAL_MS: '5000', TOLLGATE_VIDEO_POLL_MAX_MS: '1000' })).toThrow(
    'TOLLGATE_VIDEO_POLL_MAX_MS',
  );
});

describe('TOLLGATE_VIDEO_STORAGE=s3', () => {
  const s3 = { TOLLGATE_VIDEO_STORAGE: 's3', TOLLGATE_VIDEO_S3_BUCKET: 'tollgate-videos' };

  test('a bucket on AWS by default: us-east-1, virtual-hosted, the default credentials chain', () => {
    expect(loadConfig(s3).videos.storage).toEqual({
      kind: 's3',
      bucket: 'tollgate-videos',
      prefix: '',
      endpoint: null,
      region: 'us-east-1',
      forcePathStyle: false,
      credentials: null,
    });
  });

  test('an S3-compatible server: its endpoint, path-style by default, static credentials, a prefix', () => {
    const config = loadConfig({
      ...s3,
      TOLLGATE_VIDEO_S3_ENDPOINT: 'http://minio.internal:9000/',
      TOLLGATE_VIDEO_S3_REGION: 'eu-central-1',
      TOLLGATE_VIDEO_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      TOLLGATE_VIDEO_S3_SECRET_ACCESS_KEY: 'secret/with+chars',
      TOLLGATE_VIDEO_S3_PREFIX: 'prod/eu-1/',
    });
    expect(config.videos.storage).toEqual({
      kind: 's3',
      bucket: 'tollgate-videos',
      prefix: 'prod/eu-1/',
      endpoint: 'http://minio.internal:9000',
      region: 'eu-central-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/with+chars' },
    });
    expect(
      loadConfig({ ...s3, TOLLGATE_VIDEO_S3_ENDPOINT: 'https://s3.example.com', TOLLGATE_VIDEO_S3_FORCE_PATH_STYLE: 'false' }).videos
        .storage,
    ).toMatchObject({ forcePathStyle: false });
  });

  test.each([
    [{ TOLLGATE_VIDEO_STORAGE: 'gcs' }, 'TOLLGATE_VIDEO_STORAGE'],
    [{ TOLLGATE_VIDEO_STORAGE: 's3' }, 'TOLLGATE_VIDEO_S3_BUCKET'],
    [{ ...s3, TOLLGATE_VIDEO_S3_BUCKET: 'Upper_Case' }, 'TOLLGATE_VIDEO_S3_BUCKET'],
    [{ ...s3, TOLLGATE_VIDEO_S3_ENDPOINT: 'minio:9000' }, 'TOLLGATE_VIDEO_S3_ENDPOINT'],
    [{ ...s3, TOLLGATE_VIDEO_S3_ENDPOINT: 'http://key:secret@minio:9000' }, 'TOLLGATE_VIDEO_S3_ENDPOINT'],
    [{ ...s3, TOLLGATE_VIDEO_S3_REGION: 'EU Central' }, 'TOLLGATE_VIDEO_S3_REGION'],
    [{ ...s3, TOLLGATE_VIDEO_S3_PREFIX: 'no-slash' }, 'TOLLGATE_VIDEO_S3_PREFIX'],
    [{ ...s3, TOLLGATE_VIDEO_S3_FORCE_PATH_STYLE: 'sometimes' }, 'TOLLGATE_VIDEO_S3_FORCE_PATH_STYLE'],
    [{ ...s3, TOLLGATE_VIDEO_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' }, 'TOLLGATE_VIDEO_S3_SECRET_ACCESS_KEY'],
    [{ ...s3, TOLLGATE_VIDEO_DIR: '/data/clips' }, 'TOLLGATE_VIDEO_DIR'],
    [{ TOLLGATE_VIDEO_S3_BUCKET: 'tollgate-videos' }, 'TOLLGATE_VIDEO_S3_BUCKET'],
  ])('%j stops the start naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
