import { PassThrough, Transform, type Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ApiError, storageUnavailable } from '../domain/shared/errors';
import type { VideoStorage } from '../domain/videos/ports';
import { ConfigError } from '../config/env';
import type { S3StorageConfig } from '../config/videos';

/**
 * Video files in an S3-compatible bucket (AWS S3, MinIO, R2, Ceph…), shared by every instance.
 * Objects are written whole (a multipart upload for a stream, so a reader never sees half a
 * file and a large file is never held in memory), read by byte range, and deleted by the
 * retention sweep like files. A storage that cannot be reached is a 503 `unavailable` (its
 * S3 error named), never a 500; a missing object is what a missing file is.
 */

/** Parts of a streamed upload: S3's minimum, one in flight (a few MiB per upload, not tens). */
const PART_BYTES = 5 * 1024 * 1024;

export class S3VideoStorage implements VideoStorage {
  private readonly client: S3Client;

  constructor(private readonly config: S3StorageConfig) {
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(config.credentials ? { credentials: config.credentials } : {}),
      // Checksums only where S3 requires them: many S3-compatible servers refuse the CRC headers
      // that newer SDKs add to every upload by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /**
   * Checks the bucket answers with these credentials (at start: a wrong bucket or key stops it,
   * named). It asks for an object that is not there, which needs only the object permissions
   * the storage uses: S3 answers NoSuchKey, or why not (NoSuchBucket, AccessDenied…).
   */
  async check(): Promise<void> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey('.tollgate-start-check') }),
      );
      (answer.Body as Readable | undefined)?.destroy(); // someone made it: readable is all this asks
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'NoSuchKey') return;
      const where = this.config.endpoint ? ` at ${this.config.endpoint}` : ` in ${this.config.region}`;
      throw new ConfigError(`TOLLGATE_VIDEO_S3_BUCKET '${this.config.bucket}'${where} cannot be used: ${failureName(error)}`);
    }
  }

  async write(key: string, content: Readable | Buffer): Promise<number> {
    let size = Buffer.isBuffer(content) ? content.length : 0;
    const body = Buffer.isBuffer(content) ? content : counted(content, (bytes) => (size += bytes));
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.config.bucket,
        Key: this.objectKey(key),
        Body: body,
        ContentType: key.endsWith('.mp4') ? 'video/mp4' : 'application/octet-stream',
      },
      partSize: PART_BYTES,
      queueSize: 1,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw this.failure(error);
    }
    return size;
  }

  async read(key: string): Promise<Buffer> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
      return Buffer.from(await answer.Body!.transformToByteArray());
    } catch (error) {
      throw this.failure(error);
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.failure(error);
    }
  }

  /**
   * The range as a stream at once; the GET starts now, and a reader that goes away aborts it.
   * A server that ignores the range (some S3-compatible ones do for `bytes=0-0`) is cut to it
   * here: never more bytes than the range, whose length the answer already promised.
   */
  openRange(key: string, start: number, end: number): Readable {
    const out = new PassThrough();
    const abort = new AbortController();
    out.once('close', () => abort.abort());
    this.client
      .send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key), Range: `bytes=${start}-${end}` }), {
        abortSignal: abort.signal,
      })
      .then((answer) => {
        const body = answer.Body as Readable;
        const ranged = answer.ContentRange?.startsWith(`bytes ${start}-${end}/`) === true;
        const cut = byteWindow(ranged ? 0 : start, end - start + 1);
        body.once('error', (error) => out.destroy(error));
        cut.once('error', (error) => out.destroy(error));
        body.pipe(cut).pipe(out);
      })
      .catch((error: unknown) => out.destroy(this.failure(error)));
    return out;
  }

  async delete(key: string): Promise<void> {
    try {
      // S3 answers 204 for a key that is not there: deleting what is absent is fine, as the port says.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
    } catch (error) {
      throw this.failure(error);
    }
  }

  close(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    return this.config.prefix + key;
  }

  /**
   * A missing object keeps its own error (as ENOENT does for files), and so does a failure of
   * what was being written (a vendor download that broke: ProviderError); anything else is the
   * storage being unavailable.
   */
  private failure(error: unknown): Error {
    if (isNotFound(error) || error instanceof ApiError) return error as Error;
    return storageUnavailable('video storage', failureName(error));
  }
}

/** The source's bytes, counted as they pass; its error (a vendor download that breaks) fails the stream with its own type. */
function counted(source: Readable, count: (bytes: number) => void): Transform {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      count(chunk.length);
      done(null, chunk);
    },
  });
  source.once('error', (error) => counter.destroy(error));
  return source.pipe(counter);
}

/** Passes `length` bytes after skipping `skip`, then ends. */
function byteWindow(skip: number, length: number): Transform {
  let position = 0;
  const stop = skip + length;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const from = Math.max(0, skip - position);
      const to = Math.min(chunk.length, stop - position);
      position += chunk.length;
      if (to > from) this.push(chunk.subarray(from, to));
      if (position >= stop) this.push(null);
      done();
    },
  });
}

function isNotFound(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404) &&
    error.name !== 'NoSuchBucket'
  );
}

/** What went wrong, without anything secret: S3's error name and status, or the network error's code. */
function failureName(error: unknown): string {
  if (error instanceof S3ServiceException) return `${error.name} (HTTP ${error.$metadata.httpStatusCode ?? '?'})`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // The SDK wraps a socket error in its own, which names the error code only in its message.
  const named = error instanceof Error ? /\b(E[A-Z][A-Z0-9_]{2,})\b/.exec(error.message) : null;
  return named ? named[1]! : error instanceof Error && error.name !== 'Error' ? error.name : 'network error';
}
