import { ProviderError } from '../domain/generation/errors';
import type { ImageData } from '../domain/images/ports';
import { sniffImageFormat } from '../domain/shared/image-bytes';

/**
 * A vendor's base64 image, decoded and recognised by its bytes (a vendor's declared MIME type
 * is not trusted either); a ProviderError when it is not a PNG, JPEG or WebP image.
 */
export function decodeVendorImage(base64: unknown, vendor: string): ImageData {
  if (typeof base64 !== 'string' || base64.length === 0) throw new ProviderError(`${vendor} answered without an image.`, vendor);
  const data = Buffer.from(base64, 'base64');
  const format = sniffImageFormat(data);
  if (!format) throw new ProviderError(`${vendor} answered with image bytes that are not PNG, JPEG or WebP.`, vendor);
  return { data, format };
}

/** The aspect ratio (`W:H`) of a list nearest to a pixel size, compared on a log scale. */
export function nearestAspectRatio(size: { width: number; height: number }, ratios: readonly string[]): string {
  const wanted = Math.log(size.width / size.height);
  let best = ratios[0]!;
  let bestDistance = Infinity;
  for (const ratio of ratios) {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    const distance = Math.abs(Math.log(w / h) - wanted);
    if (distance < bestDistance) {
      best = ratio;
      bestDistance = distance;
    }
  }
  return best;
}
