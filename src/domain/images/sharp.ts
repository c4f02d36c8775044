import type Sharp from 'sharp';

let loaded: typeof Sharp | null = null;

/**
 * sharp, loaded on its first call: libvips maps tens of megabytes into the process, and a
 * gateway that never edits an image (text traffic only) has no use for them.
 */
export const sharp = ((...args: Parameters<typeof Sharp>) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('sharp') as typeof Sharp;
  return loaded(...args);
}) as typeof Sharp;
