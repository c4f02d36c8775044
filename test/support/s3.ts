import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from '@20minutes/s3rver';

/**
 * The S3-compatible server of the tests: `TOLLGATE_TEST_S3_ENDPOINT` names one (say a MinIO,
 * with `TOLLGATE_TEST_S3_ACCESS_KEY_ID` / `_SECRET_ACCESS_KEY`); without it the jest
 * globalSetup starts s3rver, a real S3 server from npm that checks signatures, on a private
 * directory. Each test file makes its own bucket, as it makes its own database.
 */

/** The credentials s3rver accepts (its built-in account). */
const S3RVER_KEY = 'S3RVER';

export async function startS3rver(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-test-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface TestBucket {
  bucket: string;
  /** The Tollgate variables that put video files in this bucket. */
  env: Record<string, string>;
  client: S3Client;
  /** Object keys in the bucket. */
  keys(): Promise<string[]>;
  drop(): Promise<void>;
}

export function testS3Endpoint(): { endpoint: string; accessKeyId: string; secretAccessKey: string } {
  const endpoint = process.env.TOLLGATE_TEST_S3_ENDPOINT;
  if (!endpoint) throw new Error('TOLLGATE_TEST_S3_ENDPOINT is not set: the jest globalSetup provides it');
  return {
    endpoint,
    accessKeyId: process.env.TOLLGATE_TEST_S3_ACCESS_KEY_ID ?? S3RVER_KEY,
    secretAccessKey: process.env.TOLLGATE_TEST_S3_SECRET_ACCESS_KEY ?? S3RVER_KEY,
  };
}

/** A fresh, empty bucket on the test server for one test file; emptied and removed by `drop()`. */
export async function createTestBucket(): Promise<TestBucket> {
  const { endpoint, accessKeyId, secretAccessKey } = testS3Endpoint();
  const bucket = `tollgate-test-${randomBytes(6).toString('hex')}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // Bucket-level calls go to `/bucket/`, which s3rver signs as `/bucket` (a signature mismatch);
  // `/bucket` is as valid for S3. Only these test calls use the bucket level: Tollgate does not.
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { path?: string };
      if (typeof request.path === 'string' && /^\/[^/]+\/$/.test(request.path)) request.path = request.path.slice(0, -1);
      return next(args);
    },
    { step: 'build' },
  );
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const keys = async () => ((await client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((object) => object.Key!);
  return {
    bucket,
    env: {
      TOLLGATE_VIDEO_STORAGE: 's3',
      TOLLGATE_VIDEO_S3_BUCKET: bucket,
      TOLLGATE_VIDEO_S3_ENDPOINT: endpoint,
      TOLLGATE_VIDEO_S3_ACCESS_KEY_ID: accessKeyId,
      TOLLGATE_VIDEO_S3_SECRET_ACCESS_KEY: secretAccessKey,
    },
    client,
    keys,
    drop: async () => {
      const left = await keys();
      if (left.length > 0)
        await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: left.map((Key) => ({ Key })) } }));
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
  };
}
