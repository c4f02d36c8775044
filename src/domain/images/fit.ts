import { sharp } from './sharp';
import type { ImageData, PixelSize } from './ports';

/**
 * Gives an image exactly the requested pixel size: scaled to cover it and centre-cropped,
 * in the format the vendor sent (PNG stays PNG). An image already of that size is returned
 * untouched, byte for byte.
 */
export async function fitToSize(image: ImageData, size: PixelSize): Promise<ImageData> {
  const meta = await sharp(image.data).metadata();
  if (meta.width === size.width && meta.height === size.height && (meta.orientation ?? 1) === 1) return image;
  const data = await sharp(image.data)
    .autoOrient()
    .resize(size.width, size.height, { fit: 'cover', position: 'centre' })
    .toFormat(image.format)
    .toBuffer();
  return { data, format: image.format };
}
