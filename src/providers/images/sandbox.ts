import { badRequest } from '../../domain/shared/errors';
/**
 * The sandbox image vendor: real PNGs made locally, offline, deterministic from the prompt
 * (its SHA-256 picks the colour; the image's index among n shifts it, so n images differ).
 * Generation paints a solid image; an edit tints the first input image, fitted to the size.
 *
 * Magic words, anywhere in the prompt (case-insensitive):
 *   [sandbox:fail]          every image fails (ProviderError, vendor status 500)
 *   [sandbox:fail-one]      the first image of the request fails; the others succeed
 *   [sandbox:delay=MS]      each image takes MS milliseconds (cancelled when the client leaves)
 *   [sandbox:size=WxH]      answers WxH instead of the size asked (the service then fits it)
 */
import { createHash } from 'node:crypto';
import { sharp } from '../../domain/images/sharp';
import type { GeneratedImage, ImageProvider, ImageProviderRequest, PixelSize } from '../../domain/images/ports';
import { ProviderError } from '../../domain/generation/errors';

const VENDOR = 'sandbox';
const MAGIC = /\[sandbox:([a-z-]+)(?:=([^\]\s]*))?\]/gi;

export interface SandboxImageDirectives {
  fail: boolean;
  failOne: boolean;
  delayMs?: number;
  size?: PixelSize;
}

export function parseImageDirectives(prompt: string): SandboxImageDirectives {
  const directives: SandboxImageDirectives = { fail: false, failOne: false };
  for (const [, name, value] of prompt.matchAll(MAGIC)) {
    switch (name!.toLowerCase()) {
      case 'fail':
        directives.fail = true;
        break;
      case 'fail-one':
        directives.failOne = true;
        break;
      case 'delay': {
        const ms = Number(value);
        if (Number.isInteger(ms) && ms >= 0) directives.delayMs = ms;
        break;
      }
      case 'size': {
        const match = /^(\d{1,4})x(\d{1,4})$/.exec(value ?? '');
        if (match && Number(match[1]) > 0 && Number(match[2]) > 0) directives.size = { width: Number(match[1]), height: Number(match[2]) };
        break;
      }
    }
  }
  return directives;
}

/** The colour of a prompt's image number `index`: deterministic, distinct per index. */
export function sandboxColour(prompt: string, index: number): { r: number; g: number; b: number } {
  const hash = createHash('sha256').update(prompt.replace(MAGIC, '').trim()).digest();
  return { r: (hash[0]! + index * 67) % 256, g: (hash[1]! + index * 131) % 256, b: (hash[2]! + index * 199) % 256 };
}

export class SandboxImageProvider implements ImageProvider {
  async generateImage(request: ImageProviderRequest): Promise<GeneratedImage> {
    const directives = parseImageDirectives(request.prompt);
    const cancelled = () => new ProviderError('The request to sandbox was cancelled by the client.', VENDOR, null, 'client_cancelled');
    if (request.signal.aborted) throw cancelled();
    if (directives.delayMs) await request.signal.delay(directives.delayMs, cancelled);
    if (directives.fail || (directives.failOne && request.index === 0)) {
      throw new ProviderError('sandbox answered HTTP 500: the image failed as the prompt asked ([sandbox:fail]).', VENDOR, 500);
    }
    const size = directives.size ?? request.size;
    const colour = sandboxColour(request.prompt, request.index);
    const first = request.images[0];
    const image = first
      ? sharp(first.data).autoOrient().resize(size.width, size.height, { fit: 'cover' }).tint(colour)
      : sharp({ create: { width: size.width, height: size.height, channels: 3, background: colour } });
    try {
      return { data: await image.png().toBuffer(), format: 'png' };
    } catch (error) {
      // Magic bytes let it through, but the image inside is broken: refused as a vendor refuses it.
      if (first) throw badRequest('image could not be decoded: send an intact PNG, JPEG or WebP file', { field: 'image' });
      throw error;
    }
  }
}
