import sharp from 'sharp';
import { fitToSize } from '../../src/domain/images/fit';

/** Exact sizes: scale to cover, crop the centre, keep the format; the right size is left alone. */

/** A 300x100 image in three vertical bands: red, green, blue. */
async function bands(format: 'png' | 'jpeg') {
  const band = (colour: string) =>
    sharp({ create: { width: 100, height: 100, channels: 3, background: colour } })
      .png()
      .toBuffer();
  const [red, green, blue] = await Promise.all([band('#ff0000'), band('#00ff00'), band('#0000ff')]);
  const image = sharp({ create: { width: 300, height: 100, channels: 3, background: '#000000' } }).composite([
    { input: red, left: 0, top: 0 },
    { input: green, left: 100, top: 0 },
    { input: blue, left: 200, top: 0 },
  ]);
  return (format === 'png' ? image.png() : image.jpeg({ quality: 95 })).toBuffer();
}

const pixel = async (data: Buffer, x: number, y: number) => {
  const { data: raw, info } = await sharp(data).raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [raw[at], raw[at + 1], raw[at + 2]];
};

describe('fitToSize', () => {
  it('scales to cover and keeps the centre: a 300x100 image fitted to 100x100 is its middle band', async () => {
    const fitted = await fitToSize({ data: await bands('png'), format: 'png' }, { width: 100, height: 100 });
    const meta = await sharp(fitted.data).metadata();
    expect([meta.width, meta.height, meta.format, fitted.format]).toEqual([100, 100, 'png', 'png']);
    expect(await pixel(fitted.data, 5, 50)).toEqual([0, 255, 0]);
    expect(await pixel(fitted.data, 95, 50)).toEqual([0, 255, 0]);
  });

  it('scales up when the image is smaller, and keeps a JPEG a JPEG', async () => {
    const fitted = await fitToSize({ data: await bands('jpeg'), format: 'jpeg' }, { width: 600, height: 400 });
    const meta = await sharp(fitted.data).metadata();
    expect([meta.width, meta.height, meta.format]).toEqual([600, 400, 'jpeg']);
    expect(fitted.format).toBe('jpeg');
  });

  it('passes an image of the right size on byte for byte', async () => {
    const data = await bands('png');
    const fitted = await fitToSize({ data, format: 'png' }, { width: 300, height: 100 });
    expect(fitted.data).toBe(data);
  });
});
