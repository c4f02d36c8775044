import { Readable } from 'node:stream';
import type { VendorJobHandle, VendorJobState, VideoGenerationRequest, VideoProvider } from '../../domain/videos/ports';
import { makeSandboxMp4 } from './mp4';

/**
 * The offline video vendor: a "generation" that takes `renderMs` (measured from its start, so
 * any instance can poll it) and then yields a real, small, playable MP4 of one colour derived
 * from the prompt (mp4.ts), at the requested length and aspect ratio.
 *
 * Magic words in the prompt (case-insensitive):
 *   [sandbox:fail]        the vendor reports the generation failed (at the first poll)
 *   [sandbox:slow]        takes `slowMs` instead of `renderMs`
 *   [sandbox:delay=MS]    takes MS milliseconds
 */
export interface SandboxVideoOptions {
  renderMs: number;
  slowMs: number;
  now?: () => number;
}

const MAGIC = /\[sandbox:([a-z-]+)(?:=(\d{1,9}))?\]/gi;

function directives(prompt: string, options: SandboxVideoOptions): { fail: boolean; durationMs: number } {
  let fail = false;
  let durationMs = options.renderMs;
  for (const [, name, value] of prompt.matchAll(MAGIC)) {
    const word = name!.toLowerCase();
    if (word === 'fail') fail = true;
    else if (word === 'slow') durationMs = options.slowMs;
    else if (word === 'delay' && value !== undefined) durationMs = Number(value);
  }
  return { fail, durationMs };
}

export class SandboxVideoProvider implements VideoProvider {
  private readonly now: () => number;

  constructor(private readonly options: SandboxVideoOptions) {
    this.now = options.now ?? Date.now;
  }

  async start(request: VideoGenerationRequest): Promise<VendorJobHandle> {
    const { fail, durationMs } = directives(request.prompt, this.options);
    return { startedAt: this.now(), durationMs, fail, prompt: request.prompt, seconds: request.seconds, ratio: request.ratio };
  }

  async poll(handle: VendorJobHandle): Promise<VendorJobState> {
    if (handle.fail)
      return { status: 'failed', code: 'generation_failed', message: 'The sandbox was asked to fail this video ([sandbox:fail]).' };
    const elapsed = this.now() - Number(handle.startedAt);
    const duration = Number(handle.durationMs);
    if (elapsed >= duration) return { status: 'completed' };
    return { status: 'running', progress: Math.floor((elapsed / duration) * 100) };
  }

  async download(handle: VendorJobHandle): Promise<Readable> {
    return Readable.from([makeSandboxMp4({ prompt: String(handle.prompt), seconds: Number(handle.seconds), ratio: String(handle.ratio) })]);
  }
}
