import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { ConfigError } from '../../src/config/env';
import type { S3StorageConfig } from '../../src/config/videos';
import { ProviderError } from '../../src/domain/generation/errors';
import { ApiError } from '../../src/domain/shared/errors';
import type { VideoStorage } from '../../src/domain/videos/ports';
import { S3VideoStorage } from '../../src/infra/s3-video-storage';
import { LocalVideoStorage, openVideoStorage } from '../../src/infra/video-storage';
import { createTestBucket, testS3Endpoint, type TestBucket } from '../support/s3';

/**
 * The VideoStorage port's contract, held by both adapters: a directory, and an S3-compatible
 * bucket on a real S3 server (s3rver, started by the jest globalSetup; see test/support/s3.ts).
 */

const readAll = async (stream: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** 12 MiB of a repeating, position-dependent pattern: over two S3 parts, and every range distinct. */
const BIG = Buffer.alloc(12 * 1024 * 1024);
for (let i = 0; i < BIG.length; i += 4) BIG.writeUInt32BE(i, i);

/** The content in uneven chunks, as a vendor download arrives. */
const streamOf = (data: Buffer) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < data.length; at += 700_001) yield data.subarray(at, at + 700_001);
    })(),
  );

let dir: string;
let bucket: TestBucket;
let s3: S3VideoStorage;

const s3Config = (overrides: Partial<S3StorageConfig> = {}): S3StorageConfig => {
  const { endpoint, accessKeyId, secretAccessKey } = testS3Endpoint();
  return {
    kind: 's3',
    bucket: bucket.bucket,
    prefix: '',
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    ...overrides,
  };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-storage-'));
  bucket = await createTestBucket();
  s3 = new S3VideoStorage(s3Config());
});

afterAll(async () => {
  s3.close();
  await bucket.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['a directory', () => new LocalVideoStorage(dir) as VideoStorage],
  ['an S3 bucket', () => s3 as VideoStorage],
])('VideoStorage on %s', (_name, storage) => {
  test('a stream is written whole (12 MiB, over several S3 parts) and its size answered; ranges read back exactly', async () => {
    expect(await storage().write('videos/big.mp4', streamOf(BIG))).toBe(BIG.length);
    expect(await storage().size('videos/big.mp4')).toBe(BIG.length);
    for (const [start, end] of [
      [0, 0],
      [0, 1023],
      [5 * 1024 * 1024 - 3, 5 * 1024 * 1024 + 3],
      [BIG.length - 10, BIG.length - 1],
      [0, BIG.length - 1],
    ] as const) {
      const range = await readAll(storage().openRange('videos/big.mp4', start, end));
      expect(range.equals(BIG.subarray(start, end + 1))).toBe(true);
    }
  });

  test('a buffer is written, read whole, replaced by a later write, and deleted (twice is fine)', async () => {
    expect(await storage().write('inputs/v1/0', Buffer.from('first image'))).toBe(11);
    expect((await storage().read('inputs/v1/0')).toString()).toBe('first image');
    expect(await storage().write('inputs/v1/0', Buffer.from('second'))).toBe(6);
    expect((await storage().read('inputs/v1/0')).toString()).toBe('second');
    await storage().delete('inputs/v1/0');
    await storage().delete('inputs/v1/0');
    expect(await storage().size('inputs/v1/0')).toBeNull();
  });

  test('what is absent: no size, a failing range stream, a failing read', async () => {
    expect(await storage().size('videos/never.mp4')).toBeNull();
    await expect(readAll(storage().openRange('videos/never.mp4', 0, 9))).rejects.toThrow();
    await expect(storage().read('inputs/never/0')).rejects.toThrow();
  });

  test('a source that fails mid-way fails the write with its own error and leaves nothing at the key', async () => {
    const broken = Readable.from(
      (async function* () {
        yield BIG.subarray(0, 6 * 1024 * 1024);
        throw new ProviderError('The connection to acme broke in the middle of its answer (ECONNRESET).', 'acme');
      })(),
    );
    await expect(storage().write('videos/broken.mp4', broken)).rejects.toBeInstanceOf(ProviderError);
    expect(await storage().size('videos/broken.mp4')).toBeNull();
  });

  test('an empty file', async () => {
    expect(await storage().write('videos/empty.mp4', Readable.from([]))).toBe(0);
    expect(await storage().size('videos/empty.mp4')).toBe(0);
  });
});

describe('S3 specifics', () => {
  test('a prefix is put before every key (several deployments can share a bucket)', async () => {
    const prefixed = new S3VideoStorage(s3Config({ prefix: 'eu-1/' }));
    try {
      await prefixed.write('videos/p.mp4', Buffer.from('clip'));
      expect(await bucket.keys()).toContain('eu-1/videos/p.mp4');
      expect((await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: 'eu-1/videos/p.mp4' }))).ContentType).toBe(
        'video/mp4',
      );
      await prefixed.delete('videos/p.mp4');
      expect(await bucket.keys()).not.toContain('eu-1/videos/p.mp4');
    } finally {
      prefixed.close();
    }
  });

  test('the start checks the bucket: a missing bucket or a wrong secret stops it with a message naming the variable', async () => {
    await expect(openVideoStorage(s3Config({ bucket: 'no-such-bucket-here' }))).rejects.toThrow(ConfigError);
    await expect(openVideoStorage(s3Config({ bucket: 'no-such-bucket-here' }))).rejects.toThrow(
      /TOLLGATE_VIDEO_S3_BUCKET 'no-such-bucket-here' at http.* cannot be used: NoSuchBucket/,
    );
    const wrongSecret = s3Config({ credentials: { accessKeyId: testS3Endpoint().accessKeyId, secretAccessKey: 'not-the-secret' } });
    await expect(openVideoStorage(wrongSecret)).rejects.toThrow(/cannot be used: .*HTTP 403/);
    const opened = await openVideoStorage(s3Config());
    opened.close();
  });

  test('a storage that cannot be reached is 503 unavailable, naming why, never the credentials', async () => {
    const away = new S3VideoStorage(s3Config({ endpoint: 'http://127.0.0.1:1' }));
    try {
      const failure = await away.size('videos/x.mp4').then(
        () => null,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).toMatchObject({ status: 503, code: 'unavailable' });
      expect((failure as Error).message).toMatch(
        /^The video storage is unavailable \(.*ECONNREFUSED.*\); nothing was charged\. Retry shortly\.$/,
      );
      expect((failure as Error).message).not.toContain(testS3Endpoint().secretAccessKey);
      await expect(readAll(away.openRange('videos/x.mp4', 0, 1))).rejects.toMatchObject({ status: 503 });
    } finally {
      away.close();
    }
  });
});
