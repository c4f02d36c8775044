import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ProviderError } from '../../domain/generation/errors';
import { vendorErrorMessage } from '../transport/client';

/**
 * One HTTP call to a video vendor: a connection failure, a timeout or a non-2xx answer becomes
 * a ProviderError (the runner retries those with backoff until the job's deadline).
 */
export async function vendorFetch(vendor: string, url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const reason = (error as Error)?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'the connection failed';
    throw new ProviderError(`The ${vendor} video API could not be reached: ${reason}.`, vendor);
  }
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new ProviderError(`The ${vendor} video API answered ${response.status}${vendorErrorMessage(text) ? `: ${vendorErrorMessage(text)}` : ''}.`, vendor, response.status);
  }
  return response;
}

export async function vendorJson<T>(vendor: string, response: Response): Promise<T> {
  try {
    return (await response.json()) as T;
  } catch {
    throw new ProviderError(`The ${vendor} video API answered something that is not JSON.`, vendor);
  }
}

export function responseStream(vendor: string, response: Response): Readable {
  if (!response.body) throw new ProviderError(`The ${vendor} video API sent no file.`, vendor);
  return Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
}

/** `720p` and `16:9` → `1280x720` (the short side is the resolution). */
export function pixelSize(resolution: string, ratio: string): string {
  const short = Number.parseInt(resolution, 10);
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  const long = Math.round((short * Math.max(w, h)) / Math.min(w, h));
  return w >= h ? `${long}x${short}` : `${short}x${long}`;
}
