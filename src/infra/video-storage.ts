import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomHex } from '../domain/shared/ids';
import type { VideoStorage } from '../domain/videos/ports';
import type { VideoStorageConfig } from '../config/videos';

/**
 * Video files in a local directory (`TOLLGATE_VIDEO_DIR`, by default `<data dir>/videos`).
 * Writes go to a temporary name and are renamed into place, so a reader never sees half a
 * file. Several instances need this directory shared (or the S3 adapter, s3-video-storage.ts).
 */
export class LocalVideoStorage implements VideoStorage {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`storage key outside the root: ${key}`);
    return path;
  }

  async write(key: string, content: Readable | Buffer): Promise<number> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(dirname(path), `.${randomHex(8)}.partial`);
    try {
      await pipeline(Buffer.isBuffer(content) ? Readable.from([content]) : content, createWriteStream(temporary));
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return (await stat(path)).size;
  }

  read(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  openRange(key: string, start: number, end: number): Readable {
    return createReadStream(this.path(key), { start, end });
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

/**
 * The configured video storage: a directory, or an S3-compatible bucket (its SDK loaded only
 * then, and the bucket checked before the start goes on).
 */
export async function openVideoStorage(config: VideoStorageConfig): Promise<{ storage: VideoStorage; close(): void }> {
  if (config.kind === 'file') return { storage: new LocalVideoStorage(config.dir), close: () => undefined };
  // A require, not import(): the compiled output is CommonJS, and the SDK loads only here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, see above
  const { S3VideoStorage } = require('./s3-video-storage') as typeof import('./s3-video-storage');
  const storage = new S3VideoStorage(config);
  try {
    await storage.check();
  } catch (error) {
    storage.close();
    throw error;
  }
  return { storage, close: () => storage.close() };
}
